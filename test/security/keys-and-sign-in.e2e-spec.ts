// One Jest file for the parts below, which share nothing but the app's code. Jest loads that code again
// for every file it runs, in a realm of its own where it all starts cold (about 2 s of CPU a file), so
// they run together; each part still starts the app it needs. One part alone:
// `npx jest test/security/keys-and-sign-in -t '<the title of its describe>'`.
import './roles.part.js';
import './oauth.part.js';
import './key-capacity.part.js';

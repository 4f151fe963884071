// One Jest file for the parts below, which share nothing but the app's code. Jest loads that code again
// for every file it runs, in a realm of its own where it all starts cold (about 2 s of CPU a file), so
// they run together; each part still starts the app it needs. One part alone:
// `npx jest test/security/hostile-calls -t '<the title of its describe>'`.
import './arguments-and-bodies.part.js';
import './authentication.part.js';
import './audit-data.part.js';
import './redaction.part.js';
import './call-control.part.js';
import './integrity.part.js';

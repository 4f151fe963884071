// One Jest file for the parts below, which share nothing but the app's code. Jest loads that code again
// for every file it runs, in a realm of its own where it all starts cold (about 2 s of CPU a file), so
// they run together; each part still starts the app it needs. One part alone:
// `npx jest test/security/tenant-boundaries -t '<the title of its describe>'`.
import './tenancy.part.js';
import './skill-tenancy.part.js';
import './tenant-isolation-matrix.part.js';
import './tenant-schemas.part.js';
import './charges.part.js';

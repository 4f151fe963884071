// One Jest file for the parts below, which share nothing but the app's code. Jest loads that code again
// for every file it runs, in a realm of its own where it all starts cold (about 2 s of CPU a file), so
// they run together; each part still starts the app it needs. One part alone:
// `npx jest test/console/console-pages -t '<the title of its describe>'`.
import './console-static.part.js';
import './docs.browser.part.js';
import './skill-changes.browser.part.js';
import './toolsets.browser.part.js';
import './connections.browser.part.js';
import './policies.browser.part.js';

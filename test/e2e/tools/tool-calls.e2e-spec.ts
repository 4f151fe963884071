// One Jest file for the parts below, which share nothing but the app's code. Jest loads that code again
// for every file it runs, in a realm of its own where it all starts cold (about 2 s of CPU a file), so
// they run together; each part still starts the app it needs. One part alone:
// `npx jest test/e2e/tools/tool-calls -t '<the title of its describe>'`.
import './agent-file-tools.part.js';
import './file-tools.part.js';
import './invocation.part.js';
import './listing-cache.part.js';
import './sdk-formats.part.js';
import './listing.part.js';
import './pooled-listing.part.js';
import './shell-and-fetch.part.js';

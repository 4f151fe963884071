// One Jest file for the parts below, which share nothing but the app's code. Jest loads that code again
// for every file it runs, in a realm of its own where it all starts cold (about 2 s of CPU a file), so
// they run together; each part still starts the app it needs. One part alone:
// `npx jest test/e2e/mcp/mcp-server -t '<the title of its describe>'`.
import './mcp-endpoint.part.js';
import './mcp-logging.part.js';
import './mcp-modern.part.js';
import './mcp-protocol.part.js';
import './mcp-tasks.part.js';
import './browser-clients.part.js';
import './oauth-sign-in.part.js';

import { RESULT_MAX_DEPTH } from '../common/json/bounded-json.js';

// What the federation of a project's MCP sources (mcp-federation.ts) takes from them at most, and how long it
// waits on them.
// Entries taken from one source's listing (over at most MAX_PAGES pages): a source that lists more is
// listed up to there, so a hostile one cannot flood a client or Toolgate's memory.
export const FEDERATED_LIST_LIMIT = 500;
export const MAX_PAGES = 10;
// Bytes of one source's listing as JSON, and the nesting and size of one entry: past them entries are left
// out, so sources that list megabytes of descriptions (or JSON nested thousands deep, which no writer can
// write) cannot make one answer huge or unanswerable.
export const FEDERATED_LIST_MAX_BYTES = 1024 * 1024;
export const LISTED_ITEM_LIMITS = { maxDepth: 32, maxBytes: 64 * 1024 };
// A read's or prompt's whole answer, as for a tool's result.
export const RELAYED_ANSWER_LIMITS = { maxDepth: RESULT_MAX_DEPTH, maxBytes: 4 * 1024 * 1024 };
// Contents of one read, messages of one prompt and values of one completion that are relayed.
export const FEDERATED_ITEMS_LIMIT = 100;
// How long asking a source what it offers (at initialize, server/discover) may take.
export const CAPABILITIES_TIMEOUT_MS = 5_000;
// A source that could not be asked is not asked again for this long (each initialize would wait on it),
// and offers nothing meanwhile; sources remembered so at most.
export const UNREACHABLE_FOR_MS = 15_000;
export const UNREACHABLE_MAX = 1_024;

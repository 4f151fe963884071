export const SKILL_TOOL_DEFAULT_TIMEOUT_MS = 30_000;
export const SKILL_TOOL_MAX_TIMEOUT_MS = 120_000;
// Most response bytes a skill's http endpoint may send back.
export const SKILL_HTTP_MAX_BYTES = 1024 * 1024;
// Most bytes of one skill's tools as stored (their JSON text, an MCP source's imported tools included).
export const SKILL_MAX_BYTES = 256 * 1024;
// Most tools in one skill (a registration's schema says so; an accepted change is held to it too).
export const SKILL_MAX_TOOLS = 128;
// Most bytes of one skill's review queue (src/skills/review): its pending changes and the decided ones kept
// for the record, as stored. Decided ones go oldest first to make room; past it no new change is raised (the
// reviewed definitions stay served). An upstream the tenant controls could otherwise add a row per tool it
// renames or flips, each up to a skill's size, on every read, for as long as the skill exists.
export const SKILL_CHANGES_MAX_BYTES = 4 * SKILL_MAX_BYTES;
// Decided changes kept per skill (the review list shows at most this many), newest first.
export const SKILL_CHANGES_KEPT_DECIDED = 200;
// Registrations and updates of one tenant's skills vetted at once on an instance, and how many more may wait
// their turn; past that the request answers 429 with Retry-After.
export const SKILL_REGISTRATIONS_AT_ONCE = 1;
export const SKILL_REGISTRATIONS_WAITING = 16;

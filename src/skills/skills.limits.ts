export const SKILL_TOOL_DEFAULT_TIMEOUT_MS = 30_000;
export const SKILL_TOOL_MAX_TIMEOUT_MS = 120_000;
// Most response bytes a skill's http endpoint may send back.
export const SKILL_HTTP_MAX_BYTES = 1024 * 1024;
// Most bytes of one skill's tools as stored (their JSON text, an MCP source's imported tools included).
export const SKILL_MAX_BYTES = 256 * 1024;
// Registrations and updates of one tenant's skills vetted at once on an instance, and how many more may wait
// their turn; past that the request answers 429 with Retry-After.
export const SKILL_REGISTRATIONS_AT_ONCE = 1;
export const SKILL_REGISTRATIONS_WAITING = 16;

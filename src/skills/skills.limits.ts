export const SKILL_TOOL_DEFAULT_TIMEOUT_MS = 30_000;
export const SKILL_TOOL_MAX_TIMEOUT_MS = 120_000;
// Most response bytes a skill's http endpoint may send back.
export const SKILL_HTTP_MAX_BYTES = 1024 * 1024;

// Limits of the built-in tools; operator-tunable values come from AppConfig.tools.
export const FILE_TOOL_TIMEOUT_MS = 15_000;
export const LIST_TOOL_TIMEOUT_MS = 30_000;
export const SHELL_TOOL_MAX_TIMEOUT_MS = 120_000;
export const SHELL_TOOL_DEFAULT_TIMEOUT_MS = 30_000;
export const FETCH_TOOL_TIMEOUT_MS = 30_000;

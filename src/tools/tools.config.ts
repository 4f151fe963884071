// Limits of the built-in tools; operator-tunable values come from AppConfig.tools.
export const FILE_TOOL_TIMEOUT_MS = 15_000;
export const LIST_TOOL_TIMEOUT_MS = 30_000;
export const SHELL_TOOL_MAX_TIMEOUT_MS = 120_000;
export const SHELL_TOOL_DEFAULT_TIMEOUT_MS = 30_000;
export const FETCH_TOOL_TIMEOUT_MS = 30_000;
// edit_file reads the whole file and writes it back: larger files are refused (write_file replaces them).
export const EDIT_MAX_FILE_BYTES = 8 * 1024 * 1024;
// search_files skips larger files (generated bundles, data dumps) and says how many it skipped.
export const SEARCH_MAX_FILE_BYTES = 1024 * 1024;
export const SEARCH_TOOL_TIMEOUT_MS = 30_000;
// search_files stops after this long on its thread (or half the call's timeout, if less) and answers what it
// found, truncated, with the reason: a costly pattern holds a thread for this long at most.
export const SEARCH_TIME_BUDGET_MS = 5_000;

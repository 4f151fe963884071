// The names of the built-in tools, for code that must know them without loading the executors (skill
// collision checks). ToolRegistry checks at start-up that this list matches the executors it holds.
export const BUILTIN_TOOL_NAMES: readonly string[] = [
  'read_file',
  'write_file',
  'list_files',
  'delete_file',
  'shell_exec',
  'fetch_url',
  'edit_file',
  'search_files',
  'move_file',
  'read_multiple_files',
];

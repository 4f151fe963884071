// The parameters of the built-in file tools that name workspace paths, for code that must know them
// without loading the executors: a toolset's pathPrefix confines exactly these (toolsets). The registry
// checks them against the executors at start-up.
export const FILE_TOOL_PATH_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  read_file: ['path'],
  read_multiple_files: ['paths'],
  write_file: ['path'],
  edit_file: ['path'],
  search_files: ['path'],
  list_files: ['path'],
  move_file: ['source', 'destination'],
  delete_file: ['path'],
};

export const FILE_TOOLS: readonly string[] = Object.keys(FILE_TOOL_PATH_PARAMETERS);

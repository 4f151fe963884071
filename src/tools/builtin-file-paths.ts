import path from 'node:path';

// The parameters of the built-in file tools that name workspace paths, for code that must know them
// without loading the executors: a toolset's pathPrefix confines exactly these (toolsets), and an approver
// is shown them resolved in the workspace (the invocation log). The registry checks them against the
// executors at start-up.
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

// A file tool's arguments with its paths as the workspace sees them, for a call confined to `prefix` (a
// normalized relative directory): a relative path is joined to the prefix, an absolute one already names the
// place itself, and a path left out (list_files, search_files) is the prefix, the tool's root. A path that
// climbs out of the prefix is shown joined but not normalized (`docs/../secret.txt`), as the run will refuse
// it: a person sees what was asked, not a place it will never reach.
export function argumentsInWorkspace(tool: string, args: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const parameters = FILE_TOOL_PATH_PARAMETERS[tool];
  if (!parameters) return args;
  const resolved = { ...args };
  for (const name of parameters) {
    const value = args[name];
    if (value === undefined) resolved[name] = prefix;
    else if (typeof value === 'string') resolved[name] = inPrefix(prefix, value);
    else if (Array.isArray(value))
      resolved[name] = (value as unknown[]).map((item) => (typeof item === 'string' ? inPrefix(prefix, item) : item));
  }
  return resolved;
}

function inPrefix(prefix: string, value: string): string {
  if (value.startsWith('/')) return value;
  const joined = `${prefix}/${value}`;
  const normalized = path.posix.normalize(joined).replace(/\/+$/, '');
  return normalized === prefix || normalized.startsWith(`${prefix}/`) ? normalized : joined;
}

import { toolMatches } from '../common/auth/key-roles.js';
import type { ToolExecutor } from '../execution/tool-definition.js';

// The source of the tools a toolset adds itself (search mode's search_tools).
export const TOOLSET_SOURCE = 'toolset';

// Classes of tools that approvalRequired can name instead of listing tools one by one, so that a rule
// keeps holding when a tool that does the same thing is added (a command skill beside shell_exec).
//   @commands: runs a command (shell_exec, every command skill)
//   @writes:   can change files or run a command
//   @network:  reaches the network (fetch_url, http skills, tools of MCP sources)
//   @all:      every tool
export const TOOL_CLASSES = ['@commands', '@writes', '@network', '@all'] as const;
export type ToolClass = (typeof TOOL_CLASSES)[number];

const BUILTIN_CLASSES: Record<string, readonly ToolClass[]> = {
  write_file: ['@writes'],
  edit_file: ['@writes'],
  move_file: ['@writes'],
  delete_file: ['@writes'],
  shell_exec: ['@commands', '@writes'],
  fetch_url: ['@network'],
};

// A built-in tool's classes are declared above; a skill's come from its executor: a command skill runs a
// command in the workspace, an http or MCP skill reaches the network.
export function classesOf(executor: ToolExecutor): readonly ToolClass[] {
  const { name, source } = executor.definition;
  if (source === 'builtin') return [...(BUILTIN_CLASSES[name] ?? []), '@all'];
  // A toolset's own search_tools reads only the toolset's definitions: nothing to approve (call_tool's calls
  // are judged as the tool they call).
  if (source === TOOLSET_SOURCE) return [];
  return executor.spawnsProcesses === true ? ['@commands', '@writes', '@all'] : ['@network', '@all'];
}

// Whether one approvalRequired entry (a tool name, a name ending in `*`, or a class) covers this tool.
export function approvalEntryCovers(entry: string, executor: ToolExecutor): boolean {
  if (entry.startsWith('@')) return classesOf(executor).includes(entry as ToolClass);
  return toolMatches(entry, executor.definition.name);
}

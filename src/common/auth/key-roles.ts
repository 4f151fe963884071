// What a tenant's API key may do. `admin`: everything in its tenant (every key made before roles existed).
// `agent`: the call path of its projects (list them and their tools, invoke, batch, MCP, follow its calls'
// invocations and events), only the tools it is bound to. `approver`: read projects, invocations and
// events, decide parked calls, browse workspaces. A route says which roles besides admin may use it
// (@AllowRoles); a route that says nothing is admin-only, so a new route fails closed.
export const KEY_ROLES = ['admin', 'agent', 'approver'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];

// A tool name, or a prefix ending in `*` (`github_*`).
export function toolMatches(pattern: string, name: string): boolean {
  const prefix = prefixOf(pattern);
  return prefix === null ? pattern === name : name.startsWith(prefix);
}

// The same patterns as a database filter on a `tool` column (the audit reads a bound key's rows with it):
// null (unbound) filters nothing; an empty binding matches no row, as it matches no tool.
export type ToolColumnFilter = { tool: string } | { tool: { startsWith: string } };
export function keyToolsWhere(tools: readonly string[] | null): { OR: ToolColumnFilter[] } | Record<string, never> {
  if (tools === null) return {};
  return {
    OR: tools.map((pattern): ToolColumnFilter => {
      const prefix = prefixOf(pattern);
      return prefix === null ? { tool: pattern } : { tool: { startsWith: prefix } };
    }),
  };
}

function prefixOf(pattern: string): string | null {
  return pattern.endsWith('*') ? pattern.slice(0, -1) : null;
}

// Whether a key bound to `tools` (null: unbound) may list and call `name`.
export function keyMayUseTool(tools: readonly string[] | null, name: string): boolean {
  return tools === null || tools.some((pattern) => toolMatches(pattern, name));
}

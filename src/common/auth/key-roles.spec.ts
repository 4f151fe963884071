import { keyMayUseTool, keyToolsWhere, type ToolColumnFilter, toolMatches } from './key-roles.js';

// What the database does with the filter: `tool` equal to a name, or starting with a prefix.
function rowMatches(where: ReturnType<typeof keyToolsWhere>, tool: string): boolean {
  if (!('OR' in where)) return true;
  return where.OR.some((clause: ToolColumnFilter) =>
    typeof clause.tool === 'string' ? clause.tool === tool : tool.startsWith(clause.tool.startsWith),
  );
}

const NAMES = ['read_file', 'read_files', 'github_issue', 'github_pr', 'git', 'gitlab_issue', 'write_file', ''];

describe('tool patterns of a bound key', () => {
  it('matches a name exactly and a `prefix*` by its start', () => {
    expect(toolMatches('read_file', 'read_file')).toBe(true);
    expect(toolMatches('read_file', 'read_files')).toBe(false);
    expect(toolMatches('github_*', 'github_issue')).toBe(true);
    expect(toolMatches('github_*', 'gitlab_issue')).toBe(false);
    expect(toolMatches('*', 'anything')).toBe(true);
  });

  it('turns a binding into a filter on the tool column', () => {
    expect(keyToolsWhere(null)).toEqual({});
    expect(keyToolsWhere([])).toEqual({ OR: [] });
    expect(keyToolsWhere(['read_file', 'github_*'])).toEqual({ OR: [{ tool: 'read_file' }, { tool: { startsWith: 'github_' } }] });
  });

  it.each([[null], [[]], [['read_file']], [['github_*']], [['read_file', 'git*']], [['*']], [['git', 'github_*', 'write_file']]])(
    'the filter keeps the rows of exactly the tools the key may use (%j)',
    (tools: string[] | null) => {
      const where = keyToolsWhere(tools);
      for (const name of NAMES) expect([name, rowMatches(where, name)]).toEqual([name, keyMayUseTool(tools, name)]);
    },
  );
});

import { argumentsInWorkspace } from './builtin-file-paths.js';

describe('argumentsInWorkspace', () => {
  it('joins relative paths to the prefix, in every path parameter of the tool', () => {
    expect(argumentsInWorkspace('write_file', { path: 'notes/a.md', content: 'x' }, 'docs')).toEqual({
      path: 'docs/notes/a.md',
      content: 'x',
    });
    expect(argumentsInWorkspace('move_file', { source: 'a.md', destination: './b/c.md' }, 'docs/team')).toEqual({
      source: 'docs/team/a.md',
      destination: 'docs/team/b/c.md',
    });
    expect(argumentsInWorkspace('read_multiple_files', { paths: ['a.md', 'b/'] }, 'docs')).toEqual({ paths: ['docs/a.md', 'docs/b'] });
  });

  it("gives a path left out as the prefix itself, the tool's root", () => {
    expect(argumentsInWorkspace('list_files', { recursive: true }, 'docs')).toEqual({ path: 'docs', recursive: true });
    expect(argumentsInWorkspace('search_files', { pattern: 'x', path: '.' }, 'docs')).toEqual({ pattern: 'x', path: 'docs' });
  });

  it('keeps an absolute path, and shows a path that climbs out of the prefix as asked', () => {
    expect(argumentsInWorkspace('read_file', { path: '/srv/ws/docs/a.md' }, 'docs')).toEqual({ path: '/srv/ws/docs/a.md' });
    expect(argumentsInWorkspace('read_file', { path: '../secret.txt' }, 'docs')).toEqual({ path: 'docs/../secret.txt' });
    expect(argumentsInWorkspace('read_file', { path: 'a/../../../etc/passwd' }, 'docs')).toEqual({ path: 'docs/a/../../../etc/passwd' });
  });

  it('leaves the arguments of a tool that takes no paths as they are', () => {
    const args = { url: 'https://example.com/' };
    expect(argumentsInWorkspace('fetch_url', args, 'docs')).toBe(args);
  });
});

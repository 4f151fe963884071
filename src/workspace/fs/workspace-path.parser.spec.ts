import { misleadingCharacter, parseWorkspacePath } from './workspace-path.parser.js';

describe('names that read as other names', () => {
  it('names the first control or bidirectional formatting character as Unicode does', () => {
    expect(misleadingCharacter('report\u202Efdp.exe')).toBe('U+202E RIGHT-TO-LEFT OVERRIDE');
    expect(misleadingCharacter('a\u2069b\u202Ac')).toBe('U+2069 POP DIRECTIONAL ISOLATE');
    expect(misleadingCharacter('tab\there')).toBe('U+0009 CHARACTER TABULATION');
    expect(misleadingCharacter('\u001f')).toBe('U+001F INFORMATION SEPARATOR ONE');
    expect(misleadingCharacter('x\u007f')).toBe('U+007F DELETE');
    expect(misleadingCharacter('café/数据/😀 notes.txt')).toBeUndefined();
    // Right-to-left text itself is a name like any other; only the characters that reorder others are refused.
    expect(misleadingCharacter('שלום.txt')).toBeUndefined();
  });

  it('refuses them only for a path that is about to name an entry', () => {
    expect(parseWorkspacePath('/ws', 'old\u202Ename.txt').segments).toEqual(['old\u202Ename.txt']);
    expect(() => parseWorkspacePath('/ws', 'new\u202Ename.txt', { creates: true })).toThrow(
      "Invalid path 'new?name.txt': it contains U+202E RIGHT-TO-LEFT OVERRIDE, which would make the name read differently from what it is; choose a name without it",
    );
    expect(() => parseWorkspacePath('/ws', 'dir\n/file.txt', { creates: true })).toThrow(/U\+000A LINE FEED/);
    expect(parseWorkspacePath('/ws', 'src/index.ts', { creates: true }).segments).toEqual(['src', 'index.ts']);
  });
});

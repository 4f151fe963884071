import { renameInResult, renameTools } from './exposed-texts.js';

const renames = new Map([
  ['read_file', 'read_doc'],
  ['list_files', 'browse'],
]);

describe('renameTools', () => {
  it('puts the shown name in place of each real one the text names', () => {
    expect(renameTools('call read_file again with offset: 3 to read on', renames)).toBe('call read_doc again with offset: 3 to read on');
    expect(renameTools("No file at 'a.md'; list_files shows what exists", renames)).toBe("No file at 'a.md'; browse shows what exists");
    expect(renameTools('copy it with read_file and write_file instead.', renames)).toBe('copy it with read_doc and write_file instead.');
    expect(renameTools('then use list_files.', renames)).toBe('then use browse.');
  });

  it('leaves names that are part of a path, a file name, a quoted value or a longer name', () => {
    for (const text of [
      "No file at 'read_file'",
      "'docs/read_file.md' is a directory",
      'read_file.md',
      'my_read_file',
      'read_files',
      '"read_file"',
      'docs/list_files',
    ]) {
      expect(renameTools(text, renames)).toBe(text);
    }
  });

  it('changes nothing without renames', () => {
    expect(renameTools('call read_file again', new Map())).toBe('call read_file again');
  });
});

describe('renameInResult', () => {
  it("renames the hints and error messages of a built-in's result and keeps its data", () => {
    const result = {
      files: [
        { path: 'read_file', content: 'call read_file again', hint: 'call read_file again with offset: 2', ok: true },
        { path: 'x', ok: false, error: { code: 'not_found', message: 'list_files shows what exists' } },
      ],
      read: 1,
    };
    expect(renameInResult(result, renames)).toEqual({
      files: [
        { path: 'read_file', content: 'call read_file again', hint: 'call read_doc again with offset: 2', ok: true },
        { path: 'x', ok: false, error: { code: 'not_found', message: 'browse shows what exists' } },
      ],
      read: 1,
    });
  });

  it('answers the same object when there is nothing to rename', () => {
    const result = { path: 'a', content: 'read_file', hint: 'nothing here' };
    expect(renameInResult(result, renames)).toBe(result);
  });
});

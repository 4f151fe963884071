import { link, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { callTool } from './tool-test-kit.js';

// edit_file, search_files, move_file, read_multiple_files and list_files' glob, over HTTP on real files.

const TREE_DIRS = 100;
const TREE_FILES_PER_DIR = 100;

describe('agent file tools', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  // A fresh project per test: its own empty workspace.
  const workspace = async () => {
    const { id } = await t.createProject(tenant);
    const dir = t.workspaceOf(id);
    await mkdir(dir, { recursive: true });
    const call = (tool: string, args: unknown, options: { timeoutMs?: number } = {}) => callTool(t, tenant, id, tool, args, options);
    const ok = async (tool: string, args: unknown) => {
      const res = await call(tool, args).expect(200);
      expect({ status: res.body.status, error: res.body.error }).toEqual({ status: 'ok', error: undefined });
      return res.body.result;
    };
    const failed = async (tool: string, args: unknown) => {
      const res = await call(tool, args).expect(200);
      expect({ status: res.body.status, result: res.body.result }).toEqual({ status: 'error', result: undefined });
      return res.body.error as { code: string; message: string; retryable: boolean };
    };
    return { id, dir, call, ok, failed, at: (p: string) => path.join(dir, p) };
  };

  describe('edit_file', () => {
    it('replaces a unique oldText atomically and answers a unified diff', async () => {
      const w = await workspace();
      await writeFile(w.at('app.ts'), 'const a = 1;\nconst b = 2;\nconst c = 3;\n', { mode: 0o640 });
      const inode = (await stat(w.at('app.ts'))).ino;
      const result = await w.ok('edit_file', { path: 'app.ts', edits: [{ oldText: 'const b = 2;', newText: 'const b = 20;' }] });
      expect(result).toEqual({
        path: 'app.ts',
        edits: 1,
        dryRun: false,
        written: true,
        diff: '--- a/app.ts\n+++ b/app.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;\n',
      });
      expect(await readFile(w.at('app.ts'), 'utf8')).toBe('const a = 1;\nconst b = 20;\nconst c = 3;\n');
      const after = await stat(w.at('app.ts'));
      // Renamed into place like write_file (a new inode), with the old permissions, no temporary file left.
      expect([after.ino === inode, after.mode & 0o777]).toEqual([false, 0o640]);
      expect(await readdir(w.dir)).toEqual(['app.ts']);
    });

    it('fails an oldText found 0 times with the closest line, and one found twice with the count; the file is unchanged', async () => {
      const w = await workspace();
      const text = 'function total(items) {\n  return items.length;\n}\nreturn 1;\nreturn 1;\n';
      await writeFile(w.at('a.js'), text);
      const none = await w.failed('edit_file', { path: 'a.js', edits: [{ oldText: '    return items.size;', newText: 'x' }] });
      expect(none.code).toBe('edit_not_found');
      expect(none.message).toContain('occurs 0 times');
      expect(none.message).toContain('line 2: "  return items.length;"');
      const twice = await w.failed('edit_file', { path: 'a.js', edits: [{ oldText: 'return 1;', newText: 'return 2;' }] });
      expect(twice.code).toBe('edit_not_unique');
      expect(twice.message).toMatch(/occurs 2 times .* Include more of the surrounding lines/);
      expect(await readFile(w.at('a.js'), 'utf8')).toBe(text);
    });

    it('applies all edits or none: a failing third edit leaves the file untouched', async () => {
      const w = await workspace();
      await writeFile(w.at('cfg.ini'), 'a=1\nb=2\nc=3\n');
      const before = await stat(w.at('cfg.ini'));
      const error = await w.failed('edit_file', {
        path: 'cfg.ini',
        edits: [
          { oldText: 'a=1', newText: 'a=10' },
          { oldText: 'b=2', newText: 'b=20' },
          { oldText: 'd=4', newText: 'd=40' },
        ],
      });
      expect(error.message).toMatch(/^Edit 3 of 3: its oldText occurs 0 times in 'cfg.ini' as it stands after edits 1-2\./);
      expect(error.message).toContain('No edit was applied');
      const after = await stat(w.at('cfg.ini'));
      expect(await readFile(w.at('cfg.ini'), 'utf8')).toBe('a=1\nb=2\nc=3\n');
      expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
      // The same edits without the bad one apply together.
      const ok = await w.ok('edit_file', {
        path: 'cfg.ini',
        edits: [
          { oldText: 'a=1', newText: 'a=10' },
          { oldText: 'a=10\nb=2', newText: 'a=10\nb=20' },
        ],
      });
      expect(ok.edits).toBe(2);
      expect(await readFile(w.at('cfg.ini'), 'utf8')).toBe('a=10\nb=20\nc=3\n');
    });

    it('keeps CRLF line endings and a missing final newline', async () => {
      const w = await workspace();
      await writeFile(w.at('win.txt'), 'one\r\ntwo\r\nthree');
      const result = await w.ok('edit_file', { path: 'win.txt', edits: [{ oldText: 'one\ntwo', newText: 'one\n2\nextra' }] });
      expect(await readFile(w.at('win.txt'), 'utf8')).toBe('one\r\n2\r\nextra\r\nthree');
      expect(result.diff).toBe(
        '--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n+extra\n three\n\\ No newline at end of file\n',
      );
    });

    it('with dryRun answers the diff and writes nothing', async () => {
      const w = await workspace();
      await writeFile(w.at('x.md'), '# Title\n');
      const before = await stat(w.at('x.md'));
      const result = await w.ok('edit_file', { path: 'x.md', edits: [{ oldText: '# Title', newText: '# New title' }], dryRun: true });
      expect(result).toMatchObject({ dryRun: true, written: false, diff: expect.stringContaining('+# New title') });
      expect(await readFile(w.at('x.md'), 'utf8')).toBe('# Title\n');
      expect((await stat(w.at('x.md'))).mtimeMs).toBe(before.mtimeMs);
    });

    it('answers a missing file, a directory and a binary file with what to do instead', async () => {
      const w = await workspace();
      await mkdir(w.at('src'));
      await writeFile(w.at('logo.png'), Buffer.from([0x89, 0x50, 0, 1]));
      const edit = (p: string) => w.failed('edit_file', { path: p, edits: [{ oldText: 'a', newText: 'b' }] });
      expect(await edit('missing.txt')).toMatchObject({ code: 'not_found', message: expect.stringContaining('list_files') });
      expect(await edit('src')).toMatchObject({ code: 'is_directory', message: expect.stringContaining('list_files') });
      expect(await edit('logo.png')).toMatchObject({ code: 'binary_file', message: expect.stringContaining('encoding: "base64"') });
    });
  });

  describe('search_files over a 10,000-file tree', () => {
    let w: Awaited<ReturnType<typeof workspace>>;

    // Built once for the file: 100 directories of 100 files, one of which holds the marker.
    beforeAll(async () => {
      w = await workspace();
      for (let d = 0; d < TREE_DIRS; d++) {
        const dir = w.at(`tree/d${String(d).padStart(3, '0')}`);
        await mkdir(dir, { recursive: true });
        await Promise.all(
          Array.from({ length: TREE_FILES_PER_DIR }, (_, f) =>
            writeFile(path.join(dir, `f${String(f).padStart(3, '0')}.${f % 2 ? 'ts' : 'txt'}`), `export const value${f} = ${d};\n`),
          ),
        );
      }
      await writeFile(w.at('tree/d042/f007.ts'), 'export const value7 = 42;\n// FIXME: the marker line\n');
    }, 120_000);

    it('finds a literal in one file of 10,000 and counts the files searched', async () => {
      const result = await w.ok('search_files', { pattern: 'FIXME: the marker', path: 'tree' });
      expect(result).toEqual({
        matches: [{ path: 'tree/d042/f007.ts', line: 2, text: '// FIXME: the marker line' }],
        truncated: false,
        filesSearched: TREE_DIRS * TREE_FILES_PER_DIR,
        filesSkipped: 0,
      });
    });

    it('filters by glob, matches a regular expression case-insensitively, and returns context lines', async () => {
      const result = await w.ok('search_files', { pattern: 'fixme:\\s+the', glob: '**/d04?/*.ts', caseSensitive: false, contextLines: 1 });
      expect(result.matches).toEqual([
        { path: 'tree/d042/f007.ts', line: 2, text: '// FIXME: the marker line', before: ['export const value7 = 42;'], after: [] },
      ]);
      expect(result.filesSearched).toBe((10 * TREE_FILES_PER_DIR) / 2);
    });

    it('stops at maxResults and says the answer is cut', async () => {
      const result = await w.ok('search_files', { pattern: 'export', maxResults: 5 });
      expect(result.matches).toHaveLength(5);
      expect(result.truncated).toBe(true);
      expect(result.hint).toMatch(/maxResults/);
    });

    it('refuses a pattern RE2 cannot run with a 400 that says how to rewrite it, and audits the refusal', async () => {
      const res = await w.call('search_files', { pattern: '(?<=x)y' }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_pattern', message: expect.stringMatching(/lookaround are not supported/) });
      const audit = await t.http.get(`/v1/projects/${w.id}/invocations`).query({ status: 'denied' }).set(tenant.auth).expect(200);
      expect(audit.body.items).toEqual([expect.objectContaining({ tool: 'search_files', status: 'denied', errorCode: 'invalid_pattern' })]);
    });

    it('stops at the call timeout, then serves the next search', async () => {
      const res = await w.call('search_files', { pattern: '[a-z]+ = (4[0-9]|9)', caseSensitive: false }, { timeoutMs: 1 }).expect(200);
      expect(res.body).toMatchObject({ status: 'timeout', error: { code: 'timeout', retryable: true } });
      expect((await w.ok('search_files', { pattern: 'FIXME', path: 'tree/d042' })).matches).toHaveLength(1);
    });
  });

  describe('move_file', () => {
    it('moves a file and a directory across directories', async () => {
      const w = await workspace();
      await mkdir(w.at('src/lib'), { recursive: true });
      await mkdir(w.at('dst'));
      await writeFile(w.at('src/lib/a.ts'), 'a');
      expect(await w.ok('move_file', { source: 'src/lib/a.ts', destination: 'dst/b.ts' })).toEqual({
        source: 'src/lib/a.ts',
        destination: 'dst/b.ts',
        type: 'file',
        overwritten: false,
      });
      expect(await readFile(w.at('dst/b.ts'), 'utf8')).toBe('a');
      expect(await w.ok('move_file', { source: 'src/lib', destination: 'dst/lib' })).toMatchObject({ type: 'directory' });
      expect(await readdir(w.at('src'))).toEqual([]);
      expect(await readdir(w.at('dst'))).toEqual(['b.ts', 'lib']);
    });

    it('refuses to replace an existing file unless overwrite is true', async () => {
      const w = await workspace();
      await writeFile(w.at('new.txt'), 'new');
      await writeFile(w.at('old.txt'), 'old');
      const error = await w.failed('move_file', { source: 'new.txt', destination: 'old.txt' });
      expect(error).toMatchObject({ code: 'already_exists', message: expect.stringContaining('overwrite: true') });
      expect(await readFile(w.at('old.txt'), 'utf8')).toBe('old');
      expect(await w.ok('move_file', { source: 'new.txt', destination: 'old.txt', overwrite: true })).toMatchObject({ overwritten: true });
      expect(await readdir(w.dir)).toEqual(['old.txt']);
      expect(await readFile(w.at('old.txt'), 'utf8')).toBe('new');
    });

    it('refuses to move a directory into itself', async () => {
      const w = await workspace();
      await mkdir(w.at('a/b'), { recursive: true });
      for (const destination of ['a/b/a', 'a/a', 'a']) {
        const res = await w.call('move_file', { source: 'a', destination }).expect(400);
        expect(res.body.error).toMatchObject({
          code: 'move_into_itself',
          message: expect.stringContaining('choose a destination outside'),
        });
      }
      expect(await readdir(w.at('a'))).toEqual(['b']);
    });

    it('names a missing destination directory and creates it with createDirs', async () => {
      const w = await workspace();
      await writeFile(w.at('a.txt'), 'a');
      const error = await w.failed('move_file', { source: 'a.txt', destination: 'x/y/a.txt' });
      expect(error).toMatchObject({ code: 'parent_not_found', message: expect.stringContaining("The directory 'x' does not exist") });
      expect(await w.ok('move_file', { source: 'a.txt', destination: 'x/y/a.txt', createDirs: true })).toMatchObject({
        destination: 'x/y/a.txt',
      });
    });

    it('moves a symlink as a link, never its target', async () => {
      const w = await workspace();
      await writeFile(w.at('target.txt'), 't');
      await symlink('target.txt', w.at('link'));
      expect(await w.ok('move_file', { source: 'link', destination: 'renamed-link' })).toMatchObject({ type: 'symlink' });
      expect((await readdir(w.dir)).sort()).toEqual(['renamed-link', 'target.txt']);
    });
  });

  describe('read_multiple_files', () => {
    it('answers each file on its own: contents and per-file errors, one bad path failing nothing else', async () => {
      const w = await workspace();
      await mkdir(w.at('src'));
      await writeFile(w.at('a.txt'), 'alpha\n');
      await writeFile(w.at('src/b.txt'), 'beta\n');
      await writeFile(w.at('bin'), Buffer.from([0, 1, 2]));
      const result = await w.ok('read_multiple_files', { paths: ['a.txt', 'missing.txt', 'src', '../../etc/passwd', 'bin', 'src/b.txt'] });
      expect(result).toEqual({
        read: 2,
        failed: 4,
        files: [
          { ok: true, path: 'a.txt', encoding: 'utf8', content: 'alpha\n', size: 6, truncated: false, totalLines: 1 },
          { ok: false, path: 'missing.txt', error: { code: 'not_found', message: expect.stringContaining('list_files') } },
          { ok: false, path: 'src', error: { code: 'is_directory', message: expect.stringContaining('list_files') } },
          { ok: false, path: '../../etc/passwd', error: { code: 'path_outside_workspace', message: expect.any(String) } },
          { ok: false, path: 'bin', error: { code: 'binary_file', message: expect.stringContaining('base64') } },
          { ok: true, path: 'src/b.txt', encoding: 'utf8', content: 'beta\n', size: 5, truncated: false, totalLines: 1 },
        ],
      });
    });

    it('refuses more than 50 paths before reading any', async () => {
      const w = await workspace();
      const res = await w.call('read_multiple_files', { paths: Array.from({ length: 51 }, (_, i) => `${i}.txt`) }).expect(422);
      expect(res.body.error.code).toBe('invalid_arguments');
    });
  });

  describe('list_files with a glob', () => {
    it('keeps the entries whose path matches, recursively or not', async () => {
      const w = await workspace();
      await mkdir(w.at('src/deep'), { recursive: true });
      for (const f of ['README.md', 'src/a.ts', 'src/b.js', 'src/deep/c.ts']) await writeFile(w.at(f), 'x');
      const recursive = await w.ok('list_files', { recursive: true, glob: '**/*.ts' });
      expect(recursive.entries.map((e: { path: string }) => e.path)).toEqual(['src/a.ts', 'src/deep/c.ts']);
      const top = await w.ok('list_files', { glob: '*.md' });
      expect(top.entries.map((e: { path: string }) => e.path)).toEqual(['README.md']);
      const relative = await w.ok('list_files', { path: 'src', recursive: true, glob: 'deep/*' });
      expect(relative.entries.map((e: { path: string }) => e.path)).toEqual(['src/deep/c.ts']);
      const bad = await w.call('list_files', { glob: '{a,b' }).expect(400);
      expect(bad.body.error.code).toBe('invalid_glob');
    });
  });

  describe('answers that say what to do next', () => {
    it('a write under a missing directory names the directory and createDirs: true', async () => {
      const w = await workspace();
      const error = await w.failed('write_file', { path: 'notes/a.txt', content: 'x' });
      expect(error).toEqual({
        code: 'parent_not_found',
        message:
          "The directory 'notes' does not exist, so 'notes/a.txt' cannot be created there; call again with createDirs: true to create it",
        retryable: false,
      });
    });

    it('a file too big to edit points at write_file; a hard-linked file cannot be edited or moved', async () => {
      const w = await workspace();
      await writeFile(w.at('huge.txt'), Buffer.alloc(8 * 1024 * 1024 + 1, 0x61));
      expect(await w.failed('edit_file', { path: 'huge.txt', edits: [{ oldText: 'a', newText: 'b' }] })).toMatchObject({
        code: 'file_too_large',
        message: expect.stringContaining('write_file'),
      });
      await writeFile(w.at('one.txt'), 'x');
      await link(w.at('one.txt'), w.at('two.txt'));
      const edit = await w.call('edit_file', { path: 'one.txt', edits: [{ oldText: 'x', newText: 'y' }] }).expect(403);
      expect(edit.body.error).toMatchObject({ code: 'hard_link', message: expect.stringContaining('another name') });
      await w.call('move_file', { source: 'one.txt', destination: 'three.txt' }).expect(403);
    });

    it('a directory that is not empty cannot be replaced by a move', async () => {
      const w = await workspace();
      await mkdir(w.at('a'));
      await mkdir(w.at('b'));
      await writeFile(w.at('b/keep.txt'), 'k');
      const error = await w.failed('move_file', { source: 'a', destination: 'b', overwrite: true });
      expect(error).toMatchObject({ code: 'not_empty', message: expect.stringContaining('choose a destination that does not exist') });
    });
  });
});

import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { blockingIo } from './descriptor-io.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';
import {
  deleteWorkspacePath,
  hashWorkspaceFile,
  listWorkspace,
  readWorkspaceFile,
  resolveWorkspaceDirectory,
  statWorkspacePath,
  writeWorkspaceFile,
  WorkspaceFsError,
} from './workspace-fs.js';

let base: string;
let root: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-fs-')));
  root = join(base, 'ws');
  await mkdir(root);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const put = async (rel: string, content: string | Buffer) => {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), content);
};

async function expectOutcome(promise: Promise<unknown>, code: string): Promise<WorkspaceFsError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected WorkspaceFsError ${code}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkspaceFsError);
  expect(err).toMatchObject({ code });
  return err as WorkspaceFsError;
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');

// Bytes this process has read through read(2) so far (all threads).
const bytesReadByProcess = () => Number(/rchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))![1]);

describe('readWorkspaceFile', () => {
  it('reads a whole small file with its line count', async () => {
    await put('src/a.ts', 'one\r\ntwo\nthree');
    expect(await readWorkspaceFile(root, 'src/a.ts', { maxBytes: 1000 })).toEqual({
      path: 'src/a.ts',
      encoding: 'utf8',
      content: 'one\r\ntwo\nthree',
      size: 14,
      truncated: false,
      totalLines: 3,
    });
  });

  it('reads by lines with offset and limit and tells how to read on', async () => {
    await put('log.txt', lines(500));
    const first = await readWorkspaceFile(root, 'log.txt', { limit: 200, maxBytes: 100_000 });
    expect(first.content).toBe(lines(200));
    expect(first).toMatchObject({ truncated: true, nextOffset: 201, totalLines: 500 });
    expect(first.hint).toContain('offset: 201');

    const second = await readWorkspaceFile(root, 'log.txt', { offset: 201, limit: 2, maxBytes: 100_000 });
    expect(second.content).toBe('line 201\nline 202\n');
    expect(second.nextOffset).toBe(203);

    const last = await readWorkspaceFile(root, 'log.txt', { offset: 499, limit: 200, maxBytes: 100_000 });
    expect(last).toMatchObject({ content: 'line 499\nline 500\n', truncated: false, totalLines: 500 });
    expect(last.nextOffset).toBeUndefined();
  });

  it('says so when the offset is past the end', async () => {
    await put('short.txt', 'a\nb\n');
    const result = await readWorkspaceFile(root, 'short.txt', { offset: 5, maxBytes: 100 });
    expect(result).toMatchObject({ content: '', truncated: false, totalLines: 2 });
    expect(result.hint).toContain('2 lines');
    expect((await readWorkspaceFile(root, 'short.txt', { offset: 3, maxBytes: 100 })).content).toBe('');
  });

  it('returns whole lines up to maxBytes and points at the next line', async () => {
    await put('log.txt', lines(100));
    const result = await readWorkspaceFile(root, 'log.txt', { maxBytes: 50 });
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(50);
    expect(result.content).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\n');
    expect(result).toMatchObject({ truncated: true, nextOffset: 8 });
    expect(result.totalLines).toBeUndefined();
    expect(result.hint).toContain('capped at 50 bytes');
  });

  it('cuts a line longer than maxBytes on a character boundary', async () => {
    await put('wide.txt', `${'é'.repeat(30)}\nnext\n`);
    const result = await readWorkspaceFile(root, 'wide.txt', { maxBytes: 7 });
    expect(result.content).toBe('ééé');
    expect(result).toMatchObject({ truncated: true, nextOffset: 2 });
    expect(result.hint).toContain('longer than 7 bytes');
  });

  it('reads no more than maxBytes plus a little from a large file', async () => {
    await put('huge.log', Buffer.alloc(32 * 1024 * 1024, 'abcdefghijklmno\n'));
    const before = bytesReadByProcess();
    const result = await readWorkspaceFile(root, 'huge.log', { maxBytes: 4096 });
    const read = bytesReadByProcess() - before;
    expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(4096);
    expect(result.truncated).toBe(true);
    expect(read).toBeLessThan(256 * 1024);
  });

  it('refuses a binary file in utf8 mode and asks for base64', async () => {
    await put('img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    await put('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const err = await expectOutcome(readWorkspaceFile(root, 'img.png', { maxBytes: 100 }), 'binary_file');
    expect(err.message).toContain('encoding: "base64"');
    await expectOutcome(readWorkspaceFile(root, 'latin1.txt', { maxBytes: 100 }), 'binary_file');
  });

  it('does not mistake a character cut by the sniffed chunk for binary', async () => {
    await put('edge.txt', `${'a'.repeat(8191)}é\n`);
    const result = await readWorkspaceFile(root, 'edge.txt', { maxBytes: 10_000 });
    expect(result.content.endsWith('é\n')).toBe(true);
  });

  it('returns bytes in base64 mode, capped and resumable by byte offset', async () => {
    const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
    await put('blob.bin', bytes);
    const whole = await readWorkspaceFile(root, 'blob.bin', { maxBytes: 1000, encoding: 'base64' });
    expect(whole).toMatchObject({ encoding: 'base64', truncated: false, size: 100 });
    expect(Buffer.from(whole.content, 'base64')).toEqual(bytes);

    const part = await readWorkspaceFile(root, 'blob.bin', { maxBytes: 40, encoding: 'base64' });
    expect(part.content.length).toBeLessThanOrEqual(40);
    expect(part.truncated).toBe(true);
    const got = Buffer.from(part.content, 'base64');
    expect(got).toEqual(bytes.subarray(0, got.length));
    expect(part.nextOffset).toBe(got.length);
    expect(part.hint).toContain(`offset: ${got.length}`);
    const rest = await readWorkspaceFile(root, 'blob.bin', { maxBytes: 1000, encoding: 'base64', offset: got.length });
    expect(Buffer.concat([got, Buffer.from(rest.content, 'base64')])).toEqual(bytes);
  });

  it('reads an empty file', async () => {
    await put('empty.txt', '');
    expect(await readWorkspaceFile(root, 'empty.txt', { maxBytes: 10 })).toMatchObject({
      content: '',
      truncated: false,
      totalLines: 0,
    });
  });

  it('reports missing files, directories and file-as-directory in words a model can act on', async () => {
    await put('src/a.ts', 'x');
    const missing = await expectOutcome(readWorkspaceFile(root, 'src/x.ts', { maxBytes: 10 }), 'not_found');
    expect(missing.message).toBe("No file or directory at 'src/x.ts' in the workspace; list_files shows what exists");
    expect(missing.message).not.toContain(base);
    await expectOutcome(readWorkspaceFile(root, 'src', { maxBytes: 10 }), 'is_directory');
    await expectOutcome(readWorkspaceFile(root, 'src/a.ts/b', { maxBytes: 10 }), 'not_a_directory');
    await expectOutcome(readWorkspaceFile(root, 'src/a.ts/', { maxBytes: 10 }), 'not_a_directory');
  });

  it('refuses invalid read arguments', async () => {
    await put('a.txt', 'x');
    await expect(readWorkspaceFile(root, 'a.txt', { maxBytes: 0 })).rejects.toBeInstanceOf(AppError);
    await expect(readWorkspaceFile(root, 'a.txt', { maxBytes: 10, offset: 0 })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_argument',
    });
    await expect(readWorkspaceFile(root, '', { maxBytes: 10 })).rejects.toMatchObject({ code: 'invalid_path' });
  });
});

describe('writeWorkspaceFile', () => {
  it('creates a file and then replaces its content atomically', async () => {
    expect(await writeWorkspaceFile(root, 'notes.md', Buffer.from('first'))).toEqual({
      path: 'notes.md',
      bytesWritten: 5,
      created: true,
    });
    await chmod(join(root, 'notes.md'), 0o640);
    const inode = (await stat(join(root, 'notes.md'))).ino;
    expect(await writeWorkspaceFile(root, './notes.md', Buffer.from('second!'))).toEqual({
      path: 'notes.md',
      bytesWritten: 7,
      created: false,
    });
    expect(await readFile(join(root, 'notes.md'), 'utf8')).toBe('second!');
    const after = await stat(join(root, 'notes.md'));
    // A new inode proves the content was renamed into place, not written over the old one.
    expect(after.ino).not.toBe(inode);
    expect(after.mode & 0o777).toBe(0o640);
    expect(await readdir(root)).toEqual(['notes.md']);
  });

  it('creates missing parent directories only when asked', async () => {
    await expectOutcome(writeWorkspaceFile(root, 'a/b/c.txt', Buffer.from('x')), 'parent_not_found');
    expect(existsSync(join(root, 'a'))).toBe(false);
    expect(await writeWorkspaceFile(root, 'a/b/c.txt', Buffer.from('x'), { createDirs: true })).toMatchObject({
      path: 'a/b/c.txt',
      created: true,
    });
    expect(await readFile(join(root, 'a/b/c.txt'), 'utf8')).toBe('x');
  });

  it('will not create directories under a file or write over a directory', async () => {
    await put('file.txt', 'x');
    await mkdir(join(root, 'dir'));
    const underFile = writeWorkspaceFile(root, 'file.txt/x.txt', Buffer.from('x'), { createDirs: true });
    await expectOutcome(underFile, 'not_a_directory');
    await expectOutcome(writeWorkspaceFile(root, 'dir', Buffer.from('x')), 'is_directory');
    await expectOutcome(writeWorkspaceFile(root, '.', Buffer.from('x')), 'is_directory');
    await expect(writeWorkspaceFile(root, 'dir/', Buffer.from('x'))).rejects.toMatchObject({ code: 'invalid_path' });
  });

  it('writes through a symlink to a file inside the workspace, keeping the link', async () => {
    await put('real/target.txt', 'old');
    await symlink('real/target.txt', join(root, 'alias'));
    expect(await writeWorkspaceFile(root, 'alias', Buffer.from('new'))).toMatchObject({
      path: 'real/target.txt',
      created: false,
    });
    expect(await readFile(join(root, 'real/target.txt'), 'utf8')).toBe('new');
    expect((await stat(join(root, 'alias'))).isFile()).toBe(true);
    expect((await readdir(root)).sort()).toEqual(['alias', 'real']);
  });

  it('creates directories inside a symlinked directory that stays in the workspace', async () => {
    await mkdir(join(root, 'real'));
    await symlink('real', join(root, 'link'));
    expect(await writeWorkspaceFile(root, 'link/new/x.txt', Buffer.from('x'), { createDirs: true })).toMatchObject({
      path: 'real/new/x.txt',
    });
  });
});

describe('listWorkspace', () => {
  beforeEach(async () => {
    await put('b.txt', 'bb');
    await put('a/one.txt', '1');
    await put('a/deep/two.txt', '22');
    await put('a/deep/deeper/three.txt', '333');
    await put('.env', 'SECRET=1');
    await put('.git/HEAD', 'ref');
    await symlink('a', join(root, 'link-a'));
  });

  it('lists the direct children sorted by path, hiding dot files', async () => {
    const result = await listWorkspace(root, '', { limit: 100, details: true });
    expect(result.path).toBe('.');
    expect(result.truncated).toBe(false);
    expect(result.entries.map((e) => [e.path, e.type])).toEqual([
      ['a', 'directory'],
      ['b.txt', 'file'],
      ['link-a', 'symlink'],
    ]);
    const file = result.entries[1];
    expect(file).toMatchObject({ name: 'b.txt', size: 2 });
    expect(new Date(file.modified).toISOString()).toBe(file.modified);
  });

  it('gives names and types from the directory read unless details are asked, the same entries either way', async () => {
    for (const blocking of [false, true]) {
      const opts = { limit: 100, recursive: true, includeHidden: true, blocking };
      const plain = await listWorkspace(root, '', opts);
      const detailed = await listWorkspace(root, '', { ...opts, details: true });
      expect(plain.entries.length).toBeGreaterThan(5);
      expect(plain.entries.every((e) => !('size' in e) && !('modified' in e))).toBe(true);
      expect(detailed.entries.every((e) => typeof e.size === 'number' && typeof e.modified === 'string')).toBe(true);
      expect(plain.entries).toEqual(detailed.entries.map(({ name, path, type }) => ({ name, path, type })));
      expect(plain.entries.find((e) => e.path === 'link-a')?.type).toBe('symlink');
    }
  });

  it('includes hidden entries when asked', async () => {
    const result = await listWorkspace(root, '.', { limit: 100, includeHidden: true, recursive: true });
    expect(result.entries.map((e) => e.path)).toContain('.env');
    expect(result.entries.map((e) => e.path)).toContain('.git/HEAD');
  });

  it('recurses to maxDepth without entering symlinks', async () => {
    const all = await listWorkspace(root, '', { limit: 100, recursive: true });
    expect(all.entries.map((e) => e.path)).toEqual([
      'a',
      'a/deep',
      'a/deep/deeper',
      'a/deep/deeper/three.txt',
      'a/deep/two.txt',
      'a/one.txt',
      'b.txt',
      'link-a',
    ]);
    const shallow = await listWorkspace(root, 'a', { limit: 100, recursive: true, maxDepth: 2 });
    expect(shallow.path).toBe('a');
    expect(shallow.entries.map((e) => e.path)).toEqual(['a/deep', 'a/deep/deeper', 'a/deep/two.txt', 'a/one.txt']);
  });

  it('stops at limit and says the list is truncated', async () => {
    const result = await listWorkspace(root, '', { limit: 2, recursive: true });
    expect(result.entries.map((e) => e.path)).toEqual(['a', 'a/deep']);
    expect(result.truncated).toBe(true);
    expect((await listWorkspace(root, '', { limit: 3 })).truncated).toBe(false);
  });

  it('lists through a symlinked directory inside the workspace under its real path', async () => {
    const result = await listWorkspace(root, 'link-a', { limit: 10 });
    expect(result.path).toBe('a');
    expect(result.entries.map((e) => e.path)).toEqual(['a/deep', 'a/one.txt']);
  });

  it('reports a file or a missing path instead of listing it', async () => {
    await expectOutcome(listWorkspace(root, 'b.txt', { limit: 10 }), 'not_a_directory');
    await expectOutcome(listWorkspace(root, 'nope', { limit: 10 }), 'not_found');
    await expect(listWorkspace(root, '', { limit: 0 })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});

describe('deleteWorkspacePath', () => {
  it('deletes a file', async () => {
    await put('a.txt', 'x');
    expect(await deleteWorkspacePath(root, 'a.txt')).toEqual({ path: 'a.txt', type: 'file' });
    expect(existsSync(join(root, 'a.txt'))).toBe(false);
  });

  it('deletes a directory only when recursive is set', async () => {
    await put('dir/sub/x.txt', 'x');
    const err = await expectOutcome(deleteWorkspacePath(root, 'dir'), 'is_directory');
    expect(err.message).toContain('recursive: true');
    expect(existsSync(join(root, 'dir/sub/x.txt'))).toBe(true);
    expect(await deleteWorkspacePath(root, 'dir', { recursive: true })).toEqual({ path: 'dir', type: 'directory' });
    expect(await readdir(root)).toEqual([]);
  });

  it('deletes a symlink without touching its target', async () => {
    await put('real/x.txt', 'x');
    await symlink('real', join(root, 'link'));
    expect(await deleteWorkspacePath(root, 'link', { recursive: true })).toEqual({ path: 'link', type: 'symlink' });
    expect(await readFile(join(root, 'real/x.txt'), 'utf8')).toBe('x');
  });

  it('removes symlinks inside a deleted tree as links', async () => {
    const keep = join(base, 'keep');
    await mkdir(keep);
    await writeFile(join(keep, 'k.txt'), 'k');
    await put('dir/x.txt', 'x');
    await symlink(keep, join(root, 'dir', 'out'));
    await deleteWorkspacePath(root, 'dir', { recursive: true });
    expect(existsSync(join(root, 'dir'))).toBe(false);
    expect(await readFile(join(keep, 'k.txt'), 'utf8')).toBe('k');
  });

  it('reports a missing path', async () => {
    await expectOutcome(deleteWorkspacePath(root, 'ghost.txt'), 'not_found');
  });
});

describe('resolveWorkspaceDirectory and statWorkspacePath', () => {
  it('answers the real absolute path of a directory inside the workspace', async () => {
    await mkdir(join(root, 'app/src'), { recursive: true });
    await symlink('app/src', join(root, 'src-link'));
    expect(await resolveWorkspaceDirectory(root, '')).toBe(root);
    expect(await resolveWorkspaceDirectory(root, '.')).toBe(root);
    expect(await resolveWorkspaceDirectory(root, 'app/src/')).toBe(join(root, 'app/src'));
    expect(await resolveWorkspaceDirectory(root, 'src-link')).toBe(join(root, 'app/src'));
    await put('file.txt', 'x');
    await expectOutcome(resolveWorkspaceDirectory(root, 'file.txt'), 'not_a_directory');
    await expectOutcome(resolveWorkspaceDirectory(root, 'missing'), 'not_found');
  });

  it('stats an entry, following symlinks unless told not to', async () => {
    await put('a.txt', 'abc');
    await symlink('a.txt', join(root, 'l'));
    expect(await statWorkspacePath(root, 'l')).toMatchObject({ path: 'a.txt', type: 'file', size: 3 });
    expect(await statWorkspacePath(root, 'l', { followSymlinks: false })).toMatchObject({ path: 'l', type: 'symlink' });
    expect(await statWorkspacePath(root, '')).toMatchObject({ path: '.', type: 'directory' });
  });

  it('hashes a file inside the workspace', async () => {
    await put('a.txt', 'abc');
    expect(await hashWorkspaceFile(root, 'a.txt')).toEqual({
      path: 'a.txt',
      size: 3,
      sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    });
  });
});

describe('descriptors', () => {
  // Descriptors are plain numbers now: one left open leaks for good, one closed twice may close a number
  // something else has been given meanwhile. Every outcome must leave the table as it found it.
  const openDescriptors = () => readdirSync('/proc/self/fd').length;

  const outcomes: [string, () => Promise<unknown>][] = [
    ['a read', () => readWorkspaceFile(root, 'dir/file.txt', { maxBytes: 100 })],
    ['a read from line 2', () => readWorkspaceFile(root, 'dir/file.txt', { maxBytes: 100, offset: 2 })],
    ['a read through a symlink', () => readWorkspaceFile(root, 'link', { maxBytes: 100 })],
    ['a read of a binary file', () => readWorkspaceFile(root, 'bin', { maxBytes: 100 })],
    ['a read of a directory', () => readWorkspaceFile(root, 'dir', { maxBytes: 100 })],
    ['a read of a missing file', () => readWorkspaceFile(root, 'dir/missing', { maxBytes: 100 })],
    ['a read through a file as if a directory', () => readWorkspaceFile(root, 'dir/file.txt/x', { maxBytes: 100 })],
    ['a read escaping through a symlink', () => readWorkspaceFile(root, 'escape/passwd', { maxBytes: 100 })],
    ['a read through ..', () => readWorkspaceFile(root, 'dir/../dir/file.txt', { maxBytes: 100 })],
    ['a hash', () => hashWorkspaceFile(root, 'dir/file.txt')],
    ['a listing', () => listWorkspace(root, '', { recursive: true, limit: 100 })],
    ['a blocking listing', () => listWorkspace(root, 'dir', { recursive: true, limit: 100, blocking: true })],
    ['a listing with details', () => listWorkspace(root, '', { recursive: true, limit: 100, details: true })],
    ['a stat of the root', () => statWorkspacePath(root, '.')],
    ['a stat of a symlink', () => statWorkspacePath(root, 'link', { followSymlinks: false })],
    ['a cwd', () => resolveWorkspaceDirectory(root, 'dir/')],
    ['a write creating directories', () => writeWorkspaceFile(root, 'new/deep/file.txt', Buffer.from('x'), { createDirs: true })],
    ['a write over a directory', () => writeWorkspaceFile(root, 'dir', Buffer.from('x'))],
    ['a recursive delete', () => deleteWorkspacePath(root, 'gone', { recursive: true })],
    ['a delete of the root', () => deleteWorkspacePath(root, '.')],
  ];

  it.each(outcomes)('%s leaves no descriptor open', async (_, run) => {
    await put('dir/file.txt', 'one\ntwo\n');
    await put('bin', Buffer.from([0, 1, 2]));
    await put('gone/a/b.txt', 'b');
    await symlink('dir/file.txt', join(root, 'link'));
    await symlink('/etc', join(root, 'escape'));
    const before = openDescriptors();
    await run().catch(() => undefined);
    expect(openDescriptors()).toBe(before);
  });

  it('reads the same with blocking calls as with the event loop', async () => {
    await put('dir/file.txt', lines(30));
    const opts = { maxBytes: 40, offset: 3, limit: 5 };
    const blocking = await readWorkspaceFile(root, 'dir/file.txt', { ...opts, io: blockingIo });
    expect(blocking).toEqual(await readWorkspaceFile(root, 'dir/file.txt', opts));
    expect(blocking.content).toBe('line 3\nline 4\nline 5\nline 6\nline 7\n');
  });
});

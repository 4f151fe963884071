import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync } from 'node:fs';
import { blockingIo } from './descriptor-io.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';
import { readWorkspaceFile, writeWorkspaceFile, WorkspaceFsError } from './workspace-fs.js';

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

import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { editWorkspaceFile } from './workspace-file.editor.js';
import { moveWorkspaceEntry } from './workspace-entry.mover.js';
import { deleteWorkspacePath, listWorkspace, readWorkspaceFile, statWorkspacePath, writeWorkspaceFile } from './workspace-fs.js';
import { searchWorkspace } from './workspace-search.js';

// Names a command can create that are not UTF-8, given to the kernel as bytes.
let base: string;
let root: string;
const at = (...parts: (string | number[])[]) =>
  Buffer.concat([Buffer.from(`${root}/`), ...parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))]);
const names = (dir: Buffer | string) => readdirSync(dir, { encoding: 'buffer' }).map((n) => n.toString('hex'));
const hex = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => Buffer.from(p as string))).toString('hex');

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-names-')));
  root = join(base, 'ws');
  mkdirSync(root);
  writeFileSync(at('bad', [0xff], '.txt'), 'bytes\n');
  mkdirSync(at('dir', [0xfe]));
  writeFileSync(at('dir', [0xfe], '/in', [0x80], '%.txt'), 'inner needle\n');
  writeFileSync(join(root, 'ok.txt'), 'plain needle\n');
});

afterEach(() => rm(base, { recursive: true, force: true }));

describe('entries whose names are not UTF-8', () => {
  it.each([false, true])('lists them escaped with a flag, recursively too (details: %s)', async (details) => {
    const listing = await listWorkspace(root, '', { recursive: true, limit: 100, details });
    expect(listing.entries.map(({ name, path, type, escapedName }) => ({ name, path, type, escapedName }))).toEqual([
      { name: 'bad%FF.txt', path: 'bad%FF.txt', type: 'file', escapedName: true },
      { name: 'dir%FE', path: 'dir%FE', type: 'directory', escapedName: true },
      { name: 'in%80%25.txt', path: 'dir%FE/in%80%25.txt', type: 'file', escapedName: true },
      { name: 'ok.txt', path: 'ok.txt', type: 'file', escapedName: undefined },
    ]);
    if (details) expect(listing.entries[0]).toMatchObject({ size: 6 });
    // The blocking walk (worker threads) lists them the same way.
    expect((await listWorkspace(root, '', { recursive: true, limit: 100, details, blocking: true })).entries).toEqual(listing.entries);
  });

  it('reads, stats and lists through the escaped path, and reports that path back', async () => {
    expect(await readWorkspaceFile(root, 'bad%FF.txt', { maxBytes: 100 })).toMatchObject({ path: 'bad%FF.txt', content: 'bytes\n' });
    expect(await readWorkspaceFile(root, 'dir%FE/in%80%25.txt', { maxBytes: 100 })).toMatchObject({
      path: 'dir%FE/in%80%25.txt',
      content: 'inner needle\n',
    });
    expect(await statWorkspacePath(root, '/' + root.slice(1) + '/dir%FE')).toMatchObject({ path: 'dir%FE', type: 'directory' });
    expect((await listWorkspace(root, 'dir%FE', { limit: 10 })).entries).toEqual([
      { name: 'in%80%25.txt', path: 'dir%FE/in%80%25.txt', type: 'file', escapedName: true },
    ]);
  });

  it('finds them by search, with the escaped path flagged', async () => {
    const result = await searchWorkspace(root, '', { pattern: 'needle', maxResults: 10, contextLines: 0, maxFileBytes: 1000 });
    expect(result.matches).toEqual([
      { path: 'dir%FE/in%80%25.txt', line: 1, text: 'inner needle', escapedPath: true },
      { path: 'ok.txt', line: 1, text: 'plain needle' },
    ]);
  });

  it('reaches a literal name that looks like an escape as written, and the bytes only when it does not exist', async () => {
    writeFileSync(join(root, 'bad%FF.txt'), 'literal\n');
    expect(await readWorkspaceFile(root, 'bad%FF.txt', { maxBytes: 100 })).toMatchObject({ content: 'literal\n' });
    await deleteWorkspacePath(root, 'bad%FF.txt');
    expect(existsSync(join(root, 'bad%FF.txt'))).toBe(false);
    expect(await readWorkspaceFile(root, 'bad%FF.txt', { maxBytes: 100 })).toMatchObject({ content: 'bytes\n' });
  });

  it('never takes another spelling of the escape, nor one that spells a UTF-8 name', async () => {
    for (const path of ['bad%ff.txt', '%62ad%FF.txt', 'ok%2Etxt', '%2E%2E/ws/ok.txt']) {
      await expect(readWorkspaceFile(root, path, { maxBytes: 100 })).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('deletes them, a directory holding them included, and moves them to a UTF-8 name', async () => {
    expect(await moveWorkspaceEntry(root, 'bad%FF.txt', 'good.txt')).toMatchObject({ source: 'bad%FF.txt', destination: 'good.txt' });
    expect(readFileSync(join(root, 'good.txt'), 'utf8')).toBe('bytes\n');
    expect(await deleteWorkspacePath(root, 'dir%FE', { recursive: true })).toEqual({ path: 'dir%FE', type: 'directory' });
    expect(names(root).sort()).toEqual([hex('good.txt'), hex('ok.txt')]);
  });

  it('deletes the directory a path ending in .. leads to by its own bytes', async () => {
    mkdirSync(at('dir', [0xfe], '/sub'));
    await expect(deleteWorkspacePath(root, 'dir%FE/sub/..', { recursive: true })).resolves.toEqual({ path: 'dir%FE', type: 'directory' });
    expect(existsSync(at('dir', [0xfe]))).toBe(false);
  });

  it('follows a symlink whose target is not UTF-8, inside the workspace only', async () => {
    symlinkSync(Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74, 0x78, 0x74]), join(root, 'link'));
    expect(await readWorkspaceFile(root, 'link', { maxBytes: 100 })).toMatchObject({ path: 'bad%FF.txt', content: 'bytes\n' });
    symlinkSync(Buffer.concat([Buffer.from(`${base}/`), Buffer.from([0xff])]), join(root, 'out'));
    writeFileSync(Buffer.concat([Buffer.from(`${base}/`), Buffer.from([0xff])]), 'outside');
    await expect(readWorkspaceFile(root, 'out', { maxBytes: 100 })).rejects.toMatchObject({ code: 'path_outside_workspace' });
  });

  it('refuses to write, edit or move onto them by the escaped name, and creates nothing', async () => {
    const before = names(root).sort();
    await expect(writeWorkspaceFile(root, 'bad%FF.txt', Buffer.from('x'))).rejects.toMatchObject({
      code: 'invalid_path',
      message: expect.stringContaining('not UTF-8'),
    });
    await expect(
      editWorkspaceFile(root, 'bad%FF.txt', { maxBytes: 100 }, (text) => ({ text: `${text}!`, value: null })),
    ).rejects.toMatchObject({
      code: 'invalid_path',
    });
    await expect(moveWorkspaceEntry(root, 'ok.txt', 'bad%FF.txt', { overwrite: true })).rejects.toMatchObject({ code: 'invalid_path' });
    expect(names(root).sort()).toEqual(before);
    expect(readFileSync(at('bad', [0xff], '.txt'), 'utf8')).toBe('bytes\n');
    // Writing inside a directory so named is reaching it, not naming anything new that way.
    expect(await writeWorkspaceFile(root, 'dir%FE/new.txt', Buffer.from('n'))).toMatchObject({ path: 'dir%FE/new.txt', created: true });
    expect(readFileSync(at('dir', [0xfe], '/new.txt'), 'utf8')).toBe('n');
  });
});

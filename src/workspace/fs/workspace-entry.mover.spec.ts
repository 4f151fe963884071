import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { moveWorkspaceEntry } from './workspace-entry.mover.js';

let base: string;
let root: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-move-')));
  root = join(base, 'ws');
  await mkdir(join(root, 'dir'), { recursive: true });
  await writeFile(join(root, 'a.txt'), 'a');
});

afterEach(() => rm(base, { recursive: true, force: true }));

describe('moveWorkspaceEntry', () => {
  it('leaves a file moved onto itself as it was', async () => {
    expect(await moveWorkspaceEntry(root, 'a.txt', './a.txt')).toMatchObject({ source: 'a.txt', destination: 'a.txt', overwritten: false });
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('a');
  });

  it('will not put a file in place of a directory, or a directory in place of a file, even with overwrite', async () => {
    await expect(moveWorkspaceEntry(root, 'a.txt', 'dir', { overwrite: true })).rejects.toMatchObject({
      code: 'is_directory',
      message: expect.stringContaining('give the full destination path'),
    });
    await expect(moveWorkspaceEntry(root, 'dir', 'a.txt', { overwrite: true })).rejects.toMatchObject({ code: 'not_a_directory' });
    expect((await readdir(root)).sort()).toEqual(['a.txt', 'dir']);
  });

  it('replaces an empty directory with overwrite', async () => {
    await mkdir(join(root, 'src'));
    await writeFile(join(root, 'src', 'x.ts'), 'x');
    expect(await moveWorkspaceEntry(root, 'src', 'dir', { overwrite: true })).toMatchObject({ type: 'directory', overwritten: true });
    expect(await readdir(join(root, 'dir'))).toEqual(['x.ts']);
  });

  it('refuses a destination path ending in a slash that names no directory', async () => {
    await expect(moveWorkspaceEntry(root, 'a.txt', 'nowhere/')).rejects.toMatchObject({ code: 'not_found' });
  });
});

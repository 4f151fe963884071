import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { link, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';
import {
  deleteWorkspacePath,
  hashWorkspaceFile,
  listWorkspace,
  readWorkspaceFile,
  writeWorkspaceFile,
  WorkspaceFsError,
} from './workspace-fs.js';
import { expectOutcome, expectRefused, snapshot, swapForSymlink } from '../../../test/support/workspace-fs-attacks.js';

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'toolgate-sec-')));
  root = join(base, 'ws');
  outside = join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'OUTSIDE SECRET\n');
  await writeFile(join(root, 'inside.txt'), 'inside\n');
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const read = (p: string) => readWorkspaceFile(root, p, { maxBytes: 4096 });
const write = (p: string, text = 'pwned', createDirs = false) => writeWorkspaceFile(root, p, Buffer.from(text), { createDirs });

// What the disk holds under a path, rather than how the path is spelled: a parent swapped for a symlink
// mid-call, hard links to outside files, special files, symlink loops.
describe('workspace paths: hostile entries', () => {
  it('[sec-07] never touches outside files while the parent directory is swapped for a symlink', async () => {
    const dir = join(root, 'dir');
    await mkdir(dir);
    await writeFile(join(dir, 'r.txt'), 'inside');
    await writeFile(join(outside, 'w.txt'), 'OUTSIDE ORIGINAL');
    await writeFile(join(outside, 'r.txt'), 'OUTSIDE SECRET');
    const before = await snapshot(outside);

    const swap = swapForSymlink(dir, outside);

    let written = 0;
    let refused = 0;
    const writer = async () => {
      while (swap.running()) {
        try {
          await write('dir/w.txt', 'written by the gateway');
          written++;
        } catch (err) {
          if (!(err instanceof AppError || err instanceof WorkspaceFsError)) throw err;
          refused++;
        }
      }
    };
    const reader = async () => {
      while (swap.running()) {
        try {
          expect((await read('dir/r.txt')).content).toBe('inside');
        } catch (err) {
          if (!(err instanceof AppError || err instanceof WorkspaceFsError)) throw err;
        }
      }
    };
    await Promise.all([writer(), writer(), writer(), reader()]);
    await swap.exited;

    // Both sides of the race were exercised: some writes landed inside, some met the symlink.
    expect(written).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    expect(await snapshot(outside)).toEqual(before);
    expect(await readFile(join(outside, 'w.txt'), 'utf8')).toBe('OUTSIDE ORIGINAL');
  }, 20_000);

  it('[sec-07] never lists an outside name while a subdirectory is swapped for a symlink', async () => {
    const dir = join(root, 'dir');
    await mkdir(join(dir, 'deeper'), { recursive: true });
    await writeFile(join(dir, 'deeper', 'inside-only.txt'), 'inside');
    await mkdir(join(outside, 'deeper'));
    await writeFile(join(outside, 'deeper', 'outside-only.txt'), 'OUTSIDE');

    const swap = swapForSymlink(dir, outside);

    const seen = new Set<string>();
    let sawInside = 0;
    let sawLink = 0;
    const lister = async (details: boolean, blocking: boolean) => {
      while (swap.running()) {
        try {
          const listing = await listWorkspace(root, '', { recursive: true, includeHidden: true, limit: 1000, details, blocking });
          for (const e of listing.entries) seen.add(e.name);
          if (listing.entries.some((e) => e.path === 'dir/deeper/inside-only.txt')) sawInside++;
          if (listing.entries.some((e) => e.path === 'dir' && e.type === 'symlink')) sawLink++;
        } catch (err) {
          if (!(err instanceof AppError || err instanceof WorkspaceFsError)) throw err;
        }
        // Blocking walks hold the loop: let the swapper's exit be seen.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await Promise.all([lister(false, false), lister(false, true), lister(true, false), lister(true, true)]);
    await swap.exited;

    // Both sides of the race were listed, and nothing from outside ever was.
    expect(sawInside).toBeGreaterThan(0);
    expect(sawLink).toBeGreaterThan(0);
    expect(seen.has('outside-only.txt')).toBe(false);
    expect(seen.has('secret.txt')).toBe(false);
  }, 20_000);

  it('[sec-08] refuses to write or delete a file hard-linked to a file outside', async () => {
    await link(join(outside, 'secret.txt'), join(root, 'hard'));
    await mkdir(join(root, 'tree'));
    await link(join(outside, 'secret.txt'), join(root, 'tree', 'hard'));
    await writeFile(join(root, 'tree', 'plain.txt'), 'plain');

    await expectRefused(write('hard'), 'hard_link');
    await expectRefused(deleteWorkspacePath(root, 'hard'), 'hard_link');
    await expectRefused(deleteWorkspacePath(root, 'tree', { recursive: true }), 'hard_link');

    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
    expect((await stat(join(outside, 'secret.txt'))).nlink).toBe(3);
    expect(await readdir(join(root, 'tree'))).toEqual(['hard', 'plain.txt']);
  });

  describe('[sec-14] special files', () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    it('[sec-14] refuses to read or write a FIFO, directly or through a symlink, without blocking', async () => {
      execFileSync('mkfifo', [join(root, 'pipe')]);
      await symlink('pipe', join(root, 'pipe-link'));
      const started = Date.now();
      await expectRefused(read('pipe'), 'special_file');
      await expectRefused(read('pipe-link'), 'special_file');
      await expectRefused(readWorkspaceFile(root, 'pipe', { maxBytes: 10, encoding: 'base64' }), 'special_file');
      await expectRefused(hashWorkspaceFile(root, 'pipe'), 'special_file');
      await expectRefused(write('pipe'), 'special_file');
      expect(Date.now() - started).toBeLessThan(2000);
      expect((await stat(join(root, 'pipe'))).isFIFO()).toBe(true);
    });

    it('[sec-14] refuses to read a unix socket', async () => {
      const socketPath = join(root, 'sock');
      server = createServer();
      await new Promise<void>((resolve) => server!.listen(socketPath, resolve));
      const err = await expectRefused(read('sock'), 'special_file');
      expect(err.message).toContain('socket');
      await expectRefused(write('sock'), 'special_file');
    });

    it('[sec-14] refuses a device node in the workspace and a symlink to one outside', async () => {
      await symlink('/dev/zero', join(root, 'zero'));
      await expectRefused(read('zero'), 'path_outside_workspace');
      let made = true;
      try {
        execFileSync('mknod', [join(root, 'null-dev'), 'c', '1', '3'], { stdio: 'ignore' });
      } catch {
        made = false; // creating device nodes needs CAP_MKNOD
      }
      if (made) {
        const err = await expectRefused(read('null-dev'), 'special_file');
        expect(err.message).toContain('device');
        await expectRefused(write('null-dev'), 'special_file');
      }
    });

    it('[sec-14] caps what a read returns from a large file', async () => {
      await writeFile(join(root, 'big.txt'), 'x'.repeat(3 * 1024 * 1024));
      const result = await readWorkspaceFile(root, 'big.txt', { maxBytes: 1000 });
      expect(Buffer.byteLength(result.content)).toBeLessThanOrEqual(1000);
      expect(result.truncated).toBe(true);
      const b64 = await readWorkspaceFile(root, 'big.txt', { maxBytes: 1000, encoding: 'base64' });
      expect(b64.content.length).toBeLessThanOrEqual(1000);
      expect(b64.truncated).toBe(true);
    });
  });

  it('[sec-16] finishes a recursive listing over symlink loops without following them', async () => {
    await mkdir(join(root, 'a', 'b'), { recursive: true });
    await symlink('..', join(root, 'a', 'b', 'up'));
    await symlink('.', join(root, 'self'));
    await symlink('l2', join(root, 'l1'));
    await symlink('l1', join(root, 'l2'));
    // Types from the directory read, and from an lstat per entry (details).
    for (const details of [false, true]) {
      const result = await listWorkspace(root, '', { recursive: true, limit: 1000, details });
      expect(result.truncated).toBe(false);
      expect(result.entries.map((e) => `${e.path}:${e.type}`)).toEqual([
        'a:directory',
        'a/b:directory',
        'a/b/up:symlink',
        'inside.txt:file',
        'l1:symlink',
        'l2:symlink',
        'self:symlink',
      ]);
    }
    await expectOutcome(read('l1'), 'symlink_loop');
    const bounded = await listWorkspace(root, '', { recursive: true, limit: 3 });
    expect(bounded.entries).toHaveLength(3);
    expect(bounded.truncated).toBe(true);
  });
});

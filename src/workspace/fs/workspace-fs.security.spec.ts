import { spawn, execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { link, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
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

// A separate process swaps `dir` for a symlink to `outside` and back for 1.5 s, so the swaps race the
// gateway's calls for real.
function swapForSymlink(dir: string, target: string): { running(): boolean; exited: Promise<unknown> } {
  const swapper = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('node:fs');
       const [dir, outside] = process.argv.slice(1);
       const end = Date.now() + 1500;
       while (Date.now() < end) {
         try { fs.renameSync(dir, dir + '.real'); fs.symlinkSync(outside, dir); } catch {}
         try { fs.unlinkSync(dir); fs.renameSync(dir + '.real', dir); } catch {}
       }
       try { fs.unlinkSync(dir); } catch {}
       try { fs.renameSync(dir + '.real', dir); } catch {}`,
      dir,
      target,
    ],
    { stdio: 'ignore' },
  );
  let running = true;
  const exited = new Promise((resolve) => swapper.on('exit', resolve)).then(() => (running = false));
  return { running: () => running, exited };
}

const read = (p: string) => readWorkspaceFile(root, p, { maxBytes: 4096 });
const write = (p: string, text = 'pwned', createDirs = false) =>
  writeWorkspaceFile(root, p, Buffer.from(text), { createDirs });

async function expectRefused(promise: Promise<unknown>, code: string, status = 403): Promise<AppError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected a refusal with ${code}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect(err).toMatchObject({ code, status });
  return err as AppError;
}

async function expectOutcome(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(WorkspaceFsError);
  await expect(promise).rejects.toMatchObject({ code });
}

// Every file below `dir` with its content and mtime, to prove nothing outside was touched.
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name);
    const s = await stat(full).catch(() => null);
    out[full] = entry.isFile() ? `${await readFile(full, 'utf8')}@${s?.mtimeMs}` : entry.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

describe('workspace paths: hostile inputs', () => {
  it('[sec-01] refuses ../ traversal for every operation', async () => {
    const before = await snapshot(base);
    await expectRefused(read('../../etc/passwd'), 'path_outside_workspace');
    await expectRefused(read('../outside/secret.txt'), 'path_outside_workspace');
    await expectRefused(read('sub/../../outside/secret.txt'), 'path_outside_workspace');
    await expectRefused(write('../escaped.txt'), 'path_outside_workspace');
    await expectRefused(write('new/../../escaped.txt', 'x', true), 'path_outside_workspace');
    await expectRefused(deleteWorkspacePath(root, '../outside/secret.txt'), 'path_outside_workspace');
    await expectRefused(listWorkspace(root, '..', { limit: 10 }), 'path_outside_workspace');
    await expectRefused(resolveWorkspaceDirectory(root, '../outside'), 'path_outside_workspace');
    expect(await snapshot(base)).toEqual(before);
  });

  it('[sec-01] names the path and the rule in the refusal, without the host path of the target', async () => {
    const err = await expectRefused(read('../outside/secret.txt'), 'path_outside_workspace');
    expect(err.message).toContain("'../outside/secret.txt'");
    expect(err.message).toContain('inside the project workspace');
    expect(err.message).not.toContain(base);
  });

  it('[sec-02] refuses an absolute path outside the workspace and accepts one inside it', async () => {
    await expectRefused(read('/etc/passwd'), 'path_outside_workspace');
    await expectRefused(read(join(outside, 'secret.txt')), 'path_outside_workspace');
    await expectRefused(read(`${root}/../outside/secret.txt`), 'path_outside_workspace');
    await expectRefused(write('/tmp/toolgate-escape.txt'), 'path_outside_workspace');
    expect(existsSync('/tmp/toolgate-escape.txt')).toBe(false);

    expect((await read(join(root, 'inside.txt'))).content).toBe('inside\n');
    expect(await write(`${root}/abs.txt`, 'abs')).toMatchObject({ path: 'abs.txt', created: true });
    expect(await readFile(join(root, 'abs.txt'), 'utf8')).toBe('abs');
    expect(await resolveWorkspaceDirectory(root, root)).toBe(root);
  });

  it('[sec-03] refuses a sibling directory that shares the workspace prefix', async () => {
    for (const [i, sibling] of [`${root}-evil`, `${root}2`, `${root}.bak`].entries()) {
      await mkdir(sibling);
      await writeFile(join(sibling, 'x'), 'SIBLING');
      await expectRefused(read(`${sibling}/x`), 'path_outside_workspace');
      await expectRefused(write(`${sibling}/x`), 'path_outside_workspace');
      await expectRefused(write(`${sibling}/new`), 'path_outside_workspace');
      await expectRefused(deleteWorkspacePath(root, `${sibling}/x`), 'path_outside_workspace');
      await symlink(`${sibling}/x`, join(root, `to-sibling-${i}`));
      expect(await readFile(join(sibling, 'x'), 'utf8')).toBe('SIBLING');
      expect(existsSync(join(sibling, 'new'))).toBe(false);
    }
    for (const name of await readdir(root)) {
      if (name.startsWith('to-')) await expectRefused(read(name), 'path_outside_workspace');
    }
  });

  it('[sec-04] refuses to read through a symlink to a file outside', async () => {
    await symlink(join(outside, 'secret.txt'), join(root, 'abs-link'));
    await symlink('../outside/secret.txt', join(root, 'rel-link'));
    await symlink('abs-link', join(root, 'chained-link'));
    for (const name of ['abs-link', 'rel-link', 'chained-link']) {
      await expectRefused(read(name), 'path_outside_workspace');
      await expectRefused(hashWorkspaceFile(root, name), 'path_outside_workspace');
      await expectRefused(statWorkspacePath(root, name), 'path_outside_workspace');
    }
    await symlink('inside.txt', join(root, 'good-link'));
    expect(await read('good-link')).toMatchObject({ path: 'inside.txt', content: 'inside\n' });
  });

  it('[sec-05] refuses to write through a symlinked directory that points outside; nothing is created', async () => {
    await symlink(outside, join(root, 'link'));
    await symlink('../outside', join(root, 'rel-link'));
    const before = await snapshot(outside);
    await expectRefused(write('link/new.txt'), 'path_outside_workspace');
    await expectRefused(write('link/deep/new.txt', 'x', true), 'path_outside_workspace');
    await expectRefused(write('rel-link/new.txt'), 'path_outside_workspace');
    await expectRefused(write('link/secret.txt'), 'path_outside_workspace');
    await expectRefused(deleteWorkspacePath(root, 'link/secret.txt'), 'path_outside_workspace');
    await expectRefused(listWorkspace(root, 'link', { limit: 10 }), 'path_outside_workspace');
    await expectRefused(resolveWorkspaceDirectory(root, 'link'), 'path_outside_workspace');
    expect(await snapshot(outside)).toEqual(before);
  });

  it('[sec-06] refuses to write through a dangling symlink; nothing is created outside or inside', async () => {
    await symlink(join(outside, 'created.txt'), join(root, 'dangling-abs'));
    await symlink('../outside/created.txt', join(root, 'dangling-rel'));
    await symlink(join(base, 'nowhere', 'x.txt'), join(root, 'dangling-deep'));
    await symlink('missing-inside.txt', join(root, 'dangling-inside'));
    await expectRefused(write('dangling-abs'), 'path_outside_workspace');
    await expectRefused(write('dangling-rel'), 'path_outside_workspace');
    await expectRefused(write('dangling-deep', 'x', true), 'path_outside_workspace');
    await expectRefused(write('dangling-inside'), 'dangling_symlink');
    expect(existsSync(join(outside, 'created.txt'))).toBe(false);
    expect(existsSync(join(base, 'nowhere'))).toBe(false);
    expect(existsSync(join(root, 'missing-inside.txt'))).toBe(false);
  });

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

  it('[sec-09] refuses a NUL byte in a path for every operation', async () => {
    for (const p of ['a\0b', 'inside.txt\0.png', '\0']) {
      await expectRefused(read(p), 'invalid_path', 400);
      await expectRefused(write(p), 'invalid_path', 400);
      await expectRefused(deleteWorkspacePath(root, p), 'invalid_path', 400);
      await expectRefused(listWorkspace(root, p, { limit: 5 }), 'invalid_path', 400);
      await expectRefused(resolveWorkspaceDirectory(root, p), 'invalid_path', 400);
    }
    const err = await expectRefused(read('a\0b'), 'invalid_path', 400);
    expect(err.message).toContain('NUL byte');
  });

  it('[sec-10] treats backslash and drive-letter paths as literal names on POSIX', async () => {
    const before = await snapshot(base);
    for (const name of ['..\\..\\x', 'C:\\Windows\\x', '..\\outside\\secret.txt']) {
      expect(await write(name, name)).toMatchObject({ path: name, created: true });
      expect(await readFile(join(root, name), 'utf8')).toBe(name);
      expect((await read(name)).content).toBe(name);
    }
    const added = Object.keys(await snapshot(base)).filter((p) => !(p in before));
    expect(added.every((p) => p.startsWith(`${root}/`))).toBe(true);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
  });

  it('[sec-11] never decodes percent-encoded traversal', async () => {
    await expectOutcome(read('..%2foutside%2fsecret.txt'), 'not_found');
    await expectOutcome(read('%2e%2e/outside/secret.txt'), 'not_found');
    await expectOutcome(read('%252e%252e/%252e%252e/etc/passwd'), 'not_found');
    expect(await write('%2e%2e/x.txt', 'x', true)).toMatchObject({ path: '%2e%2e/x.txt' });
    expect(await write('..%2f..%2fx', 'x')).toMatchObject({ path: '..%2f..%2fx' });
    expect(existsSync(join(root, '%2e%2e', 'x.txt'))).toBe(true);
    expect(existsSync(join(base, 'x.txt'))).toBe(false);
  });

  it('[sec-12] treats fullwidth dots and slashes, and NFD versus NFC spellings, as literal names', async () => {
    const fullwidth = '．．／．．／x';
    expect(await write(fullwidth, 'fw')).toMatchObject({ path: fullwidth });
    expect(await write('．．/y.txt', 'fw', true)).toMatchObject({ path: '．．/y.txt' });
    expect(existsSync(join(root, '．．', 'y.txt'))).toBe(true);

    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    await write(nfc, 'nfc');
    await write(nfd, 'nfd');
    expect((await read(nfc)).content).toBe('nfc');
    expect((await read(nfd)).content).toBe('nfd');
    await expectRefused(read('\uff0e\uff0e/../../outside/secret.txt'), 'path_outside_workspace');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE SECRET\n');
  });

  it('[sec-13] refuses an 8 KiB path and 2,000 segments with a 4xx, not a crash', async () => {
    const long = 'a'.repeat(8 * 1024);
    const many = Array.from({ length: 2000 }, () => 'a').join('/');
    const longSegment = 'b'.repeat(300);
    for (const p of [long, many, `dir/${longSegment}`]) {
      await expectRefused(read(p), 'invalid_path', 400);
      await expectRefused(write(p), 'invalid_path', 400);
      await expectRefused(deleteWorkspacePath(root, p), 'invalid_path', 400);
      await expectRefused(listWorkspace(root, p, { limit: 5 }), 'invalid_path', 400);
    }
    expect((await expectRefused(read(long), 'invalid_path', 400)).message).toContain('4096');
    expect((await expectRefused(read(many), 'invalid_path', 400)).message).toContain('2000 segments');
    expect((await expectRefused(read(`dir/${longSegment}`), 'invalid_path', 400)).message).toContain('255 bytes');
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

  it('[sec-15] refuses to delete the workspace root however it is spelled', async () => {
    await mkdir(join(root, 'a'));
    await symlink('.', join(root, 'self'));
    for (const p of ['.', './', 'a/..', root, `${root}/`, `${root}/.`, 'self/.', 'a/../.']) {
      await expectRefused(deleteWorkspacePath(root, p, { recursive: true }), 'workspace_root');
    }
    await expectRefused(deleteWorkspacePath(root, '', { recursive: true }), 'invalid_path', 400);
    await expectRefused(deleteWorkspacePath(root, '/', { recursive: true }), 'path_outside_workspace');
    expect(existsSync(join(root, 'inside.txt'))).toBe(true);
    // The link itself is an ordinary entry: deleting it removes the link only.
    expect(await deleteWorkspacePath(root, 'self')).toEqual({ path: 'self', type: 'symlink' });
    expect(existsSync(join(root, 'inside.txt'))).toBe(true);
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

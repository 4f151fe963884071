import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../src/common/errors/app-error.js';
import { WorkspaceFsError } from '../../src/workspace/fs/workspace-fs.js';

// What the confined file system's security suites share (src/workspace/fs/workspace-fs.security*.spec.ts).

// A separate process swaps `dir` for a symlink to `outside` and back for 1.5 s, so the swaps race the
// gateway's calls for real.
export function swapForSymlink(dir: string, target: string): { running(): boolean; exited: Promise<unknown> } {
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

export async function expectRefused(promise: Promise<unknown>, code: string, status = 403): Promise<AppError> {
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

export async function expectOutcome(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(WorkspaceFsError);
  await expect(promise).rejects.toMatchObject({ code });
}

// Every file below `dir` with its content and mtime, to prove nothing outside was touched.
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const full = join(entry.parentPath, entry.name);
    const s = await stat(full).catch(() => null);
    out[full] = entry.isFile() ? `${await readFile(full, 'utf8')}@${s?.mtimeMs}` : entry.isDirectory() ? 'dir' : 'other';
  }
  return out;
}

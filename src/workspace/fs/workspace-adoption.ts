import { constants } from 'node:fs';
import { lchown, lstat, open, readdir, type FileHandle } from 'node:fs/promises';
import type { Owner } from './inherited-owner.js';

// Deeper directories are left as they are (and logged by the caller): a path holds at most 4096 bytes.
const MAX_DEPTH = 2048;

// Hands a workspace that belonged to `from` (SANDBOX_UID, before tenants had uids of their own) to the
// tenant's uid: every entry owned by `from` takes `to`, the directory itself last, so an adoption cut off
// halfway is made again on the next resolution. Each directory is opened without following a symlink and
// its entries are reached through its descriptor (/proc/self/fd/N/name), never by a path a command could
// swap; lchown changes a symlink itself, never its target. Names are bytes: not every name is UTF-8.
// Answers how many entries changed owner.
export async function adoptWorkspace(dir: string, from: number, to: Owner): Promise<number> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const changed = await adoptEntries(handle, from, to, 0);
    const own = await handle.stat();
    if (own.uid !== from) return changed;
    await handle.chown(to.uid, to.gid);
    return changed + 1;
  } finally {
    await handle.close();
  }
}

async function adoptEntries(dir: FileHandle, from: number, to: Owner, depth: number): Promise<number> {
  let changed = 0;
  const base = Buffer.from(`/proc/self/fd/${dir.fd}/`);
  for (const name of await readdir(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' })) {
    const entry = Buffer.concat([base, name]);
    const stat = await lstat(entry).catch(() => undefined);
    // Gone meanwhile.
    if (!stat) continue;
    if (stat.isDirectory() && depth < MAX_DEPTH) {
      const child = await open(entry, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => undefined);
      if (child) {
        try {
          changed += await adoptEntries(child, from, to, depth + 1);
        } finally {
          await child.close();
        }
      }
    }
    if (stat.uid === from) {
      await lchown(entry, to.uid, to.gid).catch(() => undefined);
      changed++;
    }
  }
  return changed;
}

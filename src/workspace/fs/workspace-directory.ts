import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { fdPath, O_PATH } from './workspace-path.resolver.js';

// Checks of a workspace directory itself (not of paths inside it), made on what the kernel opened.
//
// A workspace path is stored canonical: absolute, normalized, no symlink in any component. The checks below
// hold a directory to that: it is opened, and the kernel's own account of where the descriptor points
// (/proc/self/fd) must be the very string we stored. A component swapped for a symlink (to `/`, to another
// workspace) makes the opened directory's real path differ, so the check fails however the swap was made.

export type DirectoryProblem =
  | { kind: 'missing'; detail: string }
  | { kind: 'symlink'; detail: string }
  | { kind: 'not_directory'; detail: string }
  | { kind: 'owner'; detail: string };

// A normalized absolute path: no '.', '..', repeated or trailing '/', no NUL. Anything else is refused
// rather than normalized, so that what is checked is exactly what was written.
export function isCanonicalAbsolute(p: string): boolean {
  if (!p.startsWith('/') || p.includes('\0')) return false;
  if (p === '/') return true;
  return path.posix.normalize(p) === p && !p.endsWith('/');
}

// Opens `dir` (canonical) and checks, on the descriptor: the kernel says it is at `dir`, it is a directory,
// and its owner is one of `owners` (the service's uid, or the uid commands run as; null: any owner, for the
// working directory the operator started the service in). Cheap enough to run on
// every call: one open, one readlink, one fstat.
export function checkDirectory(dir: string, owners: readonly number[] | null): DirectoryProblem | null {
  let fd: number;
  try {
    fd = openSync(dir, O_PATH | constants.O_DIRECTORY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return { kind: 'not_directory', detail: `${dir} is not a directory` };
    return { kind: 'missing', detail: `${dir} cannot be opened (${code ?? 'error'})` };
  }
  try {
    const real = readlinkSync(fdPath(fd));
    if (real !== dir) return { kind: 'symlink', detail: `${dir} now leads to another directory through a symlink` };
    const stat = fstatSync(fd);
    if (!stat.isDirectory()) return { kind: 'not_directory', detail: `${dir} is not a directory` };
    if (owners && !owners.includes(stat.uid))
      return { kind: 'owner', detail: `${dir} is owned by uid ${stat.uid}, not by the service or the sandbox's user` };
    return null;
  } finally {
    closeSync(fd);
  }
}

// Walks from `root` (a real path the operator configured) down to `dir`, one component at a time with
// O_NOFOLLOW, so that a symlink anywhere below the root is named rather than followed. Used when a path is
// accepted and when a resolution misses the cache; `checkDirectory` then guards every call.
export function walkWithoutSymlinks(root: string, dir: string, owners: readonly number[]): DirectoryProblem | null {
  const relative = path.posix.relative(root, dir);
  const segments = relative === '' ? [] : relative.split('/');
  if (segments[0] === '..') return { kind: 'missing', detail: `${dir} is not inside ${root}` };
  let fd: number;
  try {
    fd = openSync(root, O_PATH | constants.O_DIRECTORY);
  } catch {
    return { kind: 'missing', detail: `the root ${root} cannot be opened` };
  }
  try {
    let reached = root;
    for (const name of segments) {
      reached = path.posix.join(reached, name);
      let next: number;
      try {
        next = openSync(fdPath(fd, name), O_PATH | constants.O_NOFOLLOW);
      } catch (err) {
        return { kind: 'missing', detail: `${reached} does not exist (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
      }
      const stat = fstatSync(next);
      closeSync(fd);
      fd = next;
      if (stat.isSymbolicLink()) return { kind: 'symlink', detail: `${reached} is a symlink` };
      if (!stat.isDirectory()) return { kind: 'not_directory', detail: `${reached} is not a directory` };
    }
    if (readlinkSync(fdPath(fd)) !== dir) return { kind: 'symlink', detail: `${dir} is reached through a symlink` };
    const { uid } = fstatSync(fd);
    if (!owners.includes(uid)) return { kind: 'owner', detail: `${dir} is owned by uid ${uid}, not by the service or the sandbox's user` };
    return null;
  } finally {
    closeSync(fd);
  }
}

export const isPathInside = (root: string, candidate: string): boolean =>
  candidate === root || candidate.startsWith(root === '/' ? '/' : `${root}/`);

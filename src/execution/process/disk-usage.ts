import { close, closeSync, constants, fstat, fstatSync, lstat, lstatSync, open, openSync, readdir, readdirSync, type Stats } from 'node:fs';
import { promisify } from 'node:util';

export interface DiskUsage {
  // Space allocated to everything below the directory (st_blocks, as du counts it): a sparse file counts
  // what it holds, a preallocated one what it reserved; a file with several links counts once.
  bytes: number;
  entries: number;
  // False when directories nest deeper than MAX_USAGE_DEPTH: what lies below was not counted.
  complete: boolean;
}

// Levels of directories below the root that are walked; each holds one descriptor while its own are.
export const MAX_USAGE_DEPTH = 1024;
const STAT_BATCH = 64;
// Linux value (Node does not export it): a descriptor that names a directory without opening it.
const O_PATH = 0o10000000;
const DIRECTORY_FLAGS = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;

// Paths are Buffers below the root: a name that is not UTF-8 (a command can make one) decoded to a string
// and encoded again names another file, which would leave it, and what it holds, uncounted.
type FsPath = string | Buffer;

interface WalkIo {
  open(path: FsPath, flags: number): Promise<number> | number;
  fstat(fd: number): Promise<Stats> | Stats;
  readdir(path: FsPath): Promise<Buffer[]> | Buffer[];
  lstat(path: FsPath): Promise<Stats> | Stats;
  close(fd: number): Promise<void> | void;
}

// Blocking calls belong in a worker thread; on the event loop each goes through libuv's pool.
const blockingIo: WalkIo = {
  open: openSync,
  fstat: (fd) => fstatSync(fd),
  readdir: (p) => readdirSync(p, { encoding: 'buffer' }),
  lstat: (p) => lstatSync(p),
  close: closeSync,
};
const readdirBuffers = promisify((path: FsPath, done: (error: NodeJS.ErrnoException | null, names: Buffer[]) => void) =>
  readdir(path, { encoding: 'buffer' }, done),
);
const asyncIo: WalkIo = {
  open: (path, flags) => promisify(open)(path, flags),
  fstat: promisify(fstat),
  readdir: readdirBuffers,
  lstat: (path) => promisify(lstat)(path),
  close: promisify(close),
};

// An entry of the directory behind `fd`, reached through the descriptor rather than by a path that could
// have been swapped for a symlink since.
const fdPath = (fd: number, name?: Buffer): FsPath =>
  name === undefined ? `/proc/self/fd/${fd}` : Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);

interface Walk {
  io: WalkIo;
  dev: number;
  usage: DiskUsage;
  // Inodes with more than one link already counted.
  linked: Set<number>;
  // Once the count passes either figure the walk stops: the answer is then "at least this much".
  stopPast: { bytes: number; entries: number };
}

// Walks `root` (a workspace, real and already accepted) one directory at a time, each opened by name
// relative to its parent's descriptor without following links, so nothing outside is ever counted, however
// the tree changes meanwhile. Another file system mounted inside is left out. Cost: one lstat per entry.
//
// `stopPast`: a watchdog deciding whether a limit was passed needs no more than that, and a command that
// makes a million files must not be walked to the end before it is stopped.
export async function measureDiskUsage(
  root: string,
  opts: { blocking?: boolean; stopPast?: { bytes: number; entries: number } } = {},
): Promise<DiskUsage> {
  const io = opts.blocking ? blockingIo : asyncIo;
  const stopPast = opts.stopPast ?? { bytes: Infinity, entries: Infinity };
  const fd = await io.open(root, DIRECTORY_FLAGS);
  try {
    const stat = await io.fstat(fd);
    const walk: Walk = { io, dev: stat.dev, usage: { bytes: allocated(stat), entries: 0, complete: true }, linked: new Set(), stopPast };
    await walkDirectory(walk, fd, 0);
    return walk.usage;
  } finally {
    await io.close(fd);
  }
}

// `level`: how far below the root `dir` is (the root is 0).
async function walkDirectory(walk: Walk, dir: number, level: number): Promise<void> {
  let names: Buffer[];
  try {
    names = await walk.io.readdir(fdPath(dir));
  } catch {
    return; // removed, or unreadable: nothing more to count here
  }
  const subdirectories: Buffer[] = [];
  const passed = () => walk.usage.bytes > walk.stopPast.bytes || walk.usage.entries > walk.stopPast.entries;
  for (let i = 0; i < names.length && !passed(); i += STAT_BATCH) {
    const batch = names.slice(i, i + STAT_BATCH);
    const stats = await Promise.all(batch.map((name) => lstatOrNull(walk.io, fdPath(dir, name))));
    stats.forEach((stat, j) => {
      if (!stat || stat.dev !== walk.dev) return;
      walk.usage.entries++;
      if (stat.isDirectory()) subdirectories.push(batch[j]);
      else if (stat.nlink > 1) {
        if (walk.linked.has(stat.ino)) return;
        walk.linked.add(stat.ino);
      }
      walk.usage.bytes += allocated(stat);
    });
  }
  if (subdirectories.length > 0 && level + 1 > MAX_USAGE_DEPTH) {
    walk.usage.complete = false;
    return;
  }
  for (const name of subdirectories) {
    if (passed()) return;
    let child: number;
    try {
      // O_NOFOLLOW: a directory swapped for a symlink since it was listed is not entered.
      child = await walk.io.open(fdPath(dir, name), DIRECTORY_FLAGS);
    } catch {
      continue;
    }
    try {
      await walkDirectory(walk, child, level + 1);
    } finally {
      await walk.io.close(child);
    }
  }
}

const allocated = (stat: Stats) => stat.blocks * 512;

async function lstatOrNull(io: WalkIo, path: FsPath): Promise<Stats | null> {
  try {
    return await io.lstat(path);
  } catch {
    return null; // removed while the directory was read
  }
}

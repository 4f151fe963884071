import { constants, type Stats } from 'node:fs';
import { mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import {
  danglingSymlink,
  notADirectory,
  notFoundAt,
  outsideWorkspace,
  WorkspaceFsError,
} from './workspace-fs.error.js';
import { segmentsBelow, type ParsedPath } from './workspace-path.parser.js';

// Linux value (Node does not export it). An O_PATH descriptor pins an inode without opening it, so a FIFO
// or a device is never opened just to find out what it is.
export const O_PATH = 0o10000000;
const MAX_SYMLINK_HOPS = 40;
// Bounds the mkdir/open retries when something keeps removing the directories being created.
const MAX_CREATED_DIRS = 512;

// Every operation after the first open goes through /proc/self/fd/<fd>/<name>: the kernel starts from the
// directory we hold, so swapping a path component for a symlink afterwards changes nothing.
export const fdPath = (fd: number, name?: string): string =>
  name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;

// 'follow': the final symlink is followed (read, list, cwd). 'nofollow': the final entry itself (delete).
// 'write': like follow, but the final entry may be missing and a dangling final symlink is refused.
export type FinalMode = 'follow' | 'nofollow' | 'write';

export interface ResolveOptions {
  final: FinalMode;
  createDirs?: boolean;
}

export interface ResolvedPath {
  // Directory holding the entry; null only when the path resolves to the workspace root.
  parent: FileHandle | null;
  parentSegments: string[];
  name: string;
  // O_PATH descriptor of the entry, null when it does not exist (write mode only).
  handle: FileHandle | null;
  stat: Stats | null;
  // Real location below the root.
  segments: string[];
  close(): Promise<void>;
}

interface Directory {
  handle: FileHandle;
  segments: string[];
}

interface Pending {
  name: string;
  // Came from a symlink's target: never created, a missing one means the link dangles.
  fromLink: boolean;
}

export async function openNoFollow(path: string): Promise<FileHandle | null> {
  try {
    return await open(path, O_PATH | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

// Reads where the kernel says the descriptor really is and requires it to be the root or below it.
export async function verifiedSegments(root: string, handle: FileHandle, display: string): Promise<string[]> {
  const segments = segmentsBelow(root, await readlink(fdPath(handle.fd)));
  if (segments === null) throw outsideWorkspace(display);
  return segments;
}

async function openRoot(root: string): Promise<Directory> {
  if (process.platform !== 'linux') throw new Error('Workspace confinement needs Linux (/proc/self/fd)');
  if (!root.startsWith('/')) throw new Error('The workspace root must be an absolute, realpath\'d directory');
  let handle: FileHandle;
  try {
    handle = await open(root, O_PATH | constants.O_DIRECTORY);
  } catch {
    throw new WorkspaceFsError('not_found', 'The project workspace directory does not exist or is not accessible');
  }
  let real: string;
  try {
    real = await readlink(fdPath(handle.fd));
  } catch {
    await handle.close();
    throw new Error('Cannot read /proc/self/fd; workspace confinement needs /proc mounted');
  }
  // The root was realpath'd by the caller; if it is not where it was, do not guess.
  if (segmentsBelow(root, real)?.length !== 0) {
    await handle.close();
    throw new WorkspaceFsError('not_found', 'The project workspace directory has moved; try again');
  }
  return { handle, segments: [] };
}

const isNoop = (name: string) => name === '' || name === '.';

// Resolves one component at a time with O_NOFOLLOW, expanding symlinks itself, and checks the real path of
// every directory it opens: nothing outside the workspace is ever opened, created or traversed.
export async function resolveWorkspacePath(
  root: string,
  parsed: ParsedPath,
  options: ResolveOptions,
): Promise<ResolvedPath> {
  const { display } = parsed;
  const pending: Pending[] = parsed.segments.map((name) => ({ name, fromLink: false })).reverse();
  let current = await openRoot(root);
  let hops = 0;
  let created = 0;
  const moveTo = async (next: Directory) => {
    await current.handle.close();
    current = next;
  };
  try {
    for (;;) {
      while (pending.length && isNoop(pending[pending.length - 1].name)) pending.pop();
      const segment = pending.pop();
      if (!segment) return await resolvedDirectory(root, current, display);
      if (segment.name === '..') {
        // Lexically checked already, but a symlink may have brought us here, so check again.
        if (current.segments.length === 0) throw outsideWorkspace(display);
        const parent = await open(fdPath(current.handle.fd, '..'), O_PATH | constants.O_DIRECTORY);
        await moveTo({ handle: parent, segments: await verifiedSegmentsOrClose(root, parent, display) });
        continue;
      }
      const isFinal = pending.every((p) => isNoop(p.name));
      const trailingSlash = isFinal && (pending.length > 0 || parsed.trailingSlash);
      const entryPath = fdPath(current.handle.fd, segment.name);
      const child = await openNoFollow(entryPath);
      if (!child) {
        if (segment.fromLink) throw options.final === 'write' ? danglingSymlink(display) : notFoundAt(display);
        if (!isFinal && options.createDirs && ++created <= MAX_CREATED_DIRS) {
          await mkdirIfMissing(entryPath);
          pending.push(segment);
          continue;
        }
        if (isFinal && options.final === 'write' && !trailingSlash) {
          const dir = current;
          return entry(dir, segment.name, null, null, [...dir.segments, segment.name]);
        }
        throw notFoundAt(display);
      }
      let keep = false;
      try {
        const stat = await child.stat();
        if (stat.isSymbolicLink() && !(isFinal && options.final === 'nofollow' && !trailingSlash)) {
          if (++hops > MAX_SYMLINK_HOPS) {
            throw new WorkspaceFsError('symlink_loop', `Too many levels of symbolic links while resolving '${display}'`);
          }
          const target = await readlink(entryPath);
          let targetSegments = target.split('/');
          if (target.startsWith('/')) {
            const below = segmentsBelow(root, target);
            if (below === null) throw outsideWorkspace(display);
            targetSegments = below;
            await moveTo(await openRoot(root));
          }
          for (let i = targetSegments.length - 1; i >= 0; i--) {
            pending.push({ name: targetSegments[i], fromLink: true });
          }
          continue;
        }
        const segments = await verifiedSegments(root, child, display);
        if (stat.isDirectory() && !isFinal) {
          keep = true;
          await moveTo({ handle: child, segments });
          continue;
        }
        if (!isFinal || (trailingSlash && !stat.isDirectory())) throw notADirectory(display);
        keep = true;
        return entry(current, segment.name, child, stat, segments);
      } finally {
        if (!keep) await child.close();
      }
    }
  } catch (err) {
    await current.handle.close();
    throw err;
  }
}

function entry(
  dir: Directory,
  name: string,
  handle: FileHandle | null,
  stat: Stats | null,
  segments: string[],
): ResolvedPath {
  return {
    parent: dir.handle,
    parentSegments: dir.segments,
    name,
    handle,
    stat,
    segments,
    close: async () => {
      await handle?.close();
      await dir.handle.close();
    },
  };
}

// The path ended on a directory we already hold ('.', 'a/..'): its parent is found through the kernel too.
async function resolvedDirectory(root: string, dir: Directory, display: string): Promise<ResolvedPath> {
  const stat = await dir.handle.stat();
  if (dir.segments.length === 0) {
    return {
      parent: null,
      parentSegments: [],
      name: '',
      handle: dir.handle,
      stat,
      segments: [],
      close: () => dir.handle.close(),
    };
  }
  const parentHandle = await open(fdPath(dir.handle.fd, '..'), O_PATH | constants.O_DIRECTORY);
  const parentSegments = await verifiedSegmentsOrClose(root, parentHandle, display);
  const name = dir.segments[dir.segments.length - 1];
  return entry({ handle: parentHandle, segments: parentSegments }, name, dir.handle, stat, dir.segments);
}

async function verifiedSegmentsOrClose(root: string, handle: FileHandle, display: string): Promise<string[]> {
  try {
    return await verifiedSegments(root, handle, display);
  } catch (err) {
    await handle.close();
    throw err;
  }
}

async function mkdirIfMissing(path: string): Promise<void> {
  try {
    await mkdir(path, 0o777);
  } catch (err) {
    // Lost a race with another creator: the next open checks what is there now.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

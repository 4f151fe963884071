import { constants, type Stats } from 'node:fs';
import { asyncIo, closePathDescriptor, type DescriptorIo, type FsPath } from './descriptor-io.js';
import {
  danglingSymlink,
  missingParent,
  notADirectory,
  notCreatable,
  notFoundAt,
  outsideWorkspace,
  symlinkLoop,
  WorkspaceFsError,
} from './workspace-fs.error.js';
import { type ParsedPath } from './workspace-path.parser.js';
import {
  bytesOfEscapedName,
  namesOfPath,
  realSegmentsOf,
  REPLACEMENT_CHARACTER,
  segmentsOfText,
  type RawName,
} from './workspace-name.codec.js';
import { ownerToInherit } from './inherited-owner.js';

// Linux value (Node does not export it). An O_PATH descriptor pins an inode without opening it, so a FIFO
// or a device is never opened just to find out what it is.
export const O_PATH = 0o10000000;
const MAX_SYMLINK_HOPS = 40;
// Bounds the mkdir/open retries when something keeps removing the directories being created.
const MAX_CREATED_DIRS = 512;

// Every operation after the first open goes through /proc/self/fd/<fd>/<name>: the kernel starts from the
// directory we hold, so swapping a path component for a symlink afterwards changes nothing.
// A name that is not UTF-8 gives a Buffer path with its bytes as they are, never a lossy string.
export function fdPath(fd: number, name?: string): string;
export function fdPath(fd: number, name: RawName): FsPath;
export function fdPath(fd: number, name?: RawName): FsPath {
  if (name === undefined) return `/proc/self/fd/${fd}`;
  if (typeof name === 'string') return `/proc/self/fd/${fd}/${name}`;
  return Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
}

// 'follow': the final symlink is followed (read, list, cwd). 'nofollow': the final entry itself (delete).
// 'write': like follow, but the final entry may be missing and a dangling final symlink is refused.
// 'entry': like nofollow, but the final entry may be missing (the destination of a move).
export type FinalMode = 'follow' | 'nofollow' | 'write' | 'entry';

export interface ResolveOptions {
  final: FinalMode;
  createDirs?: boolean;
  // Blocking calls in worker threads; the event loop's callback API otherwise.
  io?: DescriptorIo;
}

// Every descriptor here is O_PATH: it names an inode and can be used as a directory to resolve from, or
// reopened through /proc/self/fd, but reads and writes nothing itself.
export interface ResolvedPath {
  // Directory holding the entry; null only when the path resolves to the workspace root.
  parent: number | null;
  parentSegments: string[];
  // As listings show it (escaped when not UTF-8); `rawName` is the name to give the kernel.
  name: string;
  rawName: RawName;
  // The entry itself, null when it does not exist (write mode only).
  fd: number | null;
  stat: Stats | null;
  // Real location below the root.
  segments: string[];
  // Closes both descriptors, once (a second call does nothing, so a reused number is never closed).
  close(): void;
}

interface Directory {
  fd: number;
  segments: string[];
  // Its own name as the kernel knows it ('' for the root).
  raw: RawName;
}

interface Pending {
  name: string;
  // The bytes of a name from a symlink's target that is not UTF-8.
  raw?: Buffer;
  // Came from a symlink's target: never created, a missing one means the link dangles.
  fromLink: boolean;
}

export async function openNoFollow(path: FsPath, io: DescriptorIo = asyncIo): Promise<number | null> {
  try {
    return await io.open(path, O_PATH | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

// Reads where the kernel says the descriptor really is and requires it to be the root or below it.
export async function verifiedSegments(root: string, fd: number, display: string, io: DescriptorIo = asyncIo): Promise<string[]> {
  return (await verifiedDirectory(root, fd, display, io)).segments;
}

// Where the kernel says the descriptor is, below `root`, each segment as listings show it: a name that is
// not UTF-8 is compared and reported by its bytes, never through a lossy decoding.
export async function realSegmentsBelow(root: string, fd: number, io: DescriptorIo = asyncIo): Promise<Directory | null> {
  // Read as a string first (no Buffer to make): without U+FFFD, Node decoded valid UTF-8 and the string is exact.
  const text = await io.readlink(fdPath(fd));
  const real = text.includes(REPLACEMENT_CHARACTER) ? realSegmentsOf(root, await io.readlinkBytes(fdPath(fd))) : segmentsOfText(root, text);
  return real === null ? null : { fd, ...real };
}

async function verifiedDirectory(root: string, fd: number, display: string, io: DescriptorIo): Promise<Directory> {
  const directory = await realSegmentsBelow(root, fd, io);
  if (directory === null) throw outsideWorkspace(display);
  return directory;
}

async function openRoot(root: string, io: DescriptorIo): Promise<Directory> {
  if (process.platform !== 'linux') throw new Error('Workspace confinement needs Linux (/proc/self/fd)');
  if (!root.startsWith('/')) throw new Error("The workspace root must be an absolute, realpath'd directory");
  let fd: number;
  try {
    fd = await io.open(root, O_PATH | constants.O_DIRECTORY);
  } catch {
    throw new WorkspaceFsError('not_found', 'The project workspace directory does not exist or is not accessible');
  }
  let real: Directory | null;
  try {
    real = await realSegmentsBelow(root, fd, io);
  } catch {
    closePathDescriptor(fd);
    throw new Error('Cannot read /proc/self/fd; workspace confinement needs /proc mounted');
  }
  // The root was realpath'd by the caller; if it is not where it was, do not guess.
  if (real?.segments.length !== 0) {
    closePathDescriptor(fd);
    throw new WorkspaceFsError('not_found', 'The project workspace directory has moved; try again');
  }
  return { fd, segments: [], raw: '' };
}

const isNoop = (name: string) => name === '' || name === '.';

// Resolves one component at a time with O_NOFOLLOW, expanding symlinks itself, and checks the real path of
// every directory it enters: nothing outside the workspace is ever opened, created or traversed.
export async function resolveWorkspacePath(root: string, parsed: ParsedPath, options: ResolveOptions): Promise<ResolvedPath> {
  const { display } = parsed;
  const io = options.io ?? asyncIo;
  const pending: Pending[] = parsed.segments.map((name) => ({ name, fromLink: false })).reverse();
  let current = await openRoot(root, io);
  let hops = 0;
  let created = 0;
  const moveTo = (next: Directory) => {
    closePathDescriptor(current.fd);
    current = next;
  };
  try {
    for (;;) {
      while (pending.length && isNoop(pending[pending.length - 1].name)) pending.pop();
      const segment = pending.pop();
      if (!segment) return await resolvedDirectory(root, current, display, io);
      if (segment.name === '..') {
        // Lexically checked already, but a symlink may have brought us here, so check again.
        if (current.segments.length === 0) throw outsideWorkspace(display);
        const parent = await io.open(fdPath(current.fd, '..'), O_PATH | constants.O_DIRECTORY);
        moveTo(await verifiedDirectoryOrClose(root, parent, display, io));
        continue;
      }
      const isFinal = pending.every((p) => isNoop(p.name));
      const trailingSlash = isFinal && (pending.length > 0 || parsed.trailingSlash);
      const creating = options.final === 'write' || options.final === 'entry';
      let raw: RawName = segment.raw ?? segment.name;
      let entryPath = fdPath(current.fd, raw);
      let child = await openNoFollow(entryPath, io);
      const escaped = child === null && !segment.fromLink ? bytesOfEscapedName(segment.name) : null;
      if (escaped) {
        // Not there as written, and written as a listing shows a name that is not UTF-8: that name.
        child = await openNoFollow(fdPath(current.fd, escaped), io);
        if (child !== null) {
          if (isFinal && creating) {
            closePathDescriptor(child);
            throw notCreatable(display);
          }
          raw = escaped;
          entryPath = fdPath(current.fd, escaped);
        }
      }
      if (child === null) {
        if (segment.fromLink) throw options.final === 'write' ? danglingSymlink(display) : notFoundAt(display);
        if (!isFinal && options.createDirs && ++created <= MAX_CREATED_DIRS) {
          await mkdirIfMissing(io, entryPath, current.fd);
          pending.push(segment);
          continue;
        }
        if (isFinal && creating && !trailingSlash) {
          return entry(current, segment.name, raw, null, null, [...current.segments, segment.name]);
        }
        // Creating something under a directory that is not there: name that directory and the way out.
        if (!isFinal && creating) throw missingParent(display, [...current.segments, segment.name].join('/'));
        throw notFoundAt(display);
      }
      let keep = false;
      try {
        const stat = await io.fstat(child);
        const keepLink = options.final === 'nofollow' || options.final === 'entry';
        if (stat.isSymbolicLink() && !(isFinal && keepLink && !trailingSlash)) {
          if (++hops > MAX_SYMLINK_HOPS) {
            throw symlinkLoop(display);
          }
          const target = await io.readlinkBytes(entryPath);
          let targetNames = namesOfPath(target);
          if (target[0] === 0x2f) {
            const below = realSegmentsOf(root, target);
            if (below === null) throw outsideWorkspace(display);
            const named = targetNames.filter((n) => n.text !== '');
            targetNames = named.slice(named.length - below.segments.length);
            moveTo(await openRoot(root, io));
          }
          for (let i = targetNames.length - 1; i >= 0; i--) {
            const { text, raw: targetRaw } = targetNames[i];
            pending.push(typeof targetRaw === 'string' ? { name: text, fromLink: true } : { name: text, raw: targetRaw, fromLink: true });
          }
          continue;
        }
        if (stat.isDirectory() && !isFinal) {
          const directory = await verifiedDirectory(root, child, display, io);
          keep = true;
          moveTo(directory);
          continue;
        }
        if (!isFinal || (trailingSlash && !stat.isDirectory())) throw notADirectory(display);
        // Written to by a name of its own (write_file's rename over it): only a UTF-8 name can be given back.
        if (creating && typeof raw !== 'string') throw notCreatable(display);
        // The final entry was opened without following, by a name that is neither '.' nor '..', from a
        // directory whose place was just checked: it is that directory's child, so its location is known
        // without asking the kernel again.
        keep = true;
        return entry(current, segment.name, raw, child, stat, [...current.segments, segment.name]);
      } finally {
        if (!keep) closePathDescriptor(child);
      }
    }
  } catch (err) {
    closePathDescriptor(current.fd);
    throw err;
  }
}

function entry(dir: Directory, name: string, rawName: RawName, fd: number | null, stat: Stats | null, segments: string[]): ResolvedPath {
  return {
    parent: dir.fd,
    parentSegments: dir.segments,
    name,
    rawName,
    fd,
    stat,
    segments,
    close: closeOnce([fd, dir.fd]),
  };
}

function closeOnce(fds: (number | null)[]): () => void {
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    for (const fd of fds) if (fd !== null) closePathDescriptor(fd);
  };
}

// The path ended on a directory we already hold ('.', 'a/..'): its parent is found through the kernel too.
async function resolvedDirectory(root: string, dir: Directory, display: string, io: DescriptorIo): Promise<ResolvedPath> {
  const stat = await io.fstat(dir.fd);
  if (dir.segments.length === 0) {
    return { parent: null, parentSegments: [], name: '', rawName: '', fd: dir.fd, stat, segments: [], close: closeOnce([dir.fd]) };
  }
  const parent = await io.open(fdPath(dir.fd, '..'), O_PATH | constants.O_DIRECTORY);
  const parentDirectory = await verifiedDirectoryOrClose(root, parent, display, io);
  const name = dir.segments[dir.segments.length - 1];
  return entry(parentDirectory, name, dir.raw, dir.fd, stat, dir.segments);
}

async function verifiedDirectoryOrClose(root: string, fd: number, display: string, io: DescriptorIo): Promise<Directory> {
  try {
    return await verifiedDirectory(root, fd, display, io);
  } catch (err) {
    closePathDescriptor(fd);
    throw err;
  }
}

async function mkdirIfMissing(io: DescriptorIo, path: FsPath, parentFd: number): Promise<void> {
  try {
    await io.mkdir(path, 0o777);
  } catch (err) {
    // Lost a race with another creator: the next open checks what is there now.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return;
  }
  const owner = await ownerToInherit(io, parentFd);
  if (owner) await io.lchown(path, owner.uid, owner.gid);
}

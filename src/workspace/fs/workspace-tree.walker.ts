import { constants, type Dirent, lstatSync, type Stats } from 'node:fs';
import { asyncIo, blockingIo, closePathDescriptor, type DescriptorIo, type FsPath } from './descriptor-io.js';
import { badRequest } from '../../common/errors/app-error.js';
import { notADirectory, outsideWorkspace, toWorkspaceFsError } from './workspace-fs.error.js';
import { compileGlob, type PathGlob } from './workspace-glob.js';
import { parseWorkspacePath, toRelativePath } from './workspace-path.parser.js';
import { fdPath, O_PATH, realSegmentsBelow, resolveWorkspacePath } from './workspace-path.resolver.js';
import { namedDirent, type NamedDirent, nameFromBytes, REPLACEMENT_CHARACTER, type RawName } from './workspace-name.codec.js';

export type WorkspaceEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WorkspaceEntry {
  name: string;
  path: string;
  type: WorkspaceEntryType;
  // The name is not UTF-8: `name` (and the last segment of `path`) shows its bytes escaped (%XX, '%' as %25).
  escapedName?: true;
  // With `details` only.
  size?: number;
  modified?: string;
}

export type DetailedWorkspaceEntry = WorkspaceEntry & Required<Pick<WorkspaceEntry, 'size' | 'modified'>>;

export interface ListWorkspaceOptions {
  recursive?: boolean;
  // Levels below the listed directory; its direct children are depth 1.
  maxDepth?: number;
  includeHidden?: boolean;
  limit: number;
  // Only entries whose path (relative to the listed directory) matches are returned; all are walked.
  glob?: string;
  // Give each entry its size and modification time. That costs one confined lstat per entry, through
  // /proc/self/fd (about 4.5 µs, twice an lstat by absolute path): most of a big walk's CPU. Without it,
  // names and types come from the directory read itself (d_type) and only directories are opened.
  details?: boolean;
  // Use blocking system calls: right in a worker thread, where a walk of thousands of entries would
  // otherwise queue each call behind the whole process's I/O in libuv's thread pool.
  blocking?: boolean;
  // A walk on the event loop gives up (DirectoryTooLargeInline) at a directory larger than this (st_size):
  // reading and sorting every name of a directory happens before `limit` can stop anything, and a directory
  // of 95,000 long names cost the event loop that for each call listing it. The caller walks it in the pool.
  inlineDirectoryBytes?: number;
}

export class DirectoryTooLargeInline extends Error {
  constructor() {
    super('the directory is too large to list on the event loop');
    this.name = 'DirectoryTooLargeInline';
  }
}

export interface ListWorkspaceResult<Entry extends WorkspaceEntry = WorkspaceEntry> {
  path: string;
  entries: Entry[];
  truncated: boolean;
}

export const DEFAULT_RECURSIVE_DEPTH = 32;
// Deeper requests are clamped: each level holds one directory descriptor open while its subtree is walked.
export const MAX_DEPTH = 64;
const STAT_BATCH = 64;

// From an lstat, or from the directory read (a Dirent answers the same questions).
export const entryType = (stat: Pick<Stats, 'isSymbolicLink' | 'isDirectory' | 'isFile'>): WorkspaceEntryType =>
  stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : 'other';

const DIRECTORY_FLAGS = O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY;

interface Walk {
  io: DescriptorIo;
  root: string;
  display: string;
  maxDepth: number;
  includeHidden: boolean;
  details: boolean;
  limit: number;
  glob: PathGlob | null;
  // Segments of the listed directory, for the paths the glob sees.
  base: number;
  entries: WorkspaceEntry[];
  truncated: boolean;
  inlineDirectoryBytes: number | undefined;
}

export function listWorkspace(
  root: string,
  userPath: string,
  opts: ListWorkspaceOptions & { details: true },
): Promise<ListWorkspaceResult<DetailedWorkspaceEntry>>;
export function listWorkspace(root: string, userPath: string, opts: ListWorkspaceOptions): Promise<ListWorkspaceResult>;
export function listWorkspace(root: string, userPath: string, opts: ListWorkspaceOptions): Promise<ListWorkspaceResult> {
  return walkWorkspaceTree(root, userPath, opts);
}

// Depth-first with siblings sorted, so entries come out ordered by path segment by segment and the walk can
// stop as soon as `limit` is reached. Symlinks are reported, never entered: a link loop cannot recurse.
export async function walkWorkspaceTree(root: string, userPath: string, opts: ListWorkspaceOptions): Promise<ListWorkspaceResult> {
  const parsed = parseWorkspacePath(root, userPath, { allowEmpty: true });
  const limit = boundedInteger('limit', opts.limit, 1, Number.MAX_SAFE_INTEGER);
  const requestedDepth = opts.recursive ? (opts.maxDepth ?? DEFAULT_RECURSIVE_DEPTH) : 1;
  const maxDepth = Math.min(MAX_DEPTH, boundedInteger('maxDepth', requestedDepth, 1, Number.MAX_SAFE_INTEGER));
  const glob = opts.glob ? compileGlob(opts.glob) : null;
  try {
    const io = opts.blocking ? blockingIo : asyncIo;
    const resolved = await resolveWorkspacePath(root, parsed, { final: 'follow', io });
    try {
      if (!resolved.stat!.isDirectory()) throw notADirectory(parsed.display);
      const walk: Walk = {
        io,
        root,
        display: parsed.display,
        maxDepth,
        includeHidden: opts.includeHidden ?? false,
        details: opts.details ?? false,
        limit,
        glob,
        base: resolved.segments.length,
        entries: [],
        truncated: false,
        inlineDirectoryBytes: opts.inlineDirectoryBytes,
      };
      await walkDirectory(walk, resolved.fd!, resolved.segments, 1);
      return { path: toRelativePath(resolved.segments), entries: walk.entries, truncated: walk.truncated };
    } finally {
      resolved.close();
    }
  } catch (err) {
    if (err instanceof DirectoryTooLargeInline) throw err;
    throw toWorkspaceFsError(err, parsed.display);
  }
}

async function walkDirectory(walk: Walk, dir: number, segments: string[], depth: number): Promise<void> {
  if (walk.inlineDirectoryBytes !== undefined && (await walk.io.fstat(dir)).size > walk.inlineDirectoryBytes) {
    throw new DirectoryTooLargeInline();
  }
  if (walk.details) return walkDirectoryWithStats(walk, dir, segments, depth, true);
  let read: Dirent[];
  try {
    read = await walk.io.readdirTypes(fdPath(dir));
  } catch (err) {
    // A file system without d_type has Node lstat every entry inside the read, and one entry removed in
    // between fails it all: the stat-per-entry walk skips such an entry instead.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return walkDirectoryWithStats(walk, dir, segments, depth, false);
  }
  // Node decodes a name that is not UTF-8 with U+FFFD, a name that does not exist: such a directory is
  // read again as bytes (the check per name is all the common case pays).
  const listed: NamedDirent[] = read.some((d) => d.name.includes(REPLACEMENT_CHARACTER))
    ? (await walk.io.readdirTypesBytes(fdPath(dir))).map(namedDirent)
    : read;
  const dirents = listed.filter((d) => walk.includeHidden || !d.name.startsWith('.')).sort((a, b) => byCodeUnit(a.name, b.name));
  const prefixes = entryPrefixes(walk, segments);
  for (const dirent of dirents) {
    const raw = dirent.raw ?? dirent.name;
    if (!listEntry(walk, prefixes, dirent.name, dirent, null, raw !== dirent.name)) return;
    // d_type never reports a symlink as a directory; the open in walkSubdirectory refuses one swapped in since.
    if (dirent.isDirectory() && depth < walk.maxDepth && !(await walkSubdirectory(walk, dir, segments, dirent.name, raw, depth))) return;
  }
}

// The names of a directory, sorted, and when one is not UTF-8 (read again as bytes) the name to give the
// kernel for each, in step; without one, each name is its own (no object per entry in the common case).
async function readNames(walk: Walk, dirPath: string): Promise<{ names: string[]; raws: RawName[] | null }> {
  const names = (await walk.io.readdir(dirPath)).filter((name) => walk.includeHidden || !name.startsWith('.'));
  if (!names.some((name) => name.includes(REPLACEMENT_CHARACTER))) return { names: names.sort(byCodeUnit), raws: null };
  const decoded = (await walk.io.readdirBytes(dirPath))
    .map(nameFromBytes)
    .filter(({ text }) => walk.includeHidden || !text.startsWith('.'))
    .sort((a, b) => byCodeUnit(a.text, b.text));
  return { names: decoded.map((n) => n.text), raws: decoded.map((n) => n.raw) };
}

// `details`: each entry's size and time are kept; without, the lstat only gives the type.
async function walkDirectoryWithStats(walk: Walk, dir: number, segments: string[], depth: number, details: boolean): Promise<void> {
  const dirPath = fdPath(dir);
  const { names, raws } = await readNames(walk, dirPath);
  const prefixes = entryPrefixes(walk, segments);
  for (let i = 0; i < names.length; i += STAT_BATCH) {
    const batch = (raws ?? names).slice(i, i + STAT_BATCH);
    // Blocking calls (a worker thread) are made in turn; a promise per entry measured at a sixth of a
    // walk's CPU. On the event loop the batch's calls run concurrently in libuv's pool.
    const stats =
      walk.io === blockingIo
        ? batch.map((raw) => lstatSyncOrNull(typeof raw === 'string' ? `${dirPath}/${raw}` : fdPath(dir, raw)))
        : await Promise.all(batch.map((raw) => lstatOrNull(walk.io, fdPath(dir, raw))));
    for (let j = 0; j < batch.length; j++) {
      const stat = stats[j];
      // Removed while we were listing.
      if (!stat) continue;
      const name = names[i + j];
      const raw = batch[j];
      if (!listEntry(walk, prefixes, name, stat, details ? stat : null, raw !== name)) return;
      if (stat.isDirectory() && depth < walk.maxDepth && !(await walkSubdirectory(walk, dir, segments, name, raw, depth))) return;
    }
  }
}

interface EntryPrefixes {
  prefix: string;
  globPrefix: string;
}

// Entry paths are the directory's path plus the name: built once per directory, not per entry.
function entryPrefixes(walk: Walk, segments: string[]): EntryPrefixes {
  return {
    prefix: segments.length === 0 ? '' : `${segments.join('/')}/`,
    globPrefix: walk.glob && segments.length > walk.base ? `${segments.slice(walk.base).join('/')}/` : '',
  };
}

// Adds one entry if the glob keeps it, with its size and time when `stat` is given. False once the limit
// is reached: the walk is then truncated and stops.
function listEntry(
  walk: Walk,
  { prefix, globPrefix }: EntryPrefixes,
  name: string,
  kind: Pick<Stats, 'isSymbolicLink' | 'isDirectory' | 'isFile'>,
  stat: Stats | null,
  escaped: boolean,
): boolean {
  if (walk.entries.length >= walk.limit) {
    walk.truncated = true;
    return false;
  }
  if (!walk.glob || walk.glob.matches(globPrefix + name, name)) {
    const path = prefix + name;
    const type = entryType(kind);
    const entry: WorkspaceEntry = stat
      ? { name, path, type, size: stat.size, modified: new Date(stat.mtimeMs).toISOString() }
      : { name, path, type };
    if (escaped) entry.escapedName = true;
    walk.entries.push(entry);
  }
  return true;
}

// Walks a subdirectory of `parent` (called only for one within maxDepth, so files cost no promise).
// False once the walk is truncated.
async function walkSubdirectory(
  walk: Walk,
  parent: number,
  segments: string[],
  name: string,
  raw: RawName,
  depth: number,
): Promise<boolean> {
  let child: number;
  try {
    // O_NOFOLLOW: if the directory was swapped for a symlink since it was read, the open fails instead of following.
    child = await walk.io.open(fdPath(parent, raw), DIRECTORY_FLAGS);
  } catch {
    return true;
  }
  try {
    // What was opened must still be inside the workspace.
    if ((await realSegmentsBelow(walk.root, child, walk.io)) === null) throw outsideWorkspace(walk.display);
    await walkDirectory(walk, child, [...segments, name], depth + 1);
  } catch (err) {
    // An unreadable or vanished subdirectory is listed but not entered; escapes still abort the walk.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  } finally {
    closePathDescriptor(child);
  }
  return !walk.truncated;
}

// lstat without the exception a vanished entry would cost; the Stats' Date fields stay unbuilt.
function lstatSyncOrNull(path: FsPath): Stats | null {
  return lstatSync(path, { throwIfNoEntry: false }) ?? null;
}

async function lstatOrNull(io: DescriptorIo, path: FsPath): Promise<Stats | null> {
  try {
    return await io.lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function boundedInteger(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw badRequest('invalid_argument', `${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

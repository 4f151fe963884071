import { rename } from 'node:fs/promises';
import { badRequest } from '../../common/errors/app-error.js';
import { openNoFollow } from './workspace-path.resolver.js';
import { closePathDescriptor, type FsPath } from './descriptor-io.js';
import { sameRawName } from './workspace-name.codec.js';
import { alreadyExists, hardLink, isADirectory, notADirectory, toWorkspaceFsError, workspaceRoot } from './workspace-fs.error.js';
import { parseWorkspacePath, toRelativePath, type ParsedPath } from './workspace-path.parser.js';
import { fdPath, resolveWorkspacePath, type ResolvedPath } from './workspace-path.resolver.js';
import { entryType, type WorkspaceEntryType } from './workspace-tree.walker.js';

export interface MoveWorkspaceEntryOptions {
  overwrite?: boolean;
  createDirs?: boolean;
  // Checked just before the rename: a move stopped before it changes nothing.
  signal?: AbortSignal;
}

export interface MoveWorkspaceEntryResult {
  source: string;
  destination: string;
  type: WorkspaceEntryType;
  overwritten: boolean;
}

// Renames an entry (a symlink moves as a link, never its target) through the descriptors of both verified
// parent directories: neither end can be redirected outside the workspace once resolved.
export async function moveWorkspaceEntry(
  root: string,
  sourcePath: string,
  destinationPath: string,
  opts: MoveWorkspaceEntryOptions = {},
): Promise<MoveWorkspaceEntryResult> {
  const source = parseWorkspacePath(root, sourcePath);
  const destination = parseWorkspacePath(root, destinationPath, { creates: true });
  if (isRoot(source)) throw workspaceRoot(source.display, 'moved');
  if (isRoot(destination)) throw workspaceRoot(destination.display, 'replaced');
  let from: ResolvedPath;
  try {
    from = await resolveWorkspacePath(root, source, { final: 'nofollow' });
  } catch (err) {
    throw toWorkspaceFsError(err, source.display);
  }
  try {
    if (from.parent === null || from.segments.length === 0) throw workspaceRoot(source.display, 'moved');
    const type = entryType(from.stat!);
    if (type === 'file' && from.stat!.nlink > 1) throw hardLink(source.display, 'moved');
    let to: ResolvedPath;
    try {
      to = await resolveWorkspacePath(root, destination, { final: 'entry', createDirs: opts.createDirs });
    } catch (err) {
      throw toWorkspaceFsError(err, destination.display);
    }
    try {
      if (to.parent === null) throw workspaceRoot(destination.display, 'replaced');
      if (type === 'directory' && isWithin(from.segments, to.segments)) throw intoItself(source.display, destination.display);
      const same = sameEntry(from, to);
      let overwritten = false;
      if (to.stat && !same) {
        if (!opts.overwrite) throw alreadyExists(destination.display);
        const existing = entryType(to.stat);
        if (existing === 'file' && to.stat.nlink > 1) throw hardLink(destination.display, 'written');
        if (existing === 'directory' && type !== 'directory') {
          throw isADirectory(destination.display, 'give the full destination path, including the new name');
        }
        if (existing !== 'directory' && type === 'directory') throw notADirectory(destination.display);
        overwritten = true;
      } else if (!same && (await exists(fdPath(to.parent, to.rawName)))) {
        // Appeared since the destination was resolved.
        throw alreadyExists(destination.display);
      }
      opts.signal?.throwIfAborted();
      try {
        if (!same) await rename(fdPath(from.parent, from.rawName), fdPath(to.parent, to.rawName));
      } catch (err) {
        throw toWorkspaceFsError(err, destination.display);
      }
      return {
        source: toRelativePath(from.segments),
        destination: toRelativePath([...to.parentSegments, to.name]),
        type,
        overwritten,
      };
    } finally {
      to.close();
    }
  } catch (err) {
    throw toWorkspaceFsError(err, source.display);
  } finally {
    from.close();
  }
}

const isRoot = (parsed: ParsedPath) => parsed.segments.every((s) => s === '' || s === '.');

const isWithin = (dir: string[], path: string[]) => path.length >= dir.length && dir.every((s, i) => path[i] === s);

// Both ends name the same entry (a move onto itself): nothing to do.
const sameEntry = (from: ResolvedPath, to: ResolvedPath) =>
  to.stat !== null &&
  to.stat.ino === from.stat!.ino &&
  to.stat.dev === from.stat!.dev &&
  sameRawName(from.rawName, to.rawName) &&
  from.parentSegments.join('/') === to.parentSegments.join('/');

async function exists(path: FsPath): Promise<boolean> {
  const fd = await openNoFollow(path);
  if (fd === null) return false;
  closePathDescriptor(fd);
  return true;
}

const intoItself = (source: string, destination: string) =>
  badRequest(
    'move_into_itself',
    `Cannot move the directory '${source}' to '${destination}', which is inside it; choose a destination outside '${source}'`,
    { source, destination },
  );

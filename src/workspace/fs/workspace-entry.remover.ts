import { rmdir, unlink } from 'node:fs/promises';
import { asyncIo, closePathDescriptor } from './descriptor-io.js';
import { hardLink, isADirectory, toWorkspaceFsError, workspaceRoot, WorkspaceFsError } from './workspace-fs.error.js';
import { parseWorkspacePath, toRelativePath } from './workspace-path.parser.js';
import { fdPath, openNoFollow, resolveWorkspacePath } from './workspace-path.resolver.js';
import { entryType, type WorkspaceEntryType } from './workspace-tree.walker.js';
import { nameFromBytes } from './workspace-name.codec.js';

export interface DeleteWorkspacePathOptions {
  recursive?: boolean;
  // Checked just before the first removal: a delete stopped before it removes nothing (once begun, it finishes).
  signal?: AbortSignal;
}

export interface DeleteWorkspacePathResult {
  path: string;
  type: WorkspaceEntryType;
}

// Each level holds one descriptor while its children are removed.
const MAX_DELETE_DEPTH = 256;

export async function deleteWorkspacePath(
  root: string,
  userPath: string,
  opts: DeleteWorkspacePathOptions = {},
): Promise<DeleteWorkspacePathResult> {
  const parsed = parseWorkspacePath(root, userPath);
  if (parsed.segments.every((s) => s === '' || s === '.')) throw workspaceRoot(parsed.display);
  try {
    const resolved = await resolveWorkspacePath(root, parsed, { final: 'nofollow' });
    try {
      const { parent, stat, fd } = resolved;
      if (parent === null || resolved.segments.length === 0) throw workspaceRoot(parsed.display);
      const type = entryType(stat!);
      const target = fdPath(parent, resolved.rawName);
      if (type === 'directory') {
        if (!opts.recursive) {
          throw isADirectory(parsed.display, 'pass recursive: true to delete it and everything inside it');
        }
        // Checked before anything is removed, so a refusal leaves the tree whole.
        const shared = await findHardLink(fd!, resolved.segments, 0);
        if (shared) throw hardLink(shared, 'deleted');
        opts.signal?.throwIfAborted();
        await removeChildren(fd!, 0);
        await rmdir(target);
      } else {
        // A symlink loses only the link; FIFOs and sockets are unlinked without being opened.
        if (type === 'file' && stat!.nlink > 1) throw hardLink(parsed.display, 'deleted');
        opts.signal?.throwIfAborted();
        await unlink(target);
      }
      return { path: toRelativePath(resolved.segments), type };
    } finally {
      resolved.close();
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

// Children are reached through the descriptor of the directory already verified, never by path strings:
// a subdirectory replaced by a symlink meanwhile is unlinked as a link, not descended into. Names are read
// as bytes, so one that is not UTF-8 is removed too rather than left behind to fail the rmdir.
async function forEachChild(dir: number, depth: number, visit: (child: number, name: Buffer) => Promise<boolean | void>): Promise<boolean> {
  if (depth > MAX_DELETE_DEPTH) {
    throw new WorkspaceFsError(
      'io_error',
      `The directory tree is nested more than ${MAX_DELETE_DEPTH} levels deep; delete its deepest parts first`,
    );
  }
  for (const name of await asyncIo.readdirBytes(fdPath(dir))) {
    const child = await openNoFollow(fdPath(dir, name));
    if (child === null) continue;
    try {
      if (await visit(child, name)) return true;
    } finally {
      closePathDescriptor(child);
    }
  }
  return false;
}

async function findHardLink(dir: number, segments: string[], depth: number): Promise<string | null> {
  let found: string | null = null;
  await forEachChild(dir, depth, async (child, name) => {
    const stat = await asyncIo.fstat(child);
    const text = nameFromBytes(name).text;
    if (stat.isFile() && stat.nlink > 1) found = toRelativePath([...segments, text]);
    else if (stat.isDirectory()) found = await findHardLink(child, [...segments, text], depth + 1);
    return found !== null;
  });
  return found;
}

async function removeChildren(dir: number, depth: number): Promise<void> {
  await forEachChild(dir, depth, async (child, name) => {
    const path = fdPath(dir, name);
    if ((await asyncIo.fstat(child)).isDirectory()) {
      await removeChildren(child, depth + 1);
      await rmdir(path);
    } else {
      await unlink(path);
    }
  });
}

import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { hardLink, invalidPath, isADirectory, specialFile, toWorkspaceFsError } from './workspace-fs.error.js';
import { parseWorkspacePath, toRelativePath } from './workspace-path.parser.js';
import { asyncIo } from './descriptor-io.js';
import { ownerToInherit } from './inherited-owner.js';
import { fdPath, resolveWorkspacePath } from './workspace-path.resolver.js';

// Asked before new content lands, with how many bytes of disk the workspace gains (less than 0: frees)
// and the path as the caller wrote it. It refuses by throwing; the function it answers gives back what it
// reserved when the write then fails.
export type ReserveGrowth = (growthBytes: number, display: string) => Promise<() => void>;

export interface WriteWorkspaceFileOptions {
  createDirs?: boolean;
  reserveGrowth?: ReserveGrowth;
  // Checked once more before the content lands: a write stopped while it waited changes nothing.
  signal?: AbortSignal;
}

// What a file of `size` bytes will occupy, in whole blocks, against what `replaced` occupies now.
export const growthOf = (size: number, replaced: { blocks: number } | null) =>
  Math.ceil(size / 4096) * 4096 - (replaced ? replaced.blocks * 512 : 0);

export interface WriteWorkspaceFileResult {
  path: string;
  bytesWritten: number;
  created: boolean;
}

// The whole content lands under a temporary name in the verified directory, then one rename makes it
// visible: readers never see half a file, and a hard link elsewhere is never written through.
export async function writeWorkspaceFile(
  root: string,
  userPath: string,
  content: Buffer,
  opts: WriteWorkspaceFileOptions = {},
): Promise<WriteWorkspaceFileResult> {
  const parsed = parseWorkspacePath(root, userPath, { creates: true });
  if (parsed.trailingSlash) throw invalidPath(parsed.display, "it ends with '/'; give the name of the file to write");
  try {
    const resolved = await resolveWorkspacePath(root, parsed, { final: 'write', createDirs: opts.createDirs });
    try {
      const { parent, stat } = resolved;
      if (!parent) throw isADirectory(parsed.display, 'give the path of a file to write');
      if (stat) {
        if (stat.isDirectory()) throw isADirectory(parsed.display, 'give the path of a file to write');
        if (!stat.isFile()) throw specialFile(parsed.display, stat);
        if (stat.nlink > 1) throw hardLink(parsed.display, 'written');
      }
      const giveBack = await opts.reserveGrowth?.(growthOf(content.length, stat), parsed.display);
      try {
        // Past this point the write finishes whatever the signal says.
        opts.signal?.throwIfAborted();
        await replaceAtomically(parent, resolved.name, content, stat ? stat.mode & 0o7777 : undefined);
      } catch (err) {
        giveBack?.();
        throw err;
      }
      return {
        path: toRelativePath([...resolved.parentSegments, resolved.name]),
        bytesWritten: content.length,
        created: stat === null,
      };
    } finally {
      resolved.close();
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

// Fixed length, so a 255-byte final name still leaves room for it.
const tempName = () => `.toolgate-${randomBytes(8).toString('hex')}.tmp`;
const TEMP_NAME = /^\.toolgate-[0-9a-f]{16}\.tmp$/;
// What a write killed before its rename leaves behind (see StaleTempSweeper).
export const isWriteTempName = (name: string) => TEMP_NAME.test(name);

export async function replaceAtomically(dir: number, name: string, content: Buffer, mode?: number): Promise<void> {
  const tempPath = fdPath(dir, tempName());
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const owner = await ownerToInherit(asyncIo, dir);
  const temp = await open(tempPath, flags, 0o666);
  let renamed = false;
  try {
    try {
      await temp.writeFile(content);
      if (owner) await temp.chown(owner.uid, owner.gid);
      if (mode !== undefined) await temp.chmod(mode);
      await temp.sync();
    } finally {
      await temp.close();
    }
    await rename(tempPath, fdPath(dir, name));
    renamed = true;
  } finally {
    if (!renamed) await unlink(tempPath).catch(() => undefined);
  }
  await syncDirectory(dir);
}

// Makes the rename durable; a file system that cannot fsync a directory still has the data.
async function syncDirectory(dir: number): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(fdPath(dir), constants.O_RDONLY | constants.O_DIRECTORY);
    await handle.sync();
  } catch {
    // Durability is best effort here; the write itself succeeded.
  } finally {
    await handle?.close();
  }
}

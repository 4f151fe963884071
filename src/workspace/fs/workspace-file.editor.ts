import { constants } from 'node:fs';
import { asyncIo } from './descriptor-io.js';
import {
  hardLink,
  invalidPath,
  isADirectory,
  notCreatable,
  specialFile,
  toWorkspaceFsError,
  WorkspaceFsError,
} from './workspace-fs.error.js';
import { parseWorkspacePath, toRelativePath } from './workspace-path.parser.js';
import { fdPath, resolveWorkspacePath } from './workspace-path.resolver.js';
import { growthOf, replaceAtomically, type ReserveGrowth } from './workspace-file.writer.js';

export interface EditWorkspaceFileOptions {
  // Larger files are refused before they are read.
  maxBytes: number;
  // Compute the change, write nothing.
  dryRun?: boolean;
  reserveGrowth?: ReserveGrowth;
  // Checked once more before the new text lands: an edit stopped while it waited changes nothing.
  signal?: AbortSignal;
}

// What the caller's change made of the text: the new text (null: nothing to write) and what to answer.
export interface TextChange<T> {
  text: string | null;
  value: T;
}

export interface EditWorkspaceFileResult<T> {
  path: string;
  written: boolean;
  value: T;
}

// Reads a text file, lets `change` compute its new text, and replaces it the way write_file does (a
// temporary file in the verified directory, renamed over the old one). The file read is the inode that
// was resolved and checked; if it changed on disk while the edit was computed, nothing is written.
export async function editWorkspaceFile<T>(
  root: string,
  userPath: string,
  opts: EditWorkspaceFileOptions,
  change: (text: string, display: string) => TextChange<T>,
): Promise<EditWorkspaceFileResult<T>> {
  const parsed = parseWorkspacePath(root, userPath, { creates: true });
  if (parsed.trailingSlash) throw invalidPath(parsed.display, "it ends with '/'; give the name of the file to edit");
  try {
    const resolved = await resolveWorkspacePath(root, parsed, { final: 'follow' });
    try {
      const stat = resolved.stat!;
      const { parent } = resolved;
      if (!parent || stat.isDirectory())
        throw isADirectory(parsed.display, 'edit_file changes one file; use list_files to see what it contains');
      if (!stat.isFile()) throw specialFile(parsed.display, stat);
      if (stat.nlink > 1) throw hardLink(parsed.display, 'written');
      // The edit is written back under the entry's name, which a name that is not UTF-8 cannot be given as.
      if (typeof resolved.rawName !== 'string') throw notCreatable(parsed.display);
      if (stat.size > opts.maxBytes) {
        throw new WorkspaceFsError(
          'file_too_large',
          `'${parsed.display}' is ${stat.size} bytes; edit_file edits files up to ${opts.maxBytes} bytes, so replace it with write_file instead`,
        );
      }
      const bytes = await readWhole(fdPath(resolved.fd!), stat.size);
      const text = decodeText(bytes, parsed.display);
      let changed: TextChange<T>;
      try {
        changed = change(text, parsed.display);
      } catch (err) {
        throw new ChangeRefused(err instanceof Error ? err : new Error(String(err)));
      }
      const { text: next, value } = changed;
      const path = toRelativePath(resolved.segments);
      if (next === null || opts.dryRun) return { path, written: false, value };
      const now = await asyncIo.fstat(resolved.fd!);
      if (now.size !== stat.size || now.mtimeMs !== stat.mtimeMs || now.ctimeMs !== stat.ctimeMs) {
        throw new WorkspaceFsError(
          'file_changed',
          `'${parsed.display}' changed on disk while it was being edited and was left as it is; read it again and retry the edit`,
        );
      }
      const content = Buffer.from(next, 'utf8');
      const giveBack = await opts.reserveGrowth?.(growthOf(content.length, stat), parsed.display);
      try {
        // Past this point the edit finishes whatever the signal says.
        opts.signal?.throwIfAborted();
        await replaceAtomically(parent, resolved.name, content, stat.mode & 0o7777);
      } catch (err) {
        giveBack?.();
        throw err;
      }
      return { path, written: true, value };
    } finally {
      resolved.close();
    }
  } catch (err) {
    // The caller's own error (the edit does not apply) reaches it as it was thrown.
    if (err instanceof ChangeRefused) throw err.reason;
    throw toWorkspaceFsError(err, parsed.display);
  }
}

class ChangeRefused extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

// The inode held by the O_PATH descriptor, opened for reading (O_NONBLOCK: it was checked to be a regular
// file, but nothing could make this open wait anyway).
async function readWhole(path: string, size: number): Promise<Buffer> {
  const fd = await asyncIo.open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const buffer = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const n = await asyncIo.read(fd, buffer, filled, size - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  } finally {
    await asyncIo.close(fd);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeText(bytes: Buffer, display: string): string {
  const binary = () =>
    new WorkspaceFsError(
      'binary_file',
      `'${display}' looks like a binary file (NUL bytes or invalid UTF-8), which edit_file cannot change; replace it with write_file and encoding: "base64"`,
    );
  if (bytes.includes(0)) throw binary();
  try {
    return utf8.decode(bytes);
  } catch {
    throw binary();
  }
}

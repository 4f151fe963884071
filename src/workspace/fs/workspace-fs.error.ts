import type { Stats } from 'node:fs';
import { AppError, badRequest, forbidden } from '../../common/errors/app-error.js';
import type { ErrorClassCodec } from '../../common/worker-pool/worker-error.codec.js';

const MAX_DISPLAY_CHARS = 160;

// A path as the caller wrote it, shortened and made printable, safe to put in a message.
export function displayPath(userPath: string): string {
  // Bidirectional formatting characters would reorder the message around the path as well.
  const printable = Array.from(userPath, (c) => (c < ' ' || c === '\x7f' || /[\u202a-\u202e\u2066-\u2069]/.test(c) ? '?' : c)).join('');
  return printable.length > MAX_DISPLAY_CHARS ? `${printable.slice(0, MAX_DISPLAY_CHARS - 3)}...` : printable;
}

export type WorkspaceFsErrorCode =
  | 'not_found'
  | 'parent_not_found'
  | 'not_a_directory'
  | 'is_directory'
  | 'binary_file'
  | 'file_too_large'
  | 'file_changed'
  | 'already_exists'
  | 'not_empty'
  | 'symlink_loop'
  | 'permission_denied'
  | 'no_space'
  | 'workspace_quota_exceeded'
  | 'read_only'
  | 'io_error';

// An operation that was allowed but did not work out (missing file, wrong kind of entry). Tools report it
// to the model as an outcome; refusals are AppError instead.
export class WorkspaceFsError extends Error {
  constructor(
    readonly code: WorkspaceFsErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WorkspaceFsError';
  }
}

// How a WorkspaceFsError crosses a thread boundary (worker pool, read threads) and comes back whole.
export const workspaceFsErrorCodec: ErrorClassCodec<WorkspaceFsError> = {
  kind: 'workspace_fs',
  matches: (err): err is WorkspaceFsError => err instanceof WorkspaceFsError,
  fields: (err) => ({ code: err.code }),
  revive: (message, fields) => new WorkspaceFsError(fields.code as WorkspaceFsErrorCode, message),
};

export const notFoundAt = (display: string) =>
  new WorkspaceFsError('not_found', `No file or directory at '${display}' in the workspace; list_files shows what exists`);

export const missingParent = (display: string, directory: string) =>
  new WorkspaceFsError(
    'parent_not_found',
    `The directory '${displayPath(directory)}' does not exist, so '${display}' cannot be created there; call again with createDirs: true to create it`,
  );

export const alreadyExists = (display: string) =>
  new WorkspaceFsError(
    'already_exists',
    `Something already exists at '${display}'; pass overwrite: true to replace it, or choose another name`,
  );

export const notADirectory = (display: string) =>
  new WorkspaceFsError(
    'not_a_directory',
    `'${display}' (or one of its parent components) is a file, not a directory; list_files shows what exists`,
  );

export const isADirectory = (display: string, hint: string) => new WorkspaceFsError('is_directory', `'${display}' is a directory; ${hint}`);

// Errno codes become outcomes the model can act on. Node's own messages are never reused: they carry
// /proc/self/fd paths and host paths.
export function toWorkspaceFsError(err: unknown, display: string): Error {
  if (err instanceof AppError || err instanceof WorkspaceFsError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return notFoundAt(display);
    case 'ENOTDIR':
      return notADirectory(display);
    case 'EISDIR':
      return isADirectory(display, 'give the path of a file inside it');
    case 'EEXIST':
      return alreadyExists(display);
    case 'ENOTEMPTY':
      return new WorkspaceFsError(
        'not_empty',
        `The directory '${display}' is not empty; delete or move its entries first, or choose a destination that does not exist`,
      );
    case 'EACCES':
    case 'EPERM':
      return new WorkspaceFsError(
        'permission_denied',
        `Permission denied for '${display}' in the workspace; the service cannot change that, so work on another path`,
      );
    case 'ELOOP':
      return symlinkLoop(display);
    case 'ENOSPC':
    case 'EDQUOT':
      return new WorkspaceFsError(
        'no_space',
        `No space left on the workspace disk while writing '${display}'; delete files that are no longer needed, then try again`,
      );
    case 'EROFS':
      return new WorkspaceFsError(
        'read_only',
        `The workspace is on a read-only file system; '${display}' cannot be changed, so only read tools will work`,
      );
    case 'EXDEV':
      return new WorkspaceFsError(
        'io_error',
        `'${display}' is on another file system than the destination; copy it with read_file and write_file instead`,
      );
    case 'ENAMETOOLONG':
      return invalidPath(display, 'it resolves to a path that is too long');
    default:
      return new WorkspaceFsError(
        'io_error',
        `Could not access '${display}' in the workspace (${code ?? 'unexpected error'}); try again, and if it persists work on another path`,
      );
  }
}

export const symlinkLoop = (display: string) =>
  new WorkspaceFsError(
    'symlink_loop',
    `Too many levels of symbolic links while resolving '${display}'; use list_files to see where the links point and give a path without the loop`,
  );

// Refusals: the gateway will not do it, whatever is on disk. Each names the path as the caller wrote it.
export const invalidPath = (display: string, reason: string) =>
  badRequest('invalid_path', `Invalid path '${display}': ${reason}`, { path: display });

export const notCreatable = (display: string) =>
  invalidPath(
    display,
    'it names, escaped with %XX, an existing entry whose name is not UTF-8; such an entry can be read, listed, moved and deleted, but nothing can be written or created under that name: choose a UTF-8 name (move_file can rename the entry to one)',
  );

export const outsideWorkspace = (display: string) =>
  forbidden(
    'path_outside_workspace',
    `'${display}' is outside the project workspace (directly, through '..' or through a symbolic link); paths must stay inside the project workspace, e.g. 'src/index.ts'`,
    { path: display },
  );

export const danglingSymlink = (display: string) =>
  forbidden(
    'dangling_symlink',
    `'${display}' goes through a symbolic link whose target does not exist; write to the target path directly`,
    { path: display },
  );

export const specialFile = (display: string, stat: Stats) =>
  forbidden(
    'special_file',
    `'${display}' is a ${describeSpecial(stat)}, not a regular file; only regular files can be read or written, so choose another path (list_files shows each entry's type)`,
    { path: display },
  );

export const hardLink = (display: string, action: 'written' | 'deleted' | 'moved') =>
  forbidden(
    'hard_link',
    `'${display}' has more than one hard link (it may be shared with a file outside the workspace) and cannot be ${action}; ${action === 'written' ? 'write the new content to a file of another name' : 'leave it in place'}`,
    { path: display },
  );

export const workspaceRoot = (display: string, action: 'deleted' | 'moved' | 'replaced' = 'deleted') =>
  forbidden('workspace_root', `'${display}' is the workspace root itself, which cannot be ${action}; name an entry inside it`, {
    path: display,
  });

function describeSpecial(stat: Stats): string {
  if (stat.isFIFO()) return 'FIFO (named pipe)';
  if (stat.isSocket()) return 'socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'device';
  return 'special file';
}

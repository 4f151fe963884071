import { AppError } from '../../common/errors/app-error.js';
import { alreadyExists, missingParent, toWorkspaceFsError, WorkspaceFsError } from './workspace-fs.error.js';

const errno = (code: string) => Object.assign(new Error(`${code}: /proc/self/fd/17/x`), { code });

describe('toWorkspaceFsError', () => {
  // Each outcome names the path as written and ends with something the model can do next.
  it.each([
    ['ENOENT', 'not_found', /list_files shows what exists/],
    ['ENOTDIR', 'not_a_directory', /list_files shows what exists/],
    ['EISDIR', 'is_directory', /give the path of a file inside it/],
    ['EEXIST', 'already_exists', /pass overwrite: true to replace it, or choose another name/],
    ['ENOTEMPTY', 'not_empty', /delete or move its entries first/],
    ['EACCES', 'permission_denied', /work on another path/],
    ['EPERM', 'permission_denied', /work on another path/],
    ['ELOOP', 'symlink_loop', /use list_files to see where the links point/],
    ['ENOSPC', 'no_space', /delete files that are no longer needed, then try again/],
    ['EDQUOT', 'no_space', /delete files that are no longer needed/],
    ['EROFS', 'read_only', /only read tools will work/],
    ['EXDEV', 'io_error', /copy it with read_file and write_file instead/],
    ['EIO', 'io_error', /try again/],
  ])('maps %s to %s with a next step', (code, expected, next) => {
    const err = toWorkspaceFsError(errno(code), 'src/a.ts');
    expect(err).toBeInstanceOf(WorkspaceFsError);
    expect(err).toMatchObject({ code: expected, message: expect.stringMatching(next) });
    expect(err.message).toContain("'src/a.ts'");
    expect(err.message).not.toContain('/proc/self/fd');
  });

  it('refuses a path too long for the kernel as invalid_path', () => {
    expect(toWorkspaceFsError(errno('ENAMETOOLONG'), 'a/b')).toMatchObject({ status: 400, code: 'invalid_path' });
  });

  it('keeps errors that are already outcomes or refusals', () => {
    const refusal = new AppError(403, 'path_outside_workspace', 'outside');
    expect(toWorkspaceFsError(refusal, 'x')).toBe(refusal);
    const outcome = alreadyExists('x');
    expect(toWorkspaceFsError(outcome, 'x')).toBe(outcome);
  });

  it('names the missing directory and createDirs: true, with control characters made printable', () => {
    expect(missingParent('notes/a.txt', 'notes').message).toBe(
      "The directory 'notes' does not exist, so 'notes/a.txt' cannot be created there; call again with createDirs: true to create it",
    );
    expect(missingParent('x', 'a\nb').message).toContain("'a?b'");
  });
});

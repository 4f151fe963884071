import path from 'node:path';
import { notADirectory, toWorkspaceFsError } from './workspace-fs.error.js';
import { parseWorkspacePath, toRelativePath } from './workspace-path.parser.js';
import { resolveWorkspacePath } from './workspace-path.resolver.js';
import { entryType, type WorkspaceEntryType } from './workspace-tree.walker.js';

// The one door to a project's files: every file tool, the shell's cwd and the browsing routes come through
// here. `root` is the workspace directory, already realpath'd; `userPath` is what the caller wrote.
export { readWorkspaceFile, hashWorkspaceFile } from './workspace-file.reader.js';
export type { HashWorkspaceFileResult, ReadEncoding, ReadWorkspaceFileOptions, ReadWorkspaceFileResult } from './workspace-file.reader.js';
export { writeWorkspaceFile } from './workspace-file.writer.js';
export type { WriteWorkspaceFileOptions, WriteWorkspaceFileResult } from './workspace-file.writer.js';
export { DirectoryTooLargeInline, listWorkspace, walkWorkspaceTree } from './workspace-tree.walker.js';
export type {
  DetailedWorkspaceEntry,
  ListWorkspaceOptions,
  ListWorkspaceResult,
  WorkspaceEntry,
  WorkspaceEntryType,
} from './workspace-tree.walker.js';
export { deleteWorkspacePath } from './workspace-entry.remover.js';
export type { DeleteWorkspacePathOptions, DeleteWorkspacePathResult } from './workspace-entry.remover.js';
export { WorkspaceFsError } from './workspace-fs.error.js';
export type { WorkspaceFsErrorCode } from './workspace-fs.error.js';

export interface WorkspacePathStat {
  path: string;
  type: WorkspaceEntryType;
  size: number;
  modified: string;
}

// Real absolute path of a directory inside the workspace ('' or '.' is the root), e.g. for a shell's cwd.
export async function resolveWorkspaceDirectory(root: string, userPath: string): Promise<string> {
  const parsed = parseWorkspacePath(root, userPath, { allowEmpty: true });
  try {
    const resolved = await resolveWorkspacePath(root, parsed, { final: 'follow' });
    try {
      if (!resolved.stat!.isDirectory()) throw notADirectory(parsed.display);
      return path.posix.join(root, ...resolved.segments);
    } finally {
      resolved.close();
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

export async function statWorkspacePath(
  root: string,
  userPath: string,
  opts: { followSymlinks?: boolean } = {},
): Promise<WorkspacePathStat> {
  const parsed = parseWorkspacePath(root, userPath, { allowEmpty: true });
  try {
    const final = opts.followSymlinks === false ? 'nofollow' : 'follow';
    const resolved = await resolveWorkspacePath(root, parsed, { final });
    try {
      const stat = resolved.stat!;
      return {
        path: toRelativePath(resolved.segments),
        type: entryType(stat),
        size: stat.size,
        modified: stat.mtime.toISOString(),
      };
    } finally {
      resolved.close();
    }
  } catch (err) {
    throw toWorkspaceFsError(err, parsed.display);
  }
}

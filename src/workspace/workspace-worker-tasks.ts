import { hashWorkspaceFile } from './fs/workspace-file.reader.js';
import { workspaceFsErrorCodec } from './fs/workspace-fs.error.js';
import { searchWorkspace, type SearchWorkspaceOptions } from './fs/workspace-search.js';
import { walkWorkspaceTree, type ListWorkspaceOptions } from './fs/workspace-tree.walker.js';

export interface ListWorkspaceRecursivePayload {
  root: string;
  path: string;
  options: Omit<ListWorkspaceOptions, 'recursive'>;
}

export interface SearchWorkspacePayload {
  root: string;
  path: string;
  options: SearchWorkspaceOptions;
}

export interface HashFilePayload {
  root: string;
  path: string;
}

// The workspace's work for the app's worker pool: big walks, searches and hashes, with blocking calls.
export const workspaceWorkerTasks = {
  listWorkspaceRecursive: (payload: ListWorkspaceRecursivePayload) =>
    walkWorkspaceTree(payload.root, payload.path, { ...payload.options, recursive: true, blocking: true }),
  hashFile: (payload: HashFilePayload) => hashWorkspaceFile(payload.root, payload.path),
  searchWorkspace: (payload: SearchWorkspacePayload) => searchWorkspace(payload.root, payload.path, payload.options),
};

export type WorkspaceWorkerTasks = typeof workspaceWorkerTasks;

export const workspaceWorkerErrors = [workspaceFsErrorCodec];

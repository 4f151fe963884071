import { runSkillToolInWorker } from '../../skills/executors/skill-runner.js';
import { hashWorkspaceFile } from '../../workspace/fs/workspace-file.reader.js';
import { searchWorkspace, type SearchWorkspaceOptions } from '../../workspace/fs/workspace-search.js';
import { walkWorkspaceTree, type ListWorkspaceOptions } from '../../workspace/fs/workspace-tree.walker.js';

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

// What a pool thread can run, by name. Payloads and results cross threads by structured clone, so both
// stay plain data.
export const workerTasks = {
  listWorkspaceRecursive: (payload: ListWorkspaceRecursivePayload) =>
    walkWorkspaceTree(payload.root, payload.path, { ...payload.options, recursive: true, blocking: true }),
  hashFile: (payload: HashFilePayload) => hashWorkspaceFile(payload.root, payload.path),
  searchWorkspace: (payload: SearchWorkspacePayload) => searchWorkspace(payload.root, payload.path, payload.options),
  // Tenant skill tools registered with mode "sync" (see src/skills).
  runSkillTool: runSkillToolInWorker,
} satisfies Record<string, (payload: never) => Promise<unknown>>;

export type WorkerTaskName = keyof typeof workerTasks;

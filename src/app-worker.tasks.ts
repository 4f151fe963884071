import { ErrorCodec } from './common/worker-pool/worker-error.codec.js';
import { skillWorkerErrors, skillWorkerTasks } from './skills/executors/skill-worker-tasks.js';
import { workspaceWorkerErrors, workspaceWorkerTasks } from './workspace/workspace-worker-tasks.js';

// Everything the app's worker pool runs, gathered from the features that own the tasks, and the error
// classes that must come back from a thread whole. Both sides of the pool use these two.
export const appWorkerTasks = { ...workspaceWorkerTasks, ...skillWorkerTasks };

export type AppWorkerTasks = typeof appWorkerTasks;

export const appWorkerErrors = new ErrorCodec([...workspaceWorkerErrors, ...skillWorkerErrors]);

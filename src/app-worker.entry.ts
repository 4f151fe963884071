import { appWorkerErrors, appWorkerTasks } from './app-worker.tasks.js';
import { createTaskRunner } from './common/worker-pool/task-runner.js';

// Loaded by each thread of the app's worker pool (compiled, from dist/); the pool calls `runTask`.
export const runTask = createTaskRunner(appWorkerTasks, appWorkerErrors);

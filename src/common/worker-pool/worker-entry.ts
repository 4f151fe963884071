import { settleTask, type TaskOutcome } from './worker-error.codec.js';
import { workerTasks } from './worker-tasks.js';

export interface TaskRequest {
  task: string;
  payload: unknown;
}

// Loaded by each pool thread; WorkerPool calls this export by name.
export async function runTask(request: TaskRequest): Promise<TaskOutcome> {
  const tasks: Record<string, (payload: unknown) => Promise<unknown>> = workerTasks as never;
  const task = Object.hasOwn(tasks, request.task) ? tasks[request.task] : undefined;
  if (!task) return { ok: false, error: { kind: 'error', name: 'Error', message: `Unknown worker task '${request.task}'` } };
  return settleTask(() => task(request.payload));
}

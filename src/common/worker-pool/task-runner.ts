import type { ErrorCodec, TaskOutcome } from './worker-error.codec.js';
import type { TaskRequest, TaskTable } from './task.js';
import { placeThisThread } from '../cpu-shares/tenant-cpu-groups.js';

// What a pool thread's entry module exports as `runTask`: the task table and error codec of the pool's
// owner, which this module knows nothing about.
export function createTaskRunner(tasks: TaskTable, codec: ErrorCodec): (request: TaskRequest) => Promise<TaskOutcome> {
  return (request) => {
    const task = Object.hasOwn(tasks, request.task) ? (tasks[request.task] as (payload: unknown) => Promise<unknown>) : undefined;
    if (!task)
      return Promise.resolve({ ok: false, error: { kind: 'error', name: 'Error', message: `Unknown worker task '${request.task}'` } });
    if (request.cpuGroup) placeThisThread(request.cpuGroup);
    return codec.settle(() => task(request.payload));
  };
}

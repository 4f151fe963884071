// What crosses between the pool and its threads, shared by worker-pool.ts (the main thread's side) and
// task-runner.ts (the thread's side).

// Tasks by name; payloads and results cross threads by structured clone, so both stay plain data.
export type TaskTable = Record<string, (payload: never) => Promise<unknown>>;

export interface TaskRequest {
  task: string;
  payload: unknown;
  // The cpu cgroup the thread runs the task in: its tenant's (see TenantCpuGroups), or the service's own.
  cpuGroup?: string;
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, type ResourceLimits } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { FairQueue } from './fair-queue.js';
import { defaultPerKeyThreads, defaultThreadCount } from '../../config/pool-size.js';
import type { TaskRequest, TaskTable } from './task.js';
import type { ErrorCodec, TaskOutcome } from './worker-error.codec.js';

type PayloadOf<Task> = Task extends (payload: infer P) => Promise<unknown> ? P : never;
type ResultOf<Task> = Task extends (payload: never) => Promise<infer R> ? R : never;

// The pool's users receive it under this token, typed with the part of the task table they use.
export const WORKER_POOL = Symbol('WORKER_POOL');

export interface WorkerPoolOptions {
  // Absolute path of the compiled module that exports `runTask` (see createTaskRunner).
  entry: string;
  // The error classes that must come back whole from a thread; the entry module uses the same codec.
  errors: ErrorCodec;
  // Defaults to one less than the CPUs available, and at least two.
  threads?: number;
  // Most tasks of one key running at once; defaults to half the threads, at least one.
  perKeyThreads?: number;
  // Threads beyond `threads` that only urgent tasks use (see FairQueue); defaults to one.
  reservedThreads?: number;
  // A thread idle this long exits; the next task starts a new one.
  idleTimeoutMs?: number;
  // Threads started with the pool and kept running, idle or not (default none: each starts with a task).
  warmThreads?: number;
  // V8 heap limits of each thread; defaults to workerResourceLimits.
  resourceLimits?: ResourceLimits;
  // The cpu cgroup a task of this key runs in (a tenant's, so that its tasks share the CPU as its share);
  // undefined leaves the thread where it is.
  cpuGroupOf?: (key: string, urgent: boolean) => string | undefined;
}

export interface RunOptions {
  signal?: AbortSignal;
  // Whose share of the pool the task counts against (the caller's tenant, say); tasks without one share ''.
  key?: string;
  // Short work that other calls wait on (a quota measurement): served first, with a reserved thread.
  urgent?: boolean;
}

// The task receives `cancel` (a MessagePort) in its payload and gets one message when the caller aborts.
export interface CancellablePayload {
  cancel: MessagePort;
}

export { defaultPerKeyThreads, defaultThreadCount } from '../../config/pool-size.js';

// By default a thread's young generation grows to 32 MB of semi-spaces like the main thread's: 40-50 MB more
// resident memory during a 10,000-entry walk, and no measurable speed-up. The old generation keeps V8's limit.
export const workerResourceLimits: ResourceLimits = { maxYoungGenerationSizeMb: 8 };

// Worker threads cannot load TypeScript. Compiled code (dist/**) uses the sibling file; code running from
// src/**/*.ts (Jest) uses the same file in dist/, which `npm run build` must have produced.
export function resolveWorkerEntry(moduleUrl: string, fileName: string): string {
  const modulePath = fileURLToPath(moduleUrl);
  const dir = path.dirname(modulePath);
  let entry = path.join(dir, fileName);
  if (modulePath.endsWith('.ts')) {
    const parts = dir.split(path.sep);
    const src = parts.lastIndexOf('src');
    if (src === -1) throw new Error(`Cannot locate the compiled worker entry for ${modulePath}: it is not under src/`);
    parts[src] = 'dist';
    entry = path.join(parts.join(path.sep), fileName);
  }
  if (!existsSync(entry)) {
    throw new Error(`Worker entry ${entry} does not exist; compile the sources first with \`npm run build\` (tsc -p tsconfig.build.json)`);
  }
  return entry;
}

// Runs its owner's tasks on a thread pool, off the event loop, shared fairly between the keys its callers
// give (FairQueue): tasks wait in the pool's own queues, never in piscina's. Aborting a waiting task takes it
// out of its queue; aborting a running one stops it for real: piscina terminates the thread running it and
// starts a fresh one when needed.
export class WorkerPool<Tasks extends TaskTable> {
  private readonly piscina: Piscina<TaskRequest, TaskOutcome>;
  private readonly errors: ErrorCodec;
  private readonly queue: FairQueue;
  private readonly cpuGroupOf: (key: string, urgent: boolean) => string | undefined;
  readonly perKeyThreads: number;

  constructor(options: WorkerPoolOptions) {
    const threads = options.threads ?? defaultThreadCount();
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`WorkerPool threads must be at least 1, got ${threads}`);
    const perKey = options.perKeyThreads ?? defaultPerKeyThreads(threads);
    if (!Number.isInteger(perKey) || perKey < 1 || perKey > threads)
      throw new Error(`WorkerPool perKeyThreads must be between 1 and ${threads}, got ${perKey}`);
    const reserved = options.reservedThreads ?? 1;
    if (!Number.isInteger(reserved) || reserved < 0) throw new Error(`WorkerPool reservedThreads must be at least 0, got ${reserved}`);
    this.errors = options.errors;
    this.cpuGroupOf = options.cpuGroupOf ?? (() => undefined);
    this.perKeyThreads = perKey;
    this.queue = new FairQueue({ shared: threads, perKey, reserved });
    this.piscina = new Piscina<TaskRequest, TaskOutcome>({
      // The entry is loaded through a CommonJS shim, with import(): see thread-entry.cts for why.
      filename: resolveWorkerEntry(import.meta.url, 'thread-entry.cjs'),
      workerData: { entry: options.entry },
      // The export every task calls (piscina's default for each run), loaded as the thread starts: a warm
      // thread has its whole entry loaded.
      name: 'runTask',
      minThreads: Math.min(options.warmThreads ?? 0, threads + reserved),
      maxThreads: threads + reserved,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      resourceLimits: options.resourceLimits ?? workerResourceLimits,
    });
  }

  get threads(): number {
    return this.piscina.maxThreads;
  }

  // Threads running now: the warm ones, and those started for tasks until they have been idle.
  get running(): number {
    return this.piscina.threads.length;
  }

  // Tasks waiting for their turn or a free thread.
  get queued(): number {
    return this.queue.waiting + this.piscina.queueSize;
  }

  // Share of the threads' capacity spent running tasks since the pool started (piscina's own measure).
  get utilization(): number {
    return this.piscina.utilization;
  }

  get completed(): number {
    return this.piscina.completed;
  }

  async run<K extends keyof Tasks & string>(task: K, payload: PayloadOf<Tasks[K]>, opts: RunOptions = {}): Promise<ResultOf<Tasks[K]>> {
    const key = opts.key ?? '';
    const urgent = opts.urgent === true;
    const outcome = await this.queue.submit(
      key,
      urgent,
      () => this.piscina.run({ task, payload, cpuGroup: this.cpuGroupOf(key, urgent) }, { signal: opts.signal ?? null }),
      opts.signal,
    );
    return this.errors.unwrap<ResultOf<Tasks[K]>>(outcome);
  }

  // For tasks that own resources outside the thread (a child process, a socket): instead of terminating
  // the thread, which would strand them, the task is told to cancel and cleans up itself.
  async runCooperative<K extends keyof Tasks & string>(
    task: K,
    payload: Omit<PayloadOf<Tasks[K]>, 'cancel'>,
    signal: AbortSignal,
    opts: Omit<RunOptions, 'signal'> = {},
  ): Promise<ResultOf<Tasks[K]>> {
    const key = opts.key ?? '';
    const urgent = opts.urgent === true;
    const outcome = await this.queue.submit(
      key,
      urgent,
      () => this.startCooperative(task, payload, signal, this.cpuGroupOf(key, urgent)),
      signal,
    );
    return this.errors.unwrap<ResultOf<Tasks[K]>>(outcome);
  }

  private async startCooperative(task: string, payload: object, signal: AbortSignal, cpuGroup: string | undefined): Promise<TaskOutcome> {
    const { port1, port2 } = new MessageChannel();
    const onAbort = () => port1.postMessage('abort');
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.piscina.run({ task, payload: { ...payload, cancel: port2 }, cpuGroup }, { transferList: [port2] });
    } finally {
      signal.removeEventListener('abort', onAbort);
      port1.close();
    }
  }

  // Waits for running tasks, then stops every thread.
  close(): Promise<void> {
    return this.piscina.close();
  }
}

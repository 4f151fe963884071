// Decides which waiting task starts next when a thread frees up. Each key (whose share a task counts against:
// a tenant, a workspace) has its own queue; keys are served in turn, and a key never runs more than
// `perKey` shared tasks at once, so one key's backlog delays its own tasks, not another's. An urgent task
// (short work other calls wait on) is served first and may also use the `reserved` slots that shared tasks
// never take: at most one urgent task per key runs at a time.

export interface FairQueueOptions {
  shared: number;
  perKey: number;
  reserved: number;
}

interface Job {
  key: string;
  urgent: boolean;
  start: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
  detach: () => void;
}

interface KeyState {
  shared: Job[];
  urgent: Job[];
  runningShared: number;
  runningUrgent: number;
  // The turn at which the key was last served (0: never).
  servedAt: number;
}

export class FairQueue {
  private readonly keys = new Map<string, KeyState>();
  private turn = 0;
  private runningShared = 0;
  private runningAll = 0;
  private waitingCount = 0;

  constructor(private readonly options: FairQueueOptions) {}

  get waiting(): number {
    return this.waitingCount;
  }

  get running(): number {
    return this.runningAll;
  }

  // `start` is called once the task's turn comes. An abort while it waits takes it out of its queue and
  // rejects with an AbortError: it never starts. Once started, `start` owns the signal.
  submit<T>(key: string, urgent: boolean, start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<T>((resolve, reject) => {
      const state = this.stateOf(key);
      const job: Job = { key, urgent, start, resolve: resolve as (value: unknown) => void, reject, detach: () => undefined };
      if (signal) {
        const onAbort = () => {
          const queue = urgent ? state.urgent : state.shared;
          const at = queue.indexOf(job);
          if (at === -1) return;
          queue.splice(at, 1);
          this.waitingCount--;
          this.dropIfIdle(key, state);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        job.detach = () => signal.removeEventListener('abort', onAbort);
      }
      (urgent ? state.urgent : state.shared).push(job);
      this.waitingCount++;
      this.dispatch();
    });
  }

  private stateOf(key: string): KeyState {
    let state = this.keys.get(key);
    if (!state) {
      state = { shared: [], urgent: [], runningShared: 0, runningUrgent: 0, servedAt: 0 };
      this.keys.set(key, state);
    }
    return state;
  }

  private dispatch(): void {
    for (;;) {
      const job = this.take(true) ?? this.take(false);
      if (!job) return;
      this.launch(job);
    }
  }

  // The next job of the given kind that may start now, from the key served longest ago that has one (a key
  // never served first, in the order they came).
  private take(urgent: boolean): Job | undefined {
    const { shared, perKey, reserved } = this.options;
    if (this.runningAll >= shared + reserved) return undefined;
    if (!urgent && this.runningShared >= shared) return undefined;
    let next: KeyState | undefined;
    for (const state of this.keys.values()) {
      const queue = urgent ? state.urgent : state.shared;
      if (queue.length === 0) continue;
      if (urgent ? state.runningUrgent >= 1 : state.runningShared >= perKey) continue;
      if (!next || state.servedAt < next.servedAt) next = state;
    }
    if (!next) return undefined;
    next.servedAt = ++this.turn;
    this.waitingCount--;
    return (urgent ? next.urgent : next.shared).shift();
  }

  private launch(job: Job): void {
    job.detach();
    const state = this.keys.get(job.key)!;
    if (job.urgent) state.runningUrgent++;
    else {
      state.runningShared++;
      this.runningShared++;
    }
    this.runningAll++;
    let started: Promise<unknown>;
    try {
      started = job.start();
    } catch (error) {
      started = Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    void started.then(job.resolve, job.reject).finally(() => {
      if (job.urgent) state.runningUrgent--;
      else {
        state.runningShared--;
        this.runningShared--;
      }
      this.runningAll--;
      this.dropIfIdle(job.key, state);
      this.dispatch();
    });
  }

  private dropIfIdle(key: string, state: KeyState): void {
    if (state.shared.length + state.urgent.length + state.runningShared + state.runningUrgent > 0) return;
    if (this.keys.get(key) === state) this.keys.delete(key);
  }
}

// What piscina answers for an aborted task, so callers see one kind of error whether it waited or ran.
function abortError(signal: AbortSignal): Error {
  const error = new Error('The task was aborted before it started', { cause: signal.reason });
  error.name = 'AbortError';
  return error;
}

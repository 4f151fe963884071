import { Worker } from 'node:worker_threads';
import { resolveWorkerEntry, workerResourceLimits } from '../../common/worker-pool/worker-pool.js';
import { readThreadErrors } from './read-thread.errors.js';
import { readWorkspaceFile, type ReadWorkspaceFileOptions, type ReadWorkspaceFileResult } from '../fs/workspace-file.reader.js';
import { WorkspaceFsError } from '../fs/workspace-fs.error.js';
import type { ReadRequest, ReadResponse } from './read-thread.worker.js';

// The read itself did nothing wrong: the caller may try again (a tool call answers io_error, retryable).
const notCompleted = (message: string) => new WorkspaceFsError('io_error', message);

interface Pending {
  resolve(value: ReadWorkspaceFileResult): void;
  reject(err: Error): void;
}

interface ReadThread {
  worker: Worker;
  pending: Map<number, Pending>;
  // Requests not posted yet: everything asked in one turn of the event loop goes in one message.
  outbox: ReadRequest[];
}

// Confined file reads on dedicated threads that make blocking system calls. On the event loop the same read
// costs a dozen trips through libuv's thread pool; here it is one message each way, which measured at a
// fraction of the event loop's time per read. Requests made in the same turn of the event loop travel
// together, so under load one wake-up of a thread serves many reads. The threads are separate from the
// worker pool so that a read never queues behind a walk of a large tree.
//
// With `threads: 0` reads stay on the event loop (asynchronous calls). A thread that dies fails the reads
// it held; the next read starts a new one.
export class ReadThreads {
  private readonly threads: (ReadThread | null)[];
  private readonly entry: string | null;
  private nextId = 1;
  private closed = false;

  constructor(threads: number) {
    if (!Number.isInteger(threads) || threads < 0) throw new Error(`ReadThreads needs 0 or more threads, got ${threads}`);
    this.threads = new Array<ReadThread | null>(threads).fill(null);
    this.entry = threads === 0 ? null : resolveWorkerEntry(import.meta.url, 'read-thread.worker.js');
  }

  // How many threads are running now (they start with the first read they get).
  get running(): number {
    return this.threads.filter((t) => t !== null).length;
  }

  // Threads this instance may run (WORKSPACE_READ_THREADS).
  get size(): number {
    return this.threads.length;
  }

  // Threads holding at least one read now, and the reads they hold (sampled when metrics are scraped).
  get busy(): number {
    let busy = 0;
    for (const t of this.threads) if (t !== null && t.pending.size > 0) busy++;
    return busy;
  }

  get pendingReads(): number {
    let pending = 0;
    for (const t of this.threads) if (t !== null) pending += t.pending.size;
    return pending;
  }

  readFile(root: string, path: string, options: Omit<ReadWorkspaceFileOptions, 'io'>): Promise<ReadWorkspaceFileResult> {
    if (this.closed) return Promise.reject(notCompleted('The service is shutting down; file reads are closed'));
    if (this.threads.length === 0) return readWorkspaceFile(root, path, options);
    const thread = this.leastBusy();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      if (thread.pending.size === 1) thread.worker.ref();
      if (thread.outbox.push({ id, root, path, options }) === 1) setImmediate(() => this.post(thread));
    });
  }

  // Reads still running fail; the threads stop.
  async close(): Promise<void> {
    this.closed = true;
    const running = this.threads.filter((t): t is ReadThread => t !== null);
    this.threads.fill(null);
    for (const thread of running) this.fail(thread, notCompleted('The service is shutting down; the file read was cancelled'));
    await Promise.all(running.map((t) => t.worker.terminate()));
  }

  private post(thread: ReadThread): void {
    const batch = thread.outbox;
    thread.outbox = [];
    // The thread died or the service closed meanwhile: its pending reads have been failed already.
    if (batch.length === 0 || !this.threads.includes(thread)) return;
    thread.worker.postMessage(batch);
  }

  private leastBusy(): ReadThread {
    let best = -1;
    for (let i = 0; i < this.threads.length; i++) {
      const t = this.threads[i];
      if (t === null) return this.start(i);
      if (best === -1 || t.pending.size < this.threads[best]!.pending.size) best = i;
    }
    return this.threads[best]!;
  }

  private start(slot: number): ReadThread {
    // A small young generation, like the pool's threads: a read keeps nothing alive once answered.
    const worker = new Worker(this.entry!, { resourceLimits: workerResourceLimits });
    const thread: ReadThread = { worker, pending: new Map(), outbox: [] };
    // An idle thread must not keep the process alive; it is ref'd while it holds reads.
    worker.unref();
    worker.on('message', (responses: ReadResponse[]) => {
      for (const response of responses) {
        const pending = thread.pending.get(response.id);
        if (!pending) continue;
        thread.pending.delete(response.id);
        if (response.outcome.ok) pending.resolve(response.outcome.value as ReadWorkspaceFileResult);
        else pending.reject(readThreadErrors.revive(response.outcome.error));
      }
      if (thread.pending.size === 0) worker.unref();
    });
    const lost = (reason: string) => {
      if (this.threads[slot] !== thread) return;
      this.threads[slot] = null;
      this.fail(thread, notCompleted(`The file read thread ${reason}; the read was not completed`));
      // Already gone after 'error' or 'exit'; after 'messageerror' it is stopped so that it cannot linger.
      void worker.terminate();
    };
    worker.on('error', (err) => lost(`failed (${err.message})`));
    worker.on('messageerror', (err) => lost(`sent an unreadable answer (${err.message})`));
    worker.on('exit', (code) => lost(`exited with code ${code}`));
    this.threads[slot] = thread;
    return thread;
  }

  private fail(thread: ReadThread, err: WorkspaceFsError): void {
    const pending = [...thread.pending.values()];
    thread.pending.clear();
    for (const p of pending) p.reject(err);
  }
}

import { Injectable, Logger } from '@nestjs/common';
import { AuditRepository, type InvocationRecord } from './audit.repository.js';

export interface AuditWriterOptions {
  // Rows held in memory at most; past it, callers wait for room (backpressure), nothing is dropped.
  maxQueue: number;
  // Rows per multi-row insert.
  batchSize: number;
  // How long a lone row waits for company before it is written.
  flushIntervalMs: number;
}

const RETRY_MIN_MS = 50;
const RETRY_MAX_MS = 2_000;
// On shutdown, keep trying a failing database this long before giving up on the queued rows.
const SHUTDOWN_FLUSH_DEADLINE_MS = 10_000;

// Errors about the data fail however often they are retried: PostgreSQL's classes 22 (data exception)
// and 23 (integrity constraint, e.g. the project was deleted). Anything else (connection refused, reset,
// pool timeout) is retried.
function isPermanent(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code) && !isMissingPartition(error);
}

// A row whose started_at has no partition yet (23514, "no partition of relation ... found for row").
function isMissingPartition(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '23514' && typeof message === 'string' && message.includes('no partition');
}

// Creates the partitions that rows starting at these times need (AuditPartitions.cover).
export type PartitionCover = (startedAt: readonly Date[]) => Promise<void>;

// What the writer reports as it goes (metrics); the writer itself knows nothing of where it goes.
export interface AuditWriterObserver {
  batchWritten(rows: number): void;
  writeFailed(): void;
}

interface Waiter {
  seq: number;
  resolve: () => void;
}

// Audit rows are written in batches: one multi-row insert every few milliseconds or every batchSize
// rows. A database that fails is retried with backoff while the rows wait in the bounded queue, so an
// outage loses nothing; the queue is flushed before the database closes on shutdown.
@Injectable()
export class AuditWriter {
  private readonly logger = new Logger('AuditWriter');
  private readonly queue: Array<{ seq: number; record: InvocationRecord }> = [];
  private enqueuedSeq = 0;
  private persistedSeq = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly roomWaiters: Array<() => void> = [];
  private readonly drainWaiters: Waiter[] = [];
  private giveUpAt: number | null = null;

  constructor(
    private readonly repository: AuditRepository,
    private readonly options: AuditWriterOptions,
    private readonly coverPartitions?: PartitionCover,
    private readonly observer?: AuditWriterObserver,
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  // Past this many waiting rows, calls wait for room (the readiness answer shows both).
  get capacity(): number {
    return this.options.maxQueue;
  }

  async enqueue(record: InvocationRecord): Promise<void> {
    while (this.queue.length >= this.options.maxQueue) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    this.queue.push({ seq: ++this.enqueuedSeq, record });
    if (this.queue.length >= this.options.batchSize) this.flushSoon(0);
    else this.flushSoon(this.options.flushIntervalMs);
  }

  // Resolves once every row enqueued before the call is in the database (read-your-writes for the API).
  drain(): Promise<void> {
    const seq = this.enqueuedSeq;
    if (this.persistedSeq >= seq) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ seq, resolve }));
  }

  // Called by the graceful shutdown once no call can add rows any more.
  async close(): Promise<void> {
    this.giveUpAt = Date.now() + SHUTDOWN_FLUSH_DEADLINE_MS;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
    if (this.queue.length > 0) this.logger.error(`shutting down with ${this.queue.length} audit rows not written`);
  }

  private flushSoon(delayMs: number): void {
    if (this.flushing || (this.timer && delayMs > 0)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
  }

  private flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0 && this.giveUpAt === null) this.flushSoon(0);
    });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    let retryMs = RETRY_MIN_MS;
    // One cover per failure: if the partition still cannot be made (its lock was busy), back off first.
    let covered = false;
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.options.batchSize);
      try {
        await this.repository.insertMany(batch.map((b) => b.record));
      } catch (caught) {
        this.observer?.writeFailed();
        let error = caught;
        if (isMissingPartition(error) && this.coverPartitions && !covered) {
          covered = true;
          try {
            await this.coverPartitions(batch.map((b) => b.record.startedAt));
            continue;
          } catch (failed) {
            error = failed;
          }
        }
        if (isPermanent(error)) {
          // A row the database will never take (its project was deleted while the call ran) must not
          // block the others: write them one by one and drop only the refused ones. A connection
          // failure on the way falls through to the retry below (rows already in are skipped then).
          try {
            await this.writeOneByOne(batch.map((b) => b.record));
            this.markWritten(batch);
            continue;
          } catch (transient) {
            error = transient;
          }
        }
        if (this.giveUpAt !== null && Date.now() >= this.giveUpAt) return;
        this.logger.warn(`audit batch of ${batch.length} rows not written yet, retrying in ${retryMs} ms: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, retryMs));
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        covered = false;
        continue;
      }
      retryMs = RETRY_MIN_MS;
      covered = false;
      this.observer?.batchWritten(batch.length);
      this.markWritten(batch);
    }
  }

  private markWritten(batch: Array<{ seq: number }>): void {
    this.queue.splice(0, batch.length);
    this.persistedSeq = batch.at(-1)!.seq;
    this.roomWaiters.splice(0, batch.length).forEach((resolve) => resolve());
    for (let i = this.drainWaiters.length - 1; i >= 0; i--) {
      if (this.drainWaiters[i].seq <= this.persistedSeq) this.drainWaiters.splice(i, 1)[0].resolve();
    }
  }

  private async writeOneByOne(records: InvocationRecord[]): Promise<void> {
    for (const record of records) {
      try {
        await this.repository.insertMany([record]);
      } catch (error) {
        if (!isPermanent(error)) throw error;
        this.logger.warn(`audit row ${record.id} dropped: the database refuses it (${String(error).slice(0, 200)})`);
      }
    }
  }
}

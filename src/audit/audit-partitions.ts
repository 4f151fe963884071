import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DATABASE_DRIVER, type DatabaseDriver } from '../database/database-driver.js';
import { expiredRanges, partitionWidthMs, type PartitionRange, rangesToCreate } from './partition-plan.js';

// How long a partition DDL may wait for its lock: a statement waiting for a lock holds up every
// insert queued behind it, so it gives up early and the next sweep tries again.
const DDL_LOCK_TIMEOUT_MS = 50;
const LONGEST_SWEEP_INTERVAL_MS = 10 * 60_000;

// Retention by partition (`invocations` is partitioned by range of started_at): partitions are created
// ahead of the clock, and a partition whose rows are all older than AUDIT_RETENTION_DAYS is dropped
// whole, a catalog change that leaves no dead rows to vacuum and never scans the table. Runs at start
// (after the migrations, before the server listens), then in the background.
@Injectable()
export class AuditPartitions implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('AuditRetention');
  private readonly retentionMs: number;
  private readonly widthMs: number;
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;

  constructor(
    @Inject(DATABASE_DRIVER) private readonly driver: DatabaseDriver,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.retentionMs = config.audit.retentionMs;
    this.widthMs = partitionWidthMs(this.retentionMs);
  }

  async onApplicationBootstrap(): Promise<void> {
    const sweep = () =>
      this.sweep().catch((error: unknown) => this.logger.warn(`audit partition sweep failed, retried later: ${String(error)}`));
    // Not fatal: a row that finds no partition makes the writer create it (cover below).
    await sweep();
    this.timer = setInterval(() => void sweep(), Math.min(LONGEST_SWEEP_INTERVAL_MS, Math.max(1000, this.widthMs / 4)));
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  // One pass: partitions from one width back to two widths ahead exist, expired ones are gone.
  sweep(now = Date.now()): Promise<void> {
    this.sweeping ??= this.runSweep(now).finally(() => (this.sweeping = null));
    return this.sweeping;
  }

  // Partitions for rows the writer could not place (a clock that jumped, a sweep that could not run while
  // the database was away). Rows past retention get one too: the next sweep drops it.
  async cover(startedAt: readonly Date[]): Promise<void> {
    const existing = await this.list();
    const wanted = new Map<string, PartitionRange>();
    for (const at of startedAt) {
      for (const range of rangesToCreate(existing, at.getTime(), at.getTime() + 1, this.widthMs)) wanted.set(range.name, range);
    }
    for (const range of wanted.values()) await this.create(range);
  }

  private async runSweep(now: number): Promise<void> {
    const existing = await this.list();
    for (const range of rangesToCreate(existing, now - this.widthMs, now + 2 * this.widthMs, this.widthMs)) await this.create(range);
    for (const range of expiredRanges(existing, now, this.retentionMs)) {
      if (await this.ddl(`DROP TABLE IF EXISTS "${range.name}"`)) {
        this.logger.log(`audit partition ${range.name} dropped (rows started before ${new Date(range.to).toISOString()})`);
      }
    }
  }

  private async create(range: PartitionRange): Promise<void> {
    const bounds = `FROM ('${new Date(range.from).toISOString()}') TO ('${new Date(range.to).toISOString()}')`;
    await this.ddl(`CREATE TABLE IF NOT EXISTS "${range.name}" PARTITION OF invocations FOR VALUES ${bounds}`);
  }

  async list(): Promise<PartitionRange[]> {
    const rows = await this.driver.query<{ name: string; from_ms: number; to_ms: number }>(
      `SELECT c.relname AS name,
         (extract(epoch FROM b.m[1]::timestamptz) * 1000)::float8 AS from_ms,
         (extract(epoch FROM b.m[2]::timestamptz) * 1000)::float8 AS to_ms
       FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       CROSS JOIN LATERAL (SELECT regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)') AS m) b
       WHERE i.inhparent = 'invocations'::regclass AND b.m IS NOT NULL
       ORDER BY 2`,
    );
    return rows.map((r) => ({ name: r.name, from: Number(r.from_ms), to: Number(r.to_ms) }));
  }

  // True when it ran; false when its lock was not free in time (tried again at the next sweep).
  private async ddl(statement: string): Promise<boolean> {
    return this.driver.withSession(async (session) => {
      try {
        await session.exec(`BEGIN; SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT_MS}ms'; ${statement}; COMMIT`);
        return true;
      } catch (error) {
        await session.exec('ROLLBACK').catch(() => undefined);
        const code = (error as { code?: unknown }).code;
        // Lock not free, or another instance made or dropped the same partition first.
        if (code === '55P03' || code === '42P07' || code === '42P17' || code === '42P01') return false;
        throw error;
      }
    });
  }
}

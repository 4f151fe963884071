import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DATABASE_DRIVER, type DatabaseDriver } from './database-driver.js';

// How often the embedded database is tidied up.
export const UPKEEP_EVERY_MS = 5 * 60_000;

// What PostgreSQL's background processes do on a server, done for the embedded database (PGlite), which runs
// as one backend and has none of them. Without autovacuum the space of updated and deleted rows is never
// reused: every table that keeps a bounded number of rows but changes them (stored answers expiring and
// replaced, keys issued and swept, a skill's review queue, toolsets rewritten) grew on disk without end (a
// table of 50 rows rewritten 1,000 times: 2.5 MB to 27 MB, and flat once vacuumed). Without a checkpointer,
// the write-ahead log is recycled only when it reaches max_wal_size. So on a schedule: each table with many
// dead rows is vacuumed (one at a time, so no query waits behind more than one table), then a checkpoint
// lets the log's old segments go. A server's own autovacuum and checkpointer do this on PostgreSQL. Every
// table is vacuumed: PGlite keeps no count of dead rows to choose by (pg_stat_user_tables reads 0), and a
// vacuum of a table with none skips its pages the visibility map marks clean (milliseconds).
@Injectable()
export class EmbeddedUpkeep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Database');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<string[]> | null = null;

  constructor(@Inject(DATABASE_DRIVER) private readonly driver: DatabaseDriver) {}

  onApplicationBootstrap(): void {
    if (this.driver.kind !== 'pglite') return;
    this.timer = setInterval(() => void this.run(), UPKEEP_EVERY_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  // The tables vacuumed (a vacuum of a table also tidies its TOAST table). Failures are logged; the next
  // run tries again.
  run(): Promise<string[]> {
    this.running ??= this.tidy().finally(() => (this.running = null));
    return this.running;
  }

  private async tidy(): Promise<string[]> {
    const vacuumed: string[] = [];
    try {
      // Plain tables and leaf partitions (a partitioned table holds no rows of its own).
      const tables = await this.driver.query<{ schema: string; name: string }>(
        `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
          ORDER BY n.nspname, c.relname`,
      );
      for (const { schema, name } of tables) {
        await this.driver.withSession((session) => session.exec(`VACUUM ${quoted(schema)}.${quoted(name)}`));
        vacuumed.push(name);
      }
      await this.driver.withSession((session) => session.exec('CHECKPOINT'));
    } catch (error) {
      this.logger.warn(`Tidying the embedded database failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    return vacuumed;
  }
}

const quoted = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

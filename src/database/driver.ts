import type { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import type { PrismaPGlite } from 'pglite-prisma-adapter';
import type { DatabaseTarget } from '../config/app-config.js';

// The driver's shape, shared by database-driver.ts (PostgreSQL, and the choice between the two) and
// pglite-driver.ts (embedded PGlite), which database-driver.ts loads only when it is used.

// One connection's worth of raw SQL, for the migrator (its advisory lock must stay on one session).
export interface SqlSession {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  // Runs a script of several statements (simple query protocol, no parameters).
  exec(sql: string): Promise<void>;
}

export type PrismaAdapterFactory = PrismaPg | PrismaPGlite;

// The database behind Prisma: PostgreSQL through a pg pool, or embedded PGlite in-process.
export interface DatabaseDriver {
  readonly kind: DatabaseTarget['kind'];
  // Where the data lives, for logs (no password).
  readonly description: string;
  readonly adapter: PrismaAdapterFactory;
  // One statement straight to the driver, for the hottest write (the audit batch): Prisma's query compiler
  // costs more than the statement itself there. PGlite runs it after any transaction in progress.
  // `prepareAs`: on PostgreSQL the statement is prepared once per connection under this name and then only
  // bound and executed (no parse and plan per call); the text must then be the same on every call.
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], prepareAs?: string): Promise<T[]>;
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  // PostgreSQL only: a new connection outside the pool, owned by the caller (the change bus's LISTEN).
  newClient?(applicationName: string): pg.Client;
  close(): Promise<void>;
}

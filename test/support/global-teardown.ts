import { rm } from 'node:fs/promises';
import path from 'node:path';
import { adminQuery, TEMPLATE_ENV } from './test-database.js';

export default async function globalTeardown(): Promise<void> {
  const template = process.env[TEMPLATE_ENV.pgTemplate];
  if (template && process.env.TEST_DATABASE_URL) {
    await adminQuery(process.env.TEST_DATABASE_URL, `DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  }
  const dump = process.env[TEMPLATE_ENV.pgliteDump];
  if (dump) await rm(path.dirname(dump), { recursive: true, force: true });
}

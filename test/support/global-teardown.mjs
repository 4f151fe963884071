import { rm } from 'node:fs/promises';
import path from 'node:path';
import { serverQuery, TEMPLATE_ENV } from './global-setup.mjs';

export default async function globalTeardown() {
  const template = process.env[TEMPLATE_ENV.pgTemplate];
  if (template && process.env.TEST_DATABASE_URL) {
    await serverQuery(process.env.TEST_DATABASE_URL, `DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  }
  const dump = process.env[TEMPLATE_ENV.pgliteDump];
  if (dump) await rm(path.dirname(dump), { recursive: true, force: true });
}

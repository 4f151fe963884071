import { serverQuery, TEMPLATE_ENV } from './global-setup.mjs';

export default async function globalTeardown() {
  const template = process.env[TEMPLATE_ENV.pgTemplate];
  if (template && process.env.TEST_DATABASE_URL) {
    await serverQuery(process.env.TEST_DATABASE_URL, `DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  }
  // The PGlite dump stays in node_modules/.cache for the next run (see global-setup.mjs).
}

// `npm run db:migrate`: applies pending migrations to DATABASE_URL (or the embedded PGlite) and exits.
import { ConfigError, loadConfig } from '../config/load-config.js';
import { createDatabaseDriver } from './database-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from './migrator.js';

async function main(): Promise<number> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 78;
    }
    throw error;
  }
  const driver = await createDatabaseDriver(config.database);
  try {
    const report = await driver.withSession(async (session) => migrate(session, await readMigrations(MIGRATIONS_DIR)));
    console.log(
      `${driver.description}: ${report.applied.length} applied (${report.applied.join(', ') || 'none'}), ${report.alreadyApplied.length} already applied`,
    );
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  } finally {
    await driver.close();
  }
}

process.exitCode = await main();

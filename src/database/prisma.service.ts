import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PrismaClient } from '../generated/prisma/client.js';
import { DATABASE_DRIVER, type DatabaseDriver } from './database-driver.js';
import { migrate, MIGRATIONS_DIR, readMigrations } from './migrator.js';

@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Database');

  constructor(
    @Inject(DATABASE_DRIVER) private readonly driver: DatabaseDriver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super({ adapter: driver.adapter });
  }

  get kind(): DatabaseDriver['kind'] {
    return this.driver.kind;
  }

  async onModuleInit(): Promise<void> {
    if (this.config.migrateOnStart) {
      const report = await this.driver.withSession(async (session) => migrate(session, await readMigrations(MIGRATIONS_DIR)));
      if (report.applied.length > 0) this.logger.log(`applied migrations: ${report.applied.join(', ')}`);
      if (report.unknown.length > 0) {
        this.logger.warn(`the database has migrations this build does not know: ${report.unknown.join(', ')}`);
      }
    }
    await this.$connect();
    this.logger.log(`connected to ${this.driver.description}`);
  }

  async isReady(): Promise<boolean> {
    try {
      await this.$queryRawUnsafe('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.driver.close();
  }
}

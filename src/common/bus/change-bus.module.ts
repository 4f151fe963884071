import { Global, Inject, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { DATABASE_DRIVER, type DatabaseDriver } from '../../database/database-driver.js';
import { ChangeBus, InProcessChangeBus } from './change-bus.js';
import { PostgresChangeBus } from './postgres-change-bus.js';

// The bus follows the database the instances share: LISTEN/NOTIFY on PostgreSQL, in-process on PGlite
// (which one process owns). The driver decides, not DATABASE_URL, so a test's injected driver counts.
function createChangeBus(config: AppConfig, driver: DatabaseDriver): ChangeBus {
  const { mode, channel } = config.changeBus;
  if (mode === 'in-process' || (mode === 'auto' && driver.kind !== 'postgres')) return new InProcessChangeBus();
  if (!driver.newClient) throw new Error('CHANGE_BUS=postgres needs a PostgreSQL DATABASE_URL');
  return new PostgresChangeBus({ newClient: (name) => driver.newClient!(name), channel });
}

@Global()
@Module({
  providers: [{ provide: ChangeBus, inject: [APP_CONFIG, DATABASE_DRIVER], useFactory: createChangeBus }],
  exports: [ChangeBus],
})
export class ChangeBusModule implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('ChangeBus');

  constructor(@Inject(ChangeBus) private readonly bus: ChangeBus) {}

  async onModuleInit(): Promise<void> {
    await this.bus.start();
    const status = this.bus.status();
    this.logger.log(
      `change bus: ${status.mode}${status.mode === 'postgres' ? (status.connected ? ', listening' : `, not connected yet (${status.lastError ?? 'retrying'})`) : ''}`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}

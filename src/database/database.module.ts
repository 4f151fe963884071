import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { createDatabaseDriver, DATABASE_DRIVER } from './database-driver.js';
import { EmbeddedUpkeep } from './embedded-upkeep.js';
import { PrismaService } from './prisma.service.js';

@Global()
@Module({
  providers: [
    {
      provide: DATABASE_DRIVER,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => createDatabaseDriver(config.database),
    },
    PrismaService,
    EmbeddedUpkeep,
  ],
  exports: [PrismaService, DATABASE_DRIVER, EmbeddedUpkeep],
})
export class DatabaseModule {}

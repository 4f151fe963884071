import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { PrismaService } from '../database/prisma.service.js';
import { TenantsService } from './tenants.service.js';

// So the quickstart works with no setup: on the first start of an empty embedded database, with no
// admin token and not in production, create tenant `default` and print its key once.
@Injectable()
export class DefaultTenantBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    private readonly tenants: TenantsService,
    private readonly prisma: PrismaService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.adminToken !== null || this.config.nodeEnv === 'production' || this.prisma.kind !== 'pglite') return;
    if (!(await this.tenants.isEmpty())) return;
    const tenant = await this.tenants.create('default');
    const { key } = await this.tenants.issueKey(tenant.id, { name: 'quickstart' });
    this.logger.log(`created tenant 'default' (${tenant.id}); its API key is printed once on stderr`);
    // Straight to the terminal, never through the (redacting) log pipeline.
    process.stderr.write(`\n  Toolgate API key for tenant 'default' (shown once):\n\n    ${key}\n\n`);
  }
}

import { Module } from '@nestjs/common';
import { AdminTenantsController } from './admin-tenants.controller.js';
import { ApiKeysController } from './api-keys.controller.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeysSweep } from './api-keys.sweep.js';
import { DefaultTenantBootstrap } from './default-tenant.bootstrap.js';
import { TenantsRepository } from './tenants.repository.js';
import { TenantsService } from './tenants.service.js';
import { WorkspaceModule } from '../workspace/workspace.module.js';
import { ProjectAccessModule } from '../projects/project-access.module.js';

@Module({
  imports: [WorkspaceModule, ProjectAccessModule],
  controllers: [AdminTenantsController, ApiKeysController],
  providers: [TenantsRepository, ApiKeysRepository, TenantsService, ApiKeysService, ApiKeysSweep, DefaultTenantBootstrap],
  exports: [TenantsService, ApiKeysService],
})
export class TenantsModule {}

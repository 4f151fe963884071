import { Injectable } from '@nestjs/common';
import { UNIQUE_TAKEN } from '../database/unique-violation.js';
import {
  type ApiKeyListResponseDto,
  type CreateApiKeyDto,
  type CreatedApiKeyResponseDto,
  type TenantListResponseDto,
  TenantResponseDto,
  type UpdateTenantDto,
} from './dto/tenant.dto.js';
import { BudgetsService } from '../budgets/budgets.service.js';
import { TenantBudgets } from '../budgets/tenant-budgets.js';
import type { TenantBudgetFigures } from '../config/app-config.js';
import type { Tenant } from '../generated/prisma/client.js';
import { ApiKeysService } from './api-keys.service.js';
import { TenantsRepository } from './tenants.repository.js';
import { WorkspacePlacement } from '../workspace/placement/workspace-placement.js';
import { tenantNameLikeId, tenantNameTaken, tenantNotFound } from './tenants.errors.js';

// A tenant id is a UUID (the database assigns it); a name in any spelling of one (upper case, without
// dashes, braced) is refused, so a name never reads as another tenant's id wherever one or the other is accepted.
const UUID_SHAPED = /^\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i;

@Injectable()
export class TenantsService {
  constructor(
    private readonly tenants: TenantsRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly placement: WorkspacePlacement,
    private readonly budgets: TenantBudgets,
    private readonly budgetOverrides: BudgetsService,
  ) {}

  private view(tenant: Tenant): TenantResponseDto {
    return TenantResponseDto.from(tenant, this.budgets.merge((tenant.budgets ?? {}) as Partial<TenantBudgetFigures>));
  }

  async create(name: string): Promise<TenantResponseDto> {
    if (UUID_SHAPED.test(name)) throw tenantNameLikeId(name);
    const tenant = await this.tenants.create(name);
    if (tenant === UNIQUE_TAKEN) throw tenantNameTaken(name);
    return this.view(tenant);
  }

  async list(): Promise<TenantListResponseDto> {
    return { items: (await this.tenants.list()).map((t) => this.view(t)) };
  }

  // Either part of the change may be left out; what is given is applied, the roots first (they are checked).
  async update(tenantId: string, dto: UpdateTenantDto): Promise<TenantResponseDto> {
    await this.assertExists(tenantId);
    if (dto.workspaceRoots) await this.placement.setTenantRoots(tenantId, dto.workspaceRoots);
    if (dto.budgets) await this.budgetOverrides.setOverrides(tenantId, dto.budgets);
    const tenant = await this.tenants.findById(tenantId);
    if (!tenant) throw tenantNotFound(tenantId);
    return this.view(tenant);
  }

  async delete(tenantId: string): Promise<void> {
    if (!(await this.tenants.deleteById(tenantId))) throw tenantNotFound(tenantId);
    this.apiKeys.forgetTenant(tenantId);
  }

  async issueKey(tenantId: string, dto: CreateApiKeyDto): Promise<CreatedApiKeyResponseDto> {
    await this.assertExists(tenantId);
    return this.apiKeys.issueAsAsked(tenantId, dto);
  }

  async listKeys(tenantId: string): Promise<ApiKeyListResponseDto> {
    await this.assertExists(tenantId);
    return this.apiKeys.list(tenantId);
  }

  isEmpty(): Promise<boolean> {
    return this.tenants.count().then((n) => n === 0);
  }

  private async assertExists(tenantId: string): Promise<void> {
    if (!(await this.tenants.findById(tenantId))) throw tenantNotFound(tenantId);
  }
}

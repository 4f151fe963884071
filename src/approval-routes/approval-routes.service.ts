import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { AppError } from '../common/errors/app-error.js';
import { SecretBox } from '../common/secrets/secret-box.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { checkEndpoint } from '../execution/net/endpoint-check.js';
import { ProjectAccess } from '../projects/project-access.js';
import {
  approvalRouteLimit,
  approvalRouteNotFound,
  approvalRouteSecretRefused,
  approvalRouteUrlRefused,
} from './approval-routes.errors.js';
import { ApprovalRoutesRepository } from './approval-routes.repository.js';
import {
  type ApprovalDeliveryListResponseDto,
  ApprovalDeliveryResponseDto,
  type ApprovalRouteListResponseDto,
  ApprovalRouteResponseDto,
  type CreateApprovalRouteDto,
  type CreatedApprovalRouteResponseDto,
  type ListApprovalDeliveriesQueryDto,
  slackShownUrl,
} from './dto/approval-route.dto.js';

// Standard Webhooks secrets: whsec_ and the base64 of the key (24 to 64 bytes).
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const GENERATED_SECRET_BYTES = 32;

// A project's approval routes: where its parked calls are announced. Admin keys only; the secret is sealed
// and never shown again (a generated one is shown in the answer that creates it).
@Injectable()
export class ApprovalRoutesService {
  constructor(
    private readonly repository: ApprovalRoutesRepository,
    private readonly projects: ProjectAccess,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(tenant: Tenant, projectId: string, dto: CreateApprovalRouteDto): Promise<CreatedApprovalRouteResponseDto> {
    await this.projects.assertOwned(tenant.tenantId, projectId);
    const url = await this.checkedUrl(dto.url);
    let secret: string | null = null;
    let shownUrl = url;
    let generated: string | undefined;
    if (dto.kind === 'slack') {
      if (dto.secret !== undefined) throw approvalRouteSecretRefused();
      // A Slack incoming-webhook URL is its credential: it rests sealed, like a webhook's secret, and the row
      // keeps only its origin, which is all that is ever shown.
      secret = url;
      shownUrl = slackShownUrl(url);
    } else if (dto.secret !== undefined) {
      const key = SECRET.exec(dto.secret)?.[1];
      const bytes = key === undefined ? 0 : Buffer.from(key, 'base64').length;
      if (bytes < 24 || bytes > 64) throw approvalRouteSecretRefused();
      secret = dto.secret;
    } else {
      generated = `whsec_${randomBytes(GENERATED_SECRET_BYTES).toString('base64')}`;
      secret = generated;
    }
    const max = this.config.calls.approvalDelivery.routesPerProject;
    const route = await this.repository.createWithin(
      {
        id: randomUUID(),
        tenantId: tenant.tenantId,
        projectId,
        kind: dto.kind,
        url: shownUrl,
        secret: secret === null ? null : this.box.seal(secret),
        createdByKeyId: tenant.apiKeyId,
        createdByName: tenant.keyName,
      },
      max,
    );
    if (route === null) throw approvalRouteLimit(max);
    return { ...ApprovalRouteResponseDto.from(route), ...(generated !== undefined ? { secret: generated } : {}) };
  }

  async list(tenant: Tenant, projectId: string): Promise<ApprovalRouteListResponseDto> {
    await this.projects.assertOwned(tenant.tenantId, projectId);
    return {
      items: (await this.repository.listForProject(tenant.tenantId, projectId)).map((route) => ApprovalRouteResponseDto.from(route)),
    };
  }

  async delete(tenant: Tenant, projectId: string, routeId: string): Promise<void> {
    await this.projects.assertOwned(tenant.tenantId, projectId);
    if (!(await this.repository.delete(tenant.tenantId, projectId, routeId))) throw approvalRouteNotFound(routeId);
  }

  async deliveries(
    tenant: Tenant,
    projectId: string,
    routeId: string,
    query: ListApprovalDeliveriesQueryDto,
  ): Promise<ApprovalDeliveryListResponseDto> {
    await this.projects.assertOwned(tenant.tenantId, projectId);
    if (!(await this.repository.findById(tenant.tenantId, projectId, routeId))) throw approvalRouteNotFound(routeId);
    const rows = await this.repository.listDeliveries(tenant.tenantId, projectId, routeId, query.limit ?? 50, query.status);
    return { items: rows.map((row) => ApprovalDeliveryResponseDto.from(row)) };
  }

  // http(s) only, and an address the fetch_url rules allow (FETCH_ALLOW_HOSTS opens one): 422 otherwise.
  private async checkedUrl(raw: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw approvalRouteUrlRefused('it is not an absolute URL', raw);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw approvalRouteUrlRefused(`the ${url.protocol} scheme is not allowed; only http: and https: are`, raw);
    try {
      await checkEndpoint(url.href, { allowHosts: this.config.tools.fetch.allowHosts });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const reason = typeof error.details?.reason === 'string' ? error.details.reason : error.message;
      throw approvalRouteUrlRefused(reason, raw);
    }
    return url.href;
  }
}

import { Injectable } from '@nestjs/common';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { ProjectAccess } from '../projects/project-access.js';
import { callWouldPark } from '../tools/call-parking.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { WorkspaceResolver } from '../workspace/workspace-resolver.js';
import { PolicyCheckBodyDto, type PolicyCheckResponseDto, PolicyResponseDto, type PolicySchemaResponseDto } from './dto/policy.dto.js';
import { PoliciesRepository } from './policies.repository.js';
import { PolicyDecider } from './policy-decider.js';
import { policyInvalid } from './policy.errors.js';
import { POLICY_NAMESPACE, POLICY_SCHEMA } from './policy-schema.js';
import { checkPolicyText } from './policy-set.js';

// Setting and reading the policy sets of a tenant and its projects, and asking what they decide of a call.
// A set is validated against the schema before it is stored: an invalid one is refused and the one in force stays.
@Injectable()
export class PoliciesService {
  constructor(
    private readonly repository: PoliciesRepository,
    private readonly decider: PolicyDecider,
    private readonly projects: ProjectAccess,
    private readonly registry: ToolRegistry,
    private readonly workspaces: WorkspaceResolver,
  ) {}

  schema(): PolicySchemaResponseDto {
    return { namespace: POLICY_NAMESPACE, text: POLICY_SCHEMA, cedarVersion: cedar.getCedarVersion() };
  }

  async getForTenant(tenant: Tenant): Promise<PolicyResponseDto> {
    return PolicyResponseDto.from('tenant', await this.repository.findForTenant(tenant.tenantId));
  }

  async setForTenant(tenant: Tenant, text: string): Promise<PolicyResponseDto> {
    checked(text);
    const record = await this.repository.saveForTenant(tenant.tenantId, text, { keyId: tenant.apiKeyId, name: tenant.keyName });
    this.decider.changed(tenant.tenantId);
    return PolicyResponseDto.from('tenant', record);
  }

  async getForProject(tenant: Tenant, projectId: string): Promise<PolicyResponseDto> {
    await this.projects.assertOwned(tenant.tenantId, projectId);
    return PolicyResponseDto.from('project', await this.repository.findForProject(tenant.tenantId, projectId));
  }

  async setForProject(tenant: Tenant, projectId: string, text: string): Promise<PolicyResponseDto> {
    await this.projects.assertOwned(tenant.tenantId, projectId);
    checked(text);
    const record = await this.repository.saveForProject(tenant.tenantId, projectId, text, { keyId: tenant.apiKeyId, name: tenant.keyName });
    this.decider.changed(tenant.tenantId, projectId);
    return PolicyResponseDto.from('project', record);
  }

  // The decision the call would get now, as the calling key or as `as` says; nothing runs and nothing is audited.
  async check(tenant: Tenant, projectId: string, body: PolicyCheckBodyDto): Promise<PolicyCheckResponseDto> {
    const project = await this.registry.forProject(tenant.tenantId, projectId);
    const tool = ToolRegistry.pick(project, body.tool);
    const args = tool.validator.parse(body.arguments ?? {});
    const { path: workspace } = await this.workspaces.resolve(tenant.tenantId, projectId);
    const as = body.as ?? {};
    const oauthClient = as.oauthClient ?? null;
    const decision = await this.decider.decide(tenant.tenantId, {
      projectId,
      principal: { keyId: tenant.apiKeyId, keyName: as.keyName ?? tenant.keyName, role: as.role ?? tenant.role, oauthClient },
      executor: tool.executor,
      exposed: null,
      args,
      channel: 'rest',
      workspace,
      pathPrefix: null,
      now: new Date(),
    });
    const effect = decision?.effect ?? 'allow';
    const parks = effect === 'ask' || (effect === 'allow' && callWouldPark({}, project.settings.approvalRequired, tool.executor));
    return { decision: effect, policies: decision?.policies ?? [], policyInForce: decision !== null, wouldPark: parks };
  }
}

function checked(text: string): void {
  if (text.trim() === '') return;
  const problems = checkPolicyText(text);
  if (problems) throw policyInvalid(problems);
}

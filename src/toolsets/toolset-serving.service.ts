import { Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { SerializedJson } from '../common/http/serialized-json.interceptor.js';
import type { HttpExchange } from '../common/http/http-exchange.decorator.js';
import { type InvokeAnswer, InvokeRouteService } from '../tools/routes/invoke-route.service.js';
import { McpEndpointService } from '../mcp/mcp-endpoint.service.js';
import type { RawToolCall } from '../tools/tool-call.gate.js';
import { formatTool, type ToolFormat } from '../tools/tool-formats.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { ToolsetCatalogues } from './toolset-catalogues.js';
import type { ExposedDefinition, ToolsetView } from './toolset-view.js';

// A toolset served as the project's tools are: the listing in every format, invoke, MCP; each through the
// one call path with the toolset's catalogue (tool-catalogue.ts), so validation, approval, rate limits,
// idempotency and the audit are the project's own.
@Injectable()
export class ToolsetServingService {
  private readonly listings = new WeakMap<ToolsetView, Map<string, SerializedJson>>();

  constructor(
    private readonly catalogues: ToolsetCatalogues,
    private readonly registry: ToolRegistry,
    private readonly invoker: InvokeRouteService,
    private readonly mcp: McpEndpointService,
  ) {}

  async list(tenant: Tenant, projectId: string, slug: string, format: ToolFormat = 'native', strict = false): Promise<SerializedJson> {
    const catalogue = await this.catalogues.catalogue(tenant.tenantId, projectId, slug);
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(tenant.tenantId, projectId), tenant.tools);
    const view = catalogue.view(tools) as ToolsetView;
    let byFormat = this.listings.get(view);
    if (!byFormat) this.listings.set(view, (byFormat = new Map<string, SerializedJson>()));
    const key = strict ? `${format}+strict` : format;
    let listing = byFormat.get(key);
    if (!listing) {
      listing = SerializedJson.of({ format, tools: view.definitions.map((d) => shaped(d, format, strict)) });
      byFormat.set(key, listing);
    }
    return listing;
  }

  async invoke(call: RawToolCall, slug: string, idempotencyKey: string | undefined, controller: AbortController): Promise<InvokeAnswer> {
    const catalogue = await this.catalogues.catalogue(call.tenantId, call.projectId, slug);
    return this.invoker.invoke({ ...call, catalogue }, idempotencyKey, controller);
  }

  async mcpMessage(tenant: Tenant, projectId: string, slug: string, exchange: HttpExchange, controller: AbortController): Promise<void> {
    const catalogue = await this.catalogues.catalogue(tenant.tenantId, projectId, slug);
    return this.mcp.handle({ tenant, projectId, controller, catalogue }, exchange);
  }

  async refuseMcpMethod(tenant: Tenant, projectId: string, slug: string): Promise<never> {
    await this.catalogues.catalogue(tenant.tenantId, projectId, slug);
    return this.mcp.refuseMethod({ tenantId: tenant.tenantId, projectId });
  }
}

// The provider's shape, with the toolset's title where the shape has one (MCP).
function shaped(definition: ExposedDefinition, format: ToolFormat, strict = false): Record<string, unknown> {
  const tool = formatTool(definition, format, { strict });
  if (definition.title === undefined) return tool;
  if (format === 'mcp' || format === 'native') return { ...tool, title: definition.title };
  return tool;
}

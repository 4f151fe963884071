import { Injectable } from '@nestjs/common';
import { SerializedJson } from '../../common/http/serialized-json.interceptor.js';
import { formatTool, type ToolFormat } from '../tool-formats.js';
import { type RegisteredTool, ToolRegistry } from '../tool-registry.js';

@Injectable()
export class ToolsService {
  // Each listing is encoded once per tool list and format: agents poll it, and with hundreds of skill tools
  // rebuilding it per request dominated. Keyed by the registry's tool array, which stays the same object until
  // the project's skill tools change (one shared array for built-ins only), so whatever makes SkillTools drop
  // its array (a skill enabled, disabled, updated or deleted, the project changed, the TTL) drops these too.
  // Weak keys tie the memory to SkillTools' bounded LRU: per cached project, one body per format asked for.
  private readonly listings = new WeakMap<readonly RegisteredTool[], Map<string, SerializedJson>>();

  constructor(private readonly registry: ToolRegistry) {}

  // `allowed`: the tools the asking key is bound to (null: all); a tool outside it is neither listed nor found.
  async list(
    tenantId: string,
    projectId: string,
    format: ToolFormat = 'native',
    allowed: readonly string[] | null = null,
    strict = false,
  ): Promise<SerializedJson> {
    const { tools } = ToolRegistry.restrict(await this.registry.forProject(tenantId, projectId), allowed);
    let byFormat = this.listings.get(tools);
    if (!byFormat) {
      byFormat = new Map();
      this.listings.set(tools, byFormat);
    }
    const key = strict ? `${format}+strict` : format;
    let listing = byFormat.get(key);
    if (!listing) {
      listing = SerializedJson.of({ format, tools: tools.map((t) => formatTool(t.executor.definition, format, { strict })) });
      byFormat.set(key, listing);
    }
    return listing;
  }

  async get(
    tenantId: string,
    projectId: string,
    toolName: string,
    format: ToolFormat = 'native',
    allowed: readonly string[] | null = null,
    strict = false,
  ) {
    const project = ToolRegistry.restrict(await this.registry.forProject(tenantId, projectId), allowed);
    return formatTool(ToolRegistry.pick(project, toolName).executor.definition, format, { strict });
  }
}

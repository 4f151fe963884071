import { Injectable } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../common/errors/app-error.js';
import type { SkillBody, SkillToolSpec } from '../skill-compiler.js';
import { mcpImportRefused } from '../skills.errors.js';
import { UpstreamMcpClients } from './upstream-mcp-clients.js';
import { definitionHash, type UpstreamDefinition, upstreamDefinition } from '../review/definition-pin.js';
import { reviewDescriptions } from '../review/description-rules.js';

export interface McpSource {
  type: 'mcp';
  url: string;
  headers?: Record<string, string>;
  tools?: string[];
  // The admin vouches for the server's annotations; without it they are not republished.
  trustAnnotations?: boolean;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_DESCRIPTION = 4096;

const importRefused = mcpImportRefused;

// A skill whose tools come from an MCP server: at registration (and at each new version) the server's
// tools are listed through the guarded client and turned into ordinary skill tools with an `mcp`
// executor. Their schemas then go through the same vetting as a tenant's own (SkillCompiler.vet).
@Injectable()
export class McpSkillImporter {
  constructor(private readonly upstreams: UpstreamMcpClients) {}

  async expand(tenantId: string, body: SkillBody & { source?: McpSource }): Promise<SkillBody> {
    const { source, ...rest } = body;
    if (!source) return body;
    let upstream: Tool[];
    try {
      upstream = await this.upstreams.listTools({ tenantId, url: source.url, headers: source.headers });
    } catch (error) {
      // The address policy's refusal (url_blocked) stays as it is: it says what to change.
      if (error instanceof AppError) throw error;
      throw importRefused(`Could not list the tools of the MCP server: ${(error as Error).message}`);
    }
    const wanted = source.tools ? new Set(source.tools) : null;
    const missing = source.tools?.filter((name) => !upstream.some((tool) => tool.name === name)) ?? [];
    if (missing.length > 0) {
      throw importRefused(`The MCP server has no tool named ${missing.map((n) => `'${n}'`).join(', ')}; it offers ${upstream.map((t) => t.name).join(', ') || 'none'}`, { missing });
    }
    const picked = upstream.filter((tool) => !wanted || wanted.has(tool.name));
    if (picked.length === 0) throw importRefused('The MCP server offers no tools to import');
    if (picked.length > 128) throw importRefused(`The MCP server offers ${picked.length} tools; name at most 128 in source.tools`);
    return { ...rest, tools: picked.map((tool) => toSkillTool(upstreamDefinition(tool), source, false)) };
  }
}

// A tool of an MCP source as a skill tool, pinned: its upstream definition and hash kept, what the description
// rules flag recorded, and a flagged one withheld until an admin reviews it (src/skills/review).
export function toSkillTool(tool: UpstreamDefinition, source: Pick<McpSource, 'url' | 'headers' | 'trustAnnotations'>, reviewed: boolean): SkillToolSpec {
  if (!TOOL_NAME.test(tool.name)) {
    throw importRefused(`Tool '${tool.name.slice(0, 128)}': its name is not one model providers accept (^[a-zA-Z0-9_-]{1,64}$)`, { tool: tool.name.slice(0, 128) });
  }
  // An upstream server's hints are claims of a server the tenant does not control (the MCP specification
  // calls them untrusted): served as Toolgate's own statement only when the admin said to trust them.
  const hints = source.trustAnnotations === true ? ((tool.annotations ?? {}) as McpHints) : {};
  const flags = reviewDescriptions(tool);
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title.slice(0, 128) } : {}),
    description: (tool.description || tool.title || tool.name).slice(0, MAX_DESCRIPTION),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
    executor: { type: 'mcp', url: source.url, ...(source.headers ? { headers: source.headers } : {}), tool: tool.name },
    // MCP's defaults for hints left out (or not trusted): not read-only, destructive, not idempotent, open world.
    annotations: {
      readOnly: hints.readOnlyHint ?? false,
      destructive: hints.readOnlyHint === true ? false : (hints.destructiveHint ?? true),
      idempotent: hints.idempotentHint ?? false,
      openWorld: hints.openWorldHint ?? true,
    },
    pin: { hash: definitionHash(tool), reviewedAt: new Date().toISOString(), upstream: tool, ...(flags.length > 0 && { flags }) },
    ...(flags.length > 0 && !reviewed && { withheld: 'flagged' as const }),
  };
}

interface McpHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

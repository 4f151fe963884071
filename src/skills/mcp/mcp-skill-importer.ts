import { Injectable } from '@nestjs/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../../common/errors/app-error.js';
import type { SkillBody, SkillToolSpec } from '../skill-compiler.js';
import { mcpImportRefused } from '../skills.errors.js';
import { UpstreamMcpClients } from './upstream-mcp-clients.js';
import { ConnectionTokens } from '../../connections/connection-tokens.js';
import { McpAuthDiscovery } from '../../connections/mcp-auth-discovery.js';
import { AuthorizationRequired } from '../../execution/authorization-required.js';
import { executorAuthOf, type McpSourceAuth, sourceToken, withBearer, withSourceToken } from './mcp-source-auth.js';
import { definitionHash, type UpstreamDefinition, upstreamDefinition } from '../definitions/definition-pin.js';
import { reviewDescriptions } from '../definitions/description-rules.js';

export interface McpSource {
  type: 'mcp';
  url: string;
  headers?: Record<string, string>;
  tools?: string[];
  // The admin vouches for the server's annotations; without it they are not republished.
  trustAnnotations?: boolean;
  // The server asks for OAuth (see mcp-source-auth.ts).
  auth?: McpSourceAuth;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_DESCRIPTION = 4096;

const importRefused = mcpImportRefused;

// A skill whose tools come from an MCP server: at registration (and at each new version) the server's
// tools are listed through the guarded client and turned into ordinary skill tools with an `mcp`
// executor. Their schemas then go through the same vetting as a tenant's own (SkillCompiler.vet).
@Injectable()
export class McpSkillImporter {
  constructor(
    private readonly upstreams: UpstreamMcpClients,
    private readonly tokens: ConnectionTokens,
    private readonly discovery: McpAuthDiscovery,
  ) {}

  // `user`: the end user the registering request names (Toolgate-User); a source that asks for OAuth is read
  // with that person's connection, or the tenant's own when it names none (or the source says as: tenant).
  async expand(tenantId: string, body: SkillBody & { source?: McpSource }, user: string | null = null): Promise<SkillBody> {
    const { source, ...rest } = body;
    if (!source) return body;
    let upstream: Tool[];
    try {
      upstream = await this.readTools(tenantId, source, user);
    } catch (error) {
      // The address policy's refusal (url_blocked) stays as it is: it says what to change.
      if (error instanceof AppError) throw error;
      throw importRefused(`Could not list the tools of the MCP server: ${(error as Error).message}`);
    }
    const wanted = source.tools ? new Set(source.tools) : null;
    const missing = source.tools?.filter((name) => !upstream.some((tool) => tool.name === name)) ?? [];
    if (missing.length > 0) {
      throw importRefused(
        `The MCP server has no tool named ${missing.map((n) => `'${n}'`).join(', ')}; it offers ${upstream.map((t) => t.name).join(', ') || 'none'}`,
        { missing },
      );
    }
    const picked = upstream.filter((tool) => !wanted || wanted.has(tool.name));
    if (picked.length === 0) throw importRefused('The MCP server offers no tools to import');
    if (picked.length > 128) throw importRefused(`The MCP server offers ${picked.length} tools; name at most 128 in source.tools`);
    return { ...rest, tools: picked.map((tool) => toSkillTool(upstreamDefinition(tool), source, false)) };
  }

  // The server's tools, read with the source's connection when it asks for OAuth (the review reads them again so).
  async readTools(tenantId: string, source: McpSource, user: string | null): Promise<Tool[]> {
    if (!source.auth) return this.upstreams.listTools({ tenantId, url: source.url, headers: source.headers });
    // A source that discovers its authorization server registers Toolgate there first (once per tenant and server).
    if (source.auth.discover === true) await this.discovery.providerFor(tenantId, source.url);
    const auth = executorAuthOf(source)!;
    const reader = auth.as === 'tenant' ? null : user;
    try {
      return await withSourceToken(
        (stale) => sourceToken(this.tokens, tenantId, source.url, auth, reader, stale, true),
        (token) => this.upstreams.listTools({ tenantId, url: source.url, headers: withBearer(source.headers, token) }),
        [],
      );
    } catch (error) {
      if (error instanceof AuthorizationRequired) throw importAuthorizationRequired(error, reader);
      throw error;
    }
  }
}

// The registering admin (or the tenant) has no usable connection yet: the link to make one, then register again.
function importAuthorizationRequired(required: AuthorizationRequired, user: string | null): AppError {
  const { authorization } = required;
  const whose = user === null ? 'the tenant’s own connection' : `the connection of user '${user}'`;
  return new AppError(
    409,
    'authorization_required',
    `The MCP server's tools are read with ${whose} at '${authorization.provider}', which is not usable yet. Open ${authorization.url} to connect, then register the skill again. The link works once, until ${authorization.expiresAt}.`,
    { details: { authorization } },
  );
}

// A tool of an MCP source as a skill tool, pinned: its upstream definition and hash kept, what the description
// rules flag recorded, and a flagged one withheld until an admin reviews it (src/skills/review).
export function toSkillTool(
  tool: UpstreamDefinition,
  source: Pick<McpSource, 'url' | 'headers' | 'trustAnnotations' | 'auth'>,
  reviewed: boolean,
): SkillToolSpec {
  if (!TOOL_NAME.test(tool.name)) {
    throw importRefused(`Tool '${tool.name.slice(0, 128)}': its name is not one model providers accept (^[a-zA-Z0-9_-]{1,64}$)`, {
      tool: tool.name.slice(0, 128),
    });
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
    executor: {
      type: 'mcp',
      url: source.url,
      ...(source.headers ? { headers: source.headers } : {}),
      tool: tool.name,
      ...(source.auth && { auth: executorAuthOf(source) }),
    },
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

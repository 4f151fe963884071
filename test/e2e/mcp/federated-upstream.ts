import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  type CompleteResult,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { TestApp, TestTenant } from '../../support/test-app.js';
import { enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { UpstreamMcpServer } from './upstream-mcp-server.js';

// What an upstream MCP server offers beside its one tool; each part left out is not declared. Tests change
// it between requests to play a server that lists or answers something else (hostile ones included).
export interface Offer {
  resources?: Resource[];
  templates?: ResourceTemplate[];
  prompts?: Prompt[];
  completions?: boolean;
  // Default: one text content item for the URI asked.
  read?: (uri: string) => ReadResourceResult | Promise<ReadResourceResult>;
  // Default: one user message naming the prompt and its arguments.
  prompt?: (name: string, args: Record<string, string>) => GetPromptResult | Promise<GetPromptResult>;
}

// A real SDK server on loopback (sessions, as UpstreamMcpServer) with one tool, `tool`, and the resources,
// templates, prompts and completions of `offer`. `requests` records each read, prompt and completion.
export class FederatedUpstream extends UpstreamMcpServer {
  readonly requests: string[] = [];

  constructor(
    readonly tool: string,
    public offer: Offer,
  ) {
    super([{ name: tool, description: `The tool of ${tool}`, inputSchema: { type: 'object', properties: {} } }]);
  }

  protected override mcpServer(): Server {
    const { offer } = this;
    const capabilities = {
      tools: {},
      ...(offer.resources || offer.templates ? { resources: {} } : {}),
      ...(offer.prompts ? { prompts: {} } : {}),
      ...(offer.completions ? { completions: {} } : {}),
    };
    const server = new Server({ name: this.tool, version: '1.0.0' }, { capabilities });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.tools }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      this.calls.push(request.params.name);
      return { content: [{ type: 'text', text: `${this.tool} ran` }] };
    });
    if (capabilities.resources) {
      server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: this.offer.resources ?? [] }));
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: this.offer.templates ?? [] }));
      server.setRequestHandler(ReadResourceRequestSchema, (request) => {
        this.requests.push(`read ${request.params.uri}`);
        return this.offer.read
          ? this.offer.read(request.params.uri)
          : { contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `${this.tool} says: ${request.params.uri}` }] };
      });
    }
    if (capabilities.prompts) {
      server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: this.offer.prompts ?? [] }));
      server.setRequestHandler(GetPromptRequestSchema, (request) => {
        const args = request.params.arguments ?? {};
        this.requests.push(`prompt ${request.params.name}`);
        if (this.offer.prompt) return this.offer.prompt(request.params.name, args);
        if (!this.offer.prompts?.some((p) => p.name === request.params.name))
          throw new McpError(-32602, `No prompt ${request.params.name}`);
        return { messages: [{ role: 'user', content: { type: 'text', text: `${request.params.name} with ${JSON.stringify(args)}` } }] };
      });
    }
    if (capabilities.completions) {
      server.setRequestHandler(CompleteRequestSchema, (request): CompleteResult => {
        const { ref, argument } = request.params;
        this.requests.push(`complete ${ref.type === 'ref/prompt' ? ref.name : ref.uri} ${argument.name}=${argument.value}`);
        const values = ['alpha', 'alpine', 'beta'].filter((v) => v.startsWith(argument.value));
        return { completion: { values, total: values.length, hasMore: false } };
      });
    }
    return server;
  }
}

// The upstream's tool imported as a skill and enabled on the project; `timeoutMs` bounds every request to
// it, its resources and prompts included.
export async function enableSource(
  t: TestApp,
  tenant: TestTenant,
  projectId: string,
  upstream: FederatedUpstream,
  timeoutMs?: number,
): Promise<{ id: string; name: string }> {
  const name = uniqueName(upstream.tool.replace(/_/g, '-'));
  const tool = {
    name: upstream.tool,
    description: `The tool of ${upstream.tool}`,
    inputSchema: { type: 'object', properties: {} },
    executor: { type: 'mcp', url: upstream.url, tool: upstream.tool },
    ...(timeoutMs ? { timeoutMs } : {}),
  };
  const posted = await postSkill(t, tenant, { name, version: '1.0.0', description: `Tools of ${upstream.tool}`, tools: [tool] });
  expect({ status: posted.status, error: posted.body.error }).toEqual({ status: 201, error: undefined });
  expect((await enableSkill(t, tenant, projectId, posted.body.id as string)).status).toBe(201);
  return { id: posted.body.id as string, name };
}

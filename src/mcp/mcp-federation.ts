import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  McpError,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { boundedJson, measureJson, RESULT_MAX_DEPTH } from '../common/json/bounded-json.js';
import { redactArguments } from '../execution/validation/argument-redaction.js';
import { UpstreamMcpClients, type UpstreamTarget } from '../skills/mcp/upstream-mcp-clients.js';
import { InvocationRecorder } from '../tools/invocation-recorder.js';
import { callWouldPark } from '../tools/call-parking.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { asMcpError, asMcpFailure, isWorkspaceUri, printable, unique } from './mcp-federation-rules.js';
import { RESOURCE_NOT_FOUND, type ResourceCaller } from './mcp-workspace-resources.js';
import { templateMatches } from './uri-template-match.js';

// Entries taken from one source's listing (over at most MAX_PAGES pages): a source that lists more is
// listed up to there, so a hostile one cannot flood a client or Toolgate's memory.
export const FEDERATED_LIST_LIMIT = 500;
const MAX_PAGES = 10;
// Bytes of one source's listing as JSON, and the nesting and size of one entry: past them entries are left
// out, so sources that list megabytes of descriptions (or JSON nested thousands deep, which no writer can
// write) cannot make one answer huge or unanswerable.
export const FEDERATED_LIST_MAX_BYTES = 1024 * 1024;
const LISTED_ITEM_LIMITS = { maxDepth: 32, maxBytes: 64 * 1024 };
// A read's or prompt's whole answer, as for a tool's result.
const RELAYED_ANSWER_LIMITS = { maxDepth: RESULT_MAX_DEPTH, maxBytes: 4 * 1024 * 1024 };
// Contents of one read, messages of one prompt and values of one completion that are relayed.
export const FEDERATED_ITEMS_LIMIT = 100;
// How long asking a source what it offers (at initialize, server/discover) may take.
const CAPABILITIES_TIMEOUT_MS = 5_000;
// A source that could not be asked is not asked again for this long (each initialize would wait on it),
// and offers nothing meanwhile; sources remembered so at most.
export const UNREACHABLE_FOR_MS = 15_000;
const UNREACHABLE_MAX = 1_024;

// One upstream MCP server behind the project's enabled MCP skills: every skill tool with the same URL and
// headers is the same server. `name` is the first such skill's source (skill:<name>@<version>).
export interface FederatedSource {
  // The upstream's URL and headers: each listing builds its own source objects, so they compare by this.
  key: string;
  name: string;
  target: UpstreamTarget;
  timeoutMs: number;
}

export interface FederatedFeatures {
  resources: boolean;
  prompts: boolean;
  completions: boolean;
  // Log messages during its tools' calls (relayed to a client that set a level).
  logging: boolean;
}

type Listed<T> = { item: T; source: FederatedSource };

// The resources, resource templates, prompts and completions of the project's MCP sources, relayed under
// their own URIs and names, as their tools are relayed under their own names. What keeps that safe:
// - only sources whose tools the key may call without a person's approval, on the project's own endpoint;
// - a URI or prompt name is routed to the one source whose live listing offers it; one offered by two
//   sources is listed by neither and refused, naming both, as two skills' same tool name is refused;
// - `file:` URIs are the workspace's: never listed from, routed to, or read back from a source;
// - Toolgate only ever sends requests to the source's own URL, through the guarded client (address
//   policy, timeouts, the answer's size cap); a URI an upstream lists is never fetched;
// - listings are cut to FEDERATED_LIST_LIMIT, reads and prompts to FEDERATED_ITEMS_LIMIT items;
// - each read and prompt is one audit row (channel mcp), as a tool call is.
@Injectable()
export class McpFederation {
  private readonly logger = new Logger('McpFederation');
  // Until when each unreachable source (by tenant, URL and headers) is left alone.
  private readonly unreachable = new Map<string, number>();

  constructor(
    private readonly registry: ToolRegistry,
    private readonly upstreams: UpstreamMcpClients,
    private readonly recorder: InvocationRecorder,
  ) {}

  async sources(caller: ResourceCaller): Promise<FederatedSource[]> {
    // A toolset shows chosen tools, not the servers behind them; a key whose every call waits for a
    // person has nothing a read could wait in.
    if (caller.catalogue || caller.principal.parksEveryCall === true) return [];
    const project = await this.registry.forProject(caller.tenantId, caller.projectId);
    const { tools } = ToolRegistry.restrict(project, caller.principal.tools);
    const sources = new Map<string, FederatedSource>();
    for (const { executor } of tools) {
      const upstream = executor.mcpUpstream;
      if (!upstream || callWouldPark(caller.principal, project.settings.approvalRequired, executor)) continue;
      const key = JSON.stringify([upstream.url, upstream.headers ?? {}]);
      if (sources.has(key)) continue;
      sources.set(key, { key, name: executor.definition.source, target: { tenantId: caller.tenantId, ...upstream }, timeoutMs: executor.definition.timeoutMs });
    }
    return [...sources.values()];
  }

  // What the key's sources declared; a source that cannot be reached offers nothing for now.
  async features(caller: ResourceCaller): Promise<FederatedFeatures> {
    const declared = await Promise.all((await this.sources(caller)).map((source) => this.capabilities(source, caller)));
    return {
      resources: declared.some((c) => c.resources !== undefined),
      prompts: declared.some((c) => c.prompts !== undefined),
      completions: declared.some((c) => c.completions !== undefined),
      logging: declared.some((c) => c.logging !== undefined),
    };
  }

  // Every source's resources (not `file:`), sorted by URI; a URI two sources list is left out.
  async resources(caller: ResourceCaller): Promise<Resource[]> {
    return unique(await this.listedResources(caller), (item) => item.uri)
      .map(({ item }) => item)
      .sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  }

  async templates(caller: ResourceCaller): Promise<ResourceTemplate[]> {
    return unique(await this.listedTemplates(caller), (item) => item.uriTemplate).map(({ item }) => item);
  }

  async prompts(caller: ResourceCaller): Promise<Prompt[]> {
    return unique(await this.listedPrompts(caller), (item) => item.name).map(({ item }) => item);
  }

  async read(caller: ResourceCaller, uri: string): Promise<ReadResourceResult> {
    const [resources, templates] = await Promise.all([this.listedResources(caller), this.listedTemplates(caller)]);
    // One source listing the URI and offering a template that matches it too is still one source.
    const offering = new Map(
      [...resources.filter(({ item }) => item.uri === uri), ...templates.filter(({ item }) => templateMatches(item.uriTemplate, uri))].map(({ source }) => [source.key, source]),
    );
    const source = this.onlyOne([...offering.values()], `The resource ${printable(uri)}`, () => new McpError(RESOURCE_NOT_FOUND, `No resource ${printable(uri)}: neither the workspace nor an MCP source this key may use offers it`, { uri }));
    const result = await this.audited(caller, source, 'resources/read', { uri }, (client, options) => client.readResource({ uri }, options));
    // A source answers for its own URIs only: contents claiming to be workspace files, or a URI another
    // source offers, are not handed on.
    const elsewhere = (other: string) =>
      resources.some((r) => r.source.key !== source.key && r.item.uri === other) ||
      templates.some((t) => t.source.key !== source.key && templateMatches(t.item.uriTemplate, other));
    const contents = (result.contents ?? []).filter((item) => typeof item.uri === 'string' && !isWorkspaceUri(item.uri) && !elsewhere(item.uri));
    return { contents: contents.slice(0, FEDERATED_ITEMS_LIMIT) };
  }

  async getPrompt(caller: ResourceCaller, name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
    const offering = (await this.listedPrompts(caller)).filter(({ item }) => item.name === name).map(({ source }) => source);
    const source = this.onlyOne(offering, `The prompt ${printable(name)}`, () => new McpError(ErrorCode.InvalidParams, `No prompt ${printable(name)}: no MCP source this key may use offers it`));
    const result = await this.audited(caller, source, 'prompts/get', { name, arguments: args ?? {} }, (client, options) => client.getPrompt({ name, ...(args ? { arguments: args } : {}) }, options));
    // A message embedding a `file:` resource would pass a source's text off as a workspace file: left out.
    const messages = result.messages.filter((message) => !(message.content.type === 'resource' && isWorkspaceUri(message.content.resource.uri)));
    return { ...(result.description ? { description: result.description } : {}), messages: messages.slice(0, FEDERATED_ITEMS_LIMIT) };
  }

  // A prompt's or a resource template's argument, completed by the one source offering it.
  async complete(caller: ResourceCaller, ref: { type: string; uri?: string; name?: string }, argument: { name: string; value: string }, context?: { arguments?: Record<string, string> }): Promise<CompleteResult> {
    let offering: FederatedSource[];
    let what: string;
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
      const name = ref.name;
      offering = (await this.listedPrompts(caller)).filter(({ item }) => item.name === name).map(({ source }) => source);
      what = `The prompt ${printable(name)}`;
    } else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
      const template = ref.uri;
      offering = (await this.listedTemplates(caller)).filter(({ item }) => item.uriTemplate === template).map(({ source }) => source);
      what = `The resource template ${printable(template)}`;
    } else {
      throw new McpError(ErrorCode.InvalidParams, 'params.ref must be { type: "ref/prompt", name } or { type: "ref/resource", uri }');
    }
    const source = this.onlyOne(offering, what, () => new McpError(ErrorCode.InvalidParams, `${what} is offered by no MCP source this key may use, nor is it the workspace's file:///{path}`));
    const declared = await this.capabilities(source, caller);
    if (!declared.completions) return { completion: { values: [], total: 0, hasMore: false } };
    const result = await this.upstreams.request(source.target, source.timeoutMs, this.signal(caller, source), (client) =>
      client.complete({ ref: ref.type === 'ref/prompt' ? { type: 'ref/prompt', name: ref.name! } : { type: 'ref/resource', uri: ref.uri! }, argument, ...(context ? { context } : {}) }, this.options(caller, source)),
    ).catch(asMcpError);
    const values = result.completion.values.filter((value) => typeof value === 'string').slice(0, FEDERATED_ITEMS_LIMIT);
    return { completion: { values, ...(typeof result.completion.total === 'number' ? { total: result.completion.total } : {}), hasMore: result.completion.hasMore === true || values.length < result.completion.values.length } };
  }

  private listedResources(caller: ResourceCaller): Promise<Array<Listed<Resource>>> {
    return this.gather(caller, 'resources', (client, cursor, options) =>
      client.listResources(cursor ? { cursor } : {}, options).then((page) => ({ items: page.resources, nextCursor: page.nextCursor })),
    ).then((listed) => listed.filter(({ item }) => typeof item.uri === 'string' && !isWorkspaceUri(item.uri)));
  }

  private listedTemplates(caller: ResourceCaller): Promise<Array<Listed<ResourceTemplate>>> {
    return this.gather(caller, 'resources', (client, cursor, options) =>
      client.listResourceTemplates(cursor ? { cursor } : {}, options).then((page) => ({ items: page.resourceTemplates, nextCursor: page.nextCursor })),
    ).then((listed) => listed.filter(({ item }) => typeof item.uriTemplate === 'string' && !isWorkspaceUri(item.uriTemplate)));
  }

  private listedPrompts(caller: ResourceCaller): Promise<Array<Listed<Prompt>>> {
    return this.gather(caller, 'prompts', (client, cursor, options) =>
      client.listPrompts(cursor ? { cursor } : {}, options).then((page) => ({ items: page.prompts, nextCursor: page.nextCursor })),
    ).then((listed) => listed.filter(({ item }) => typeof item.name === 'string'));
  }

  // Each source that declared the feature, listed page by page up to the limits; a source that fails is
  // left out of the listing (logged), so one server down does not hide the others.
  private async gather<T>(
    caller: ResourceCaller,
    feature: 'resources' | 'prompts',
    page: (client: Client, cursor: string | undefined, options: RequestOptions) => Promise<{ items: T[]; nextCursor?: string }>,
  ): Promise<Array<Listed<T>>> {
    const perSource = await Promise.all(
      (await this.sources(caller)).map(async (source) => {
        if ((await this.capabilities(source, caller))[feature] === undefined) return [];
        try {
          return await this.upstreams.request(source.target, source.timeoutMs, this.signal(caller, source), async (client) => {
            const items: T[] = [];
            let bytes = 0;
            let cursor: string | undefined;
            pages: for (let pages = 0; pages < MAX_PAGES && items.length < FEDERATED_LIST_LIMIT; pages++) {
              const answer = await page(client, cursor, this.options(caller, source));
              for (const item of answer.items.slice(0, FEDERATED_LIST_LIMIT - items.length)) {
                // An entry too deep to write out, or too large, is left out; the listing stops at its byte cap.
                const written = boundedJson(item, LISTED_ITEM_LIMITS);
                if (!('text' in written)) continue;
                bytes += written.text.length;
                if (bytes > FEDERATED_LIST_MAX_BYTES) break pages;
                items.push(item);
              }
              cursor = answer.nextCursor;
              if (!cursor) break;
            }
            return items.map((item) => ({ item, source }));
          });
        } catch (error) {
          if (caller.controller.signal.aborted) throw error;
          this.logger.warn(`Listing ${feature} of ${source.name} failed: ${error instanceof Error ? error.message : String(error)}`);
          return [];
        }
      }),
    );
    return perSource.flat();
  }

  private async capabilities(source: FederatedSource, caller: ResourceCaller): Promise<ServerCapabilities> {
    const key = JSON.stringify([source.target.tenantId, source.target.url, source.target.headers ?? {}]);
    const until = this.unreachable.get(key);
    if (until !== undefined && until > Date.now()) return {};
    try {
      const signal = AbortSignal.any([caller.controller.signal, AbortSignal.timeout(CAPABILITIES_TIMEOUT_MS)]);
      const declared = await this.upstreams.serverCapabilities(source.target, CAPABILITIES_TIMEOUT_MS, signal);
      this.unreachable.delete(key);
      return declared;
    } catch (error) {
      if (caller.controller.signal.aborted) throw error;
      this.logger.warn(`${source.name} could not be asked what it offers: ${error instanceof Error ? error.message : String(error)}`);
      this.unreachable.delete(key);
      if (this.unreachable.size >= UNREACHABLE_MAX) this.unreachable.delete(this.unreachable.keys().next().value!);
      this.unreachable.set(key, Date.now() + UNREACHABLE_FOR_MS);
      return {};
    }
  }

  // The one source offering a name or URI; two offering it is a clash no request may settle by guessing.
  private onlyOne(offering: FederatedSource[], what: string, none: () => McpError): FederatedSource {
    if (offering.length === 0) throw none();
    if (offering.length > 1) {
      const names = offering.map((s) => s.name).join(' and ');
      throw new McpError(ErrorCode.InvalidParams, `${what} is offered by more than one MCP source (${names}); Toolgate relays a name or URI from one source only, so it serves neither`, { sources: offering.map((s) => s.name) });
    }
    return offering[0];
  }

  // A read or a prompt: relayed under the source's deadline and audited as one call of `method`, with its
  // outcome (the upstream's error code, a timeout, the server unreachable).
  private async audited<T>(caller: ResourceCaller, source: FederatedSource, method: string, args: Record<string, unknown>, run: (client: Client, options: RequestOptions) => Promise<T>): Promise<T> {
    const startedAt = new Date();
    const redacted = redactArguments({ source: source.name, ...args }, null);
    const identity = {
      tenantId: caller.tenantId,
      projectId: caller.projectId,
      invocationId: randomUUID(),
      tool: method,
      channel: 'mcp' as const,
      caller: { keyId: caller.principal.apiKeyId, name: caller.principal.keyName },
    };
    try {
      const result = await this.upstreams.request(source.target, source.timeoutMs, this.signal(caller, source), (client) => run(client, this.options(caller, source)));
      const measured = measureJson(result, RELAYED_ANSWER_LIMITS);
      if (measured !== 'fits') {
        const what = measured.exceeded === 'depth' ? `nests more than ${RESULT_MAX_DEPTH} levels deep` : measured.exceeded === 'size' ? 'is larger than 4 MiB as JSON' : 'is not JSON';
        throw new McpError(ErrorCode.InternalError, `${source.name} answered ${method}, but its answer ${what}, so it was dropped`);
      }
      await this.recorder.finished(identity, { status: 'ok', arguments: redacted, startedAt });
      return result;
    } catch (error) {
      const failure = asMcpFailure(error, caller.controller.signal.aborted);
      await this.recorder.finished(identity, { status: failure.status, error: { code: failure.code, message: failure.message }, arguments: redacted, startedAt });
      throw failure.error;
    }
  }

  private signal(caller: ResourceCaller, source: FederatedSource): AbortSignal {
    return AbortSignal.any([caller.controller.signal, AbortSignal.timeout(source.timeoutMs)]);
  }

  private options(caller: ResourceCaller, source: FederatedSource): RequestOptions {
    return { signal: this.signal(caller, source), timeout: source.timeoutMs };
  }
}

interface RequestOptions {
  signal: AbortSignal;
  timeout: number;
}

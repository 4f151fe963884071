import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  McpError,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { measureJson, RESULT_MAX_DEPTH } from '../common/json/bounded-json.js';
import { redactArguments } from '../execution/validation/argument-redaction.js';
import { UpstreamMcpClients, type UpstreamTarget } from '../skills/mcp/upstream-mcp-clients.js';
import { AuthorizationRequired } from '../execution/authorization-required.js';
import { FederatedUpstreams, type ListPage, type RequestOptions } from './federated-upstreams.js';
import { keyInProject } from './mcp-caller.js';
import { McpClientCapabilities } from './mcp-client-capabilities.js';
import type { FederatedFeatures, FederatedSource } from './federated-source.js';
import { FEDERATED_ITEMS_LIMIT, RELAYED_ANSWER_LIMITS } from './federation-limits.js';
import { CallRecorder } from '../tools/call-recorder.js';
import { callWouldPark } from '../tools/call-parking.js';
import { ToolRegistry } from '../tools/tool-registry.js';
import { asMcpError, asMcpFailure, authorizationAnswer, isWorkspaceUri, printable, unique } from './mcp-federation-rules.js';
import { RESOURCE_NOT_FOUND, type ResourceCaller } from './mcp-workspace-resources.js';
import { templateMatches } from './uri-template-match.js';
import { describeInputRequests, INPUT_REQUIRED } from '../execution/input-required.js';
import { ModernUpstreams } from '../skills/mcp/modern-upstream.js';
import { type ClientRound, type InputRequiredResult, isInputRequiredResult } from './input-required/input-rounds.js';
import { promptInRound } from './input-required/prompt-rounds.js';

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
// - each read and prompt is one audit row (channel mcp), as a tool call is;
// - a source that asks for OAuth is sent every request with the token its tools/call would carry for the
//   same caller (FederatedUpstreams), and a read or prompt without a usable connection answers with the link.
@Injectable()
export class McpFederation {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly upstreams: UpstreamMcpClients,
    private readonly recorder: CallRecorder,
    private readonly modern: ModernUpstreams,
    private readonly reach: FederatedUpstreams,
    private readonly clientCapabilities: McpClientCapabilities,
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
      const { auth, ...reached } = upstream;
      const key = JSON.stringify([reached.url, reached.headers ?? {}, auth ?? null]);
      if (sources.has(key)) continue;
      sources.set(key, {
        key,
        name: executor.definition.source,
        target: { tenantId: caller.tenantId, ...reached },
        timeoutMs: executor.definition.timeoutMs,
        ...(auth && { auth }),
      });
    }
    return [...sources.values()];
  }

  // What the key's sources declared; a source that cannot be reached offers nothing for now.
  async features(caller: ResourceCaller): Promise<FederatedFeatures> {
    const declared = await Promise.all(
      (await this.sources(caller)).map(async (source) => (await this.reach.declared(caller, source)).capabilities),
    );
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

  // `elicitUrl`: whether the request (revision 2026-07-28) declares URL-mode elicitation; else as initialize said.
  async read(caller: ResourceCaller, uri: string, elicitUrl?: boolean): Promise<ReadResourceResult> {
    const [resources, templates] = await Promise.all([this.listedResources(caller), this.listedTemplates(caller)]);
    // One source listing the URI and offering a template that matches it too is still one source.
    const offering = new Map(
      [...resources.filter(({ item }) => item.uri === uri), ...templates.filter(({ item }) => templateMatches(item.uriTemplate, uri))].map(
        ({ source }) => [source.key, source],
      ),
    );
    const source = await this.route(
      caller,
      [...offering.values()],
      `The resource ${printable(uri)}`,
      () =>
        new McpError(
          RESOURCE_NOT_FOUND,
          `No resource ${printable(uri)}: neither the workspace nor an MCP source this key may use offers it`,
          { uri },
        ),
    );
    const result = await this.audited(caller, source, 'resources/read', { uri }, elicitUrl, (target) =>
      this.upstreams.request(target, source.timeoutMs, this.signal(caller, source), (client) =>
        client.readResource({ uri }, this.options(caller, source)),
      ),
    );
    // A source answers for its own URIs only: contents claiming to be workspace files, or a URI another
    // source offers, are not handed on.
    const elsewhere = (other: string) =>
      resources.some((r) => r.source.key !== source.key && r.item.uri === other) ||
      templates.some((t) => t.source.key !== source.key && templateMatches(t.item.uriTemplate, other));
    const contents = (result.contents ?? []).filter(
      (item) => typeof item.uri === 'string' && !isWorkspaceUri(item.uri) && !elsewhere(item.uri),
    );
    return { contents: contents.slice(0, FEDERATED_ITEMS_LIMIT) };
  }

  // `round`: a client of revision 2026-07-28, whose source of that revision may ask it for input (relayed).
  async getPrompt(
    caller: ResourceCaller,
    name: string,
    args: Record<string, string> | undefined,
    round?: ClientRound,
    elicitUrl?: boolean,
  ): Promise<GetPromptResult | InputRequiredResult> {
    const offering = (await this.listedPrompts(caller)).filter(({ item }) => item.name === name).map(({ source }) => source);
    const source = await this.route(
      caller,
      offering,
      `The prompt ${printable(name)}`,
      () => new McpError(ErrorCode.InvalidParams, `No prompt ${printable(name)}: no MCP source this key may use offers it`),
    );
    const result = await this.audited<GetPromptResult | InputRequiredResult>(
      caller,
      source,
      'prompts/get',
      { name, arguments: args ?? {} },
      elicitUrl,
      (target) => {
        const asBefore = () =>
          this.upstreams.request(target, source.timeoutMs, this.signal(caller, source), (client) =>
            client.getPrompt({ name, ...(args ? { arguments: args } : {}) }, this.options(caller, source)),
          );
        return round
          ? promptInRound(this.modern, { ...source, target }, name, args, round, this.signal(caller, source), asBefore)
          : asBefore();
      },
    );
    if (isInputRequiredResult(result)) return result;
    // A message embedding a `file:` resource would pass a source's text off as a workspace file: left out.
    const messages = result.messages.filter(
      (message) => !(message.content.type === 'resource' && isWorkspaceUri(message.content.resource.uri)),
    );
    return { ...(result.description ? { description: result.description } : {}), messages: messages.slice(0, FEDERATED_ITEMS_LIMIT) };
  }

  // A prompt's or a resource template's argument, completed by the one source offering it.
  async complete(
    caller: ResourceCaller,
    ref: { type: string; uri?: string; name?: string },
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
  ): Promise<CompleteResult> {
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
    const source = this.onlyOne(
      offering,
      what,
      () =>
        new McpError(
          ErrorCode.InvalidParams,
          `${what} is offered by no MCP source this key may use, nor is it the workspace's file:///{path}`,
        ),
    );
    const declared = (await this.reach.declared(caller, source)).capabilities;
    if (!declared.completions) return { completion: { values: [], total: 0, hasMore: false } };
    // Typing is no one's request to act: an unconnected source completes nothing, and no link is made.
    const result = await this.reach
      .as(
        caller,
        source,
        (target) =>
          this.upstreams.request(target, source.timeoutMs, this.signal(caller, source), (client) =>
            client.complete(
              {
                ref: ref.type === 'ref/prompt' ? { type: 'ref/prompt', name: ref.name! } : { type: 'ref/resource', uri: ref.uri! },
                argument,
                ...(context ? { context } : {}),
              },
              this.options(caller, source),
            ),
          ),
        false,
      )
      .catch(asMcpError);
    const values = result.completion.values.filter((value) => typeof value === 'string').slice(0, FEDERATED_ITEMS_LIMIT);
    return {
      completion: {
        values,
        ...(typeof result.completion.total === 'number' ? { total: result.completion.total } : {}),
        hasMore: result.completion.hasMore === true || values.length < result.completion.values.length,
      },
    };
  }

  private listedResources(caller: ResourceCaller): Promise<Array<Listed<Resource>>> {
    return this.gather(caller, 'resources', (client, cursor, options) =>
      client.listResources(cursor ? { cursor } : {}, options).then((page) => ({ items: page.resources, nextCursor: page.nextCursor })),
    ).then((listed) => listed.filter(({ item }) => typeof item.uri === 'string' && !isWorkspaceUri(item.uri)));
  }

  private listedTemplates(caller: ResourceCaller): Promise<Array<Listed<ResourceTemplate>>> {
    return this.gather(caller, 'resources', (client, cursor, options) =>
      client
        .listResourceTemplates(cursor ? { cursor } : {}, options)
        .then((page) => ({ items: page.resourceTemplates, nextCursor: page.nextCursor })),
    ).then((listed) => listed.filter(({ item }) => typeof item.uriTemplate === 'string' && !isWorkspaceUri(item.uriTemplate)));
  }

  private listedPrompts(caller: ResourceCaller): Promise<Array<Listed<Prompt>>> {
    return this.gather(caller, 'prompts', (client, cursor, options) =>
      client.listPrompts(cursor ? { cursor } : {}, options).then((page) => ({ items: page.prompts, nextCursor: page.nextCursor })),
    ).then((listed) => listed.filter(({ item }) => typeof item.name === 'string'));
  }

  // Each source that declared the feature, as this caller reaches it (FederatedUpstreams.listed).
  private async gather<T>(caller: ResourceCaller, feature: 'resources' | 'prompts', page: ListPage<T>): Promise<Array<Listed<T>>> {
    const perSource = await Promise.all(
      (await this.sources(caller)).map(async (source) =>
        (await this.reach.listed(caller, source, feature, page)).map((item) => ({ item, source })),
      ),
    );
    return perSource.flat();
  }

  // The one source offering a name or URI; none: the one source the caller could not list for want of a
  // connection, whose request then answers with the link to make it (several such: which one is not guessed).
  private async route(caller: ResourceCaller, offering: FederatedSource[], what: string, none: () => McpError): Promise<FederatedSource> {
    if (offering.length > 0) return this.onlyOne(offering, what, none);
    const declared = await Promise.all((await this.sources(caller)).map(async (s) => ({ s, ...(await this.reach.declared(caller, s)) })));
    const unconnected = declared.filter(({ connected }) => !connected).map(({ s }) => s);
    if (unconnected.length <= 1) return this.onlyOne(unconnected, what, none);
    const names = unconnected.map((s) => s.name);
    throw new McpError(
      none().code,
      `${what} is offered by no MCP source this key may use, but ${names.join(' and ')} act with a connection not made yet and may offer it: connect to them (a call of one of their tools answers with the link), then ask again`,
      { sources: names },
    );
  }

  // Two offering a name or URI is a clash no request may settle by guessing.
  private onlyOne(offering: FederatedSource[], what: string, none: () => McpError): FederatedSource {
    if (offering.length === 0) throw none();
    if (offering.length > 1) {
      const names = offering.map((s) => s.name).join(' and ');
      throw new McpError(
        ErrorCode.InvalidParams,
        `${what} is offered by more than one MCP source (${names}); Toolgate relays a name or URI from one source only, so it serves neither`,
        { sources: offering.map((s) => s.name) },
      );
    }
    return offering[0];
  }

  // A read or a prompt: relayed under the source's deadline and audited as one call of `method`, with its
  // outcome (the upstream's error code, a timeout, the server unreachable, its request for input).
  // `relay`: the request, sent to `target` (with the connection's token for a source that asks for OAuth).
  // Without a usable connection it does not leave: authorization_required, answered with the link.
  private async audited<T>(
    caller: ResourceCaller,
    source: FederatedSource,
    method: string,
    args: Record<string, unknown>,
    elicitUrl: boolean | undefined,
    relay: (target: UpstreamTarget) => Promise<T>,
  ): Promise<T> {
    const startedAt = new Date();
    const redacted = redactArguments({ source: source.name, ...args }, null);
    const identity = {
      tenantId: caller.tenantId,
      projectId: caller.projectId,
      invocationId: randomUUID(),
      tool: method,
      channel: 'mcp' as const,
      caller: { keyId: caller.principal.apiKeyId, name: caller.principal.keyName },
      ...(caller.principal.user !== undefined && { user: caller.principal.user }),
    };
    try {
      const result = await this.reach.as(caller, source, relay);
      const measured = measureJson(result, RELAYED_ANSWER_LIMITS);
      if (measured !== 'fits') {
        const what =
          measured.exceeded === 'depth'
            ? `nests more than ${RESULT_MAX_DEPTH} levels deep`
            : measured.exceeded === 'size'
              ? 'is larger than 4 MiB as JSON'
              : 'is not JSON';
        throw new McpError(ErrorCode.InternalError, `${source.name} answered ${method}, but its answer ${what}, so it was dropped`);
      }
      if (isInputRequiredResult(result)) {
        await this.recorder.finished(identity, {
          status: INPUT_REQUIRED,
          error: { code: INPUT_REQUIRED, message: `The source asked the client for input: ${describeInputRequests(result.inputRequests)}` },
          arguments: redacted,
          startedAt,
        });
        return result;
      }
      await this.recorder.finished(identity, { status: 'ok', arguments: redacted, startedAt });
      return result;
    } catch (error) {
      if (error instanceof AuthorizationRequired) {
        await this.recorder.finished(identity, {
          status: 'authorization_required',
          error: { code: 'authorization_required', message: error.reason },
          arguments: redacted,
          startedAt,
        });
        throw authorizationAnswer(error, elicitUrl ?? (await this.clientCapabilities.urlElicitation(keyInProject(caller))));
      }
      const failure = asMcpFailure(error, caller.controller.signal.aborted);
      await this.recorder.finished(identity, {
        status: failure.status,
        error: { code: failure.code, message: failure.message },
        arguments: redacted,
        startedAt,
      });
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

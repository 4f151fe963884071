import { Injectable } from '@nestjs/common';
import {
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  McpError,
  type ReadResourceResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { McpFederation } from './mcp-federation.js';
import type { ClientRound, InputRequiredResult } from './input-required/input-rounds.js';
import { FILE_TEMPLATE, McpWorkspaceResources, RESOURCE_PAGE_SIZE, type ResourceCaller } from './mcp-workspace-resources.js';

// A resources/list cursor in the federated part of the listing: this prefix, then the last URI given
// (base64url). The workspace's cursors are base64url alone, which has no '.'.
const FEDERATED_CURSOR = 'u.';

// What a project's MCP endpoint offers a key beside its tools: the workspace's files (McpWorkspaceResources)
// and its MCP sources' resources, templates, prompts and completions (McpFederation), declared truthfully
// and merged. resources/list pages through the workspace's files first, then the sources' resources.
@Injectable()
export class McpOfferings {
  constructor(
    private readonly workspace: McpWorkspaceResources,
    private readonly federation: McpFederation,
  ) {}

  // No subscriptions and no list-changed notices: a stateless endpoint holds no stream to notify on.
  // Logging where a source declares it.
  async capabilities(caller: ResourceCaller): Promise<ServerCapabilities> {
    const [workspace, federated] = await Promise.all([this.workspace.offered(caller), this.federation.features(caller)]);
    return {
      tools: { listChanged: false },
      ...(workspace || federated.resources ? { resources: { subscribe: false, listChanged: false } } : {}),
      ...(federated.prompts ? { prompts: { listChanged: false } } : {}),
      ...(workspace || federated.completions ? { completions: {} } : {}),
      // The log messages of its sources' calls, relayed (the endpoint keeps the level a client sets).
      ...(federated.logging ? { logging: {} } : {}),
    };
  }

  async list(caller: ResourceCaller, cursor: string | undefined): Promise<ListResourcesResult> {
    const [workspace, federated] = await Promise.all([this.workspace.offered(caller), this.federation.features(caller)]);
    // Without federated resources, the workspace answers alone (and refuses a key that may not read it).
    if (!federated.resources) return this.workspace.list(caller, cursor);
    if (cursor?.startsWith(FEDERATED_CURSOR)) return this.federatedPage(caller, cursor.slice(FEDERATED_CURSOR.length));
    if (!workspace) {
      if (cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, 'The cursor is not one this server gave');
      return this.federatedPage(caller, '');
    }
    const page = await this.workspace.list(caller, cursor);
    return page.nextCursor !== undefined ? page : { ...page, nextCursor: FEDERATED_CURSOR };
  }

  async templates(caller: ResourceCaller): Promise<ListResourceTemplatesResult> {
    const [workspace, federated] = await Promise.all([this.workspace.offered(caller), this.federation.features(caller)]);
    if (!federated.resources) return this.workspace.templates(caller);
    const own = workspace ? (await this.workspace.templates(caller)).resourceTemplates : [];
    return { resourceTemplates: [...own, ...(await this.federation.templates(caller))] };
  }

  // A file: URI is the workspace's, whatever a source lists; any other goes to the one source offering it.
  // `elicitUrl`: revision 2026-07-28's request declares URL-mode elicitation (or not); undefined: as initialize said.
  async read(caller: ResourceCaller, uri: string, elicitUrl?: boolean): Promise<ReadResourceResult> {
    if (/^file:/i.test(uri) || !(await this.federation.features(caller)).resources) return this.workspace.read(caller, uri);
    return this.federation.read(caller, uri, elicitUrl);
  }

  async complete(
    caller: ResourceCaller,
    ref: { type: string; uri?: string; name?: string },
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
  ): Promise<CompleteResult> {
    if (ref.type === 'ref/resource' && ref.uri === FILE_TEMPLATE) return this.workspace.complete(caller, ref, argument);
    const federated = await this.federation.features(caller);
    if (!federated.resources && !federated.prompts) return this.workspace.complete(caller, ref, argument);
    return this.federation.complete(caller, ref, argument, context);
  }

  async prompts(caller: ResourceCaller): Promise<ListPromptsResult> {
    return { prompts: await this.federation.prompts(caller) };
  }

  // `round`: a client of revision 2026-07-28 (input-required/input-rounds.ts); its source may ask it for input.
  getPrompt(caller: ResourceCaller, name: string, args: Record<string, string> | undefined): Promise<GetPromptResult>;
  getPrompt(
    caller: ResourceCaller,
    name: string,
    args: Record<string, string> | undefined,
    round: ClientRound | undefined,
    elicitUrl: boolean | undefined,
  ): Promise<GetPromptResult | InputRequiredResult>;
  getPrompt(
    caller: ResourceCaller,
    name: string,
    args: Record<string, string> | undefined,
    round?: ClientRound,
    elicitUrl?: boolean,
  ): Promise<GetPromptResult | InputRequiredResult> {
    return this.federation.getPrompt(caller, name, args, round, elicitUrl);
  }

  // The sources' resources after the URI `encoded` names (base64url; empty: from the first).
  private async federatedPage(caller: ResourceCaller, encoded: string): Promise<ListResourcesResult> {
    const after = Buffer.from(encoded, 'base64url').toString('utf8');
    if (Buffer.from(after, 'utf8').toString('base64url') !== encoded)
      throw new McpError(ErrorCode.InvalidParams, 'The cursor is not one this server gave');
    const resources = await this.federation.resources(caller);
    const start = after === '' ? 0 : resources.findIndex((resource) => resource.uri > after);
    const page = start === -1 ? [] : resources.slice(start, start + RESOURCE_PAGE_SIZE);
    const more = start !== -1 && start + RESOURCE_PAGE_SIZE < resources.length;
    return {
      resources: page,
      ...(more ? { nextCursor: FEDERATED_CURSOR + Buffer.from(page.at(-1)!.uri, 'utf8').toString('base64url') } : {}),
    };
  }
}

import { Injectable, Logger } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../common/errors/app-error.js';
import { boundedJson } from '../common/json/bounded-json.js';
import { ConnectionTokens, NOT_CONNECTED } from '../connections/connection-tokens.js';
import { ToolError } from '../execution/tool-error.js';
import { connectionUser, sourceToken, withBearer, withoutTokens, withSourceToken } from '../skills/mcp/mcp-source-auth.js';
import { UpstreamMcpClients, type UpstreamTarget } from '../skills/mcp/upstream-mcp-clients.js';
import type { FederatedSource } from './federated-source.js';
import {
  CAPABILITIES_TIMEOUT_MS,
  FEDERATED_LIST_LIMIT,
  FEDERATED_LIST_MAX_BYTES,
  LISTED_ITEM_LIMITS,
  MAX_PAGES,
  UNREACHABLE_FOR_MS,
  UNREACHABLE_MAX,
} from './federation-limits.js';
import type { ResourceCaller } from './mcp-workspace-resources.js';

export interface RequestOptions {
  signal: AbortSignal;
  timeout: number;
}

// One page of a listing, asked on the source's session.
export type ListPage<T> = (
  client: Client,
  cursor: string | undefined,
  options: RequestOptions,
) => Promise<{ items: T[]; nextCursor?: string }>;

// What a source declared at initialize, as this caller reaches it. `connected`: false for a source that acts
// with a connection the caller has not made (or cannot use): what it offers is learned only with one.
export interface Declared {
  capabilities: ServerCapabilities;
  connected: boolean;
}

// An unconnected source is taken to offer resources and prompts, so that a read or a prompt of it answers
// with the link to connect, as a call of its tools does.
const UNCONNECTED: ServerCapabilities = { resources: {}, prompts: {} };

// How every request of the federation reaches a source: with the source's own headers, or, for a source that
// asks for OAuth, with the token tools/call would send for the same caller (the key's Toolgate-User or the
// signed-in person, or the tenant's own connection for `as: tenant`), only to the provider's apiHosts,
// refreshed and tried once more after a 401. The upstream sessions are kept per token, so no request of one
// user ever rides on another's.
@Injectable()
export class FederatedUpstreams {
  private readonly logger = new Logger('McpFederation');
  // Until when each unreachable source (by tenant, URL, headers and, for an OAuth source, user) is left alone.
  private readonly unreachable = new Map<string, number>();

  constructor(
    private readonly upstreams: UpstreamMcpClients,
    private readonly tokens: ConnectionTokens,
  ) {}

  // `run` with the target this caller's request goes to. Without a usable connection: AuthorizationRequired
  // with a fresh link (`link`), or a ToolError NOT_CONNECTED where nobody asked to act (a listing). The
  // tokens sent never appear in the answer or an error (an upstream may echo them).
  async as<T>(caller: ResourceCaller, source: FederatedSource, run: (target: UpstreamTarget) => Promise<T>, link = true): Promise<T> {
    const { auth } = source;
    if (!auth) return run(source.target);
    const user = connectionUser(auth, caller.principal.user ?? null);
    const sent: string[] = [];
    try {
      const answer = await withSourceToken(
        (stale) => sourceToken(this.tokens, caller.tenantId, source.target.url, auth, user, stale, false, link),
        (token) => run({ ...source.target, headers: withBearer(source.target.headers, token) }),
        sent,
      );
      return withoutTokens(answer, sent) as T;
    } catch (error) {
      throw errorWithoutTokens(error, sent);
    }
  }

  // The source's entries of a feature it declared, page by page up to the limits. A source that fails is left
  // out (logged), so one server down does not hide the others; one the caller has not connected lists
  // nothing and makes no link (a read or a prompt of it asks to connect).
  async listed<T>(caller: ResourceCaller, source: FederatedSource, feature: 'resources' | 'prompts', page: ListPage<T>): Promise<T[]> {
    const { capabilities, connected } = await this.declared(caller, source);
    if (!connected || capabilities[feature] === undefined) return [];
    const options = () => ({ signal: signalFor(caller, source), timeout: source.timeoutMs });
    try {
      return await this.as(
        caller,
        source,
        (target) =>
          this.upstreams.request(target, source.timeoutMs, signalFor(caller, source), async (client) => {
            const items: T[] = [];
            let bytes = 0;
            let cursor: string | undefined;
            pages: for (let pages = 0; pages < MAX_PAGES && items.length < FEDERATED_LIST_LIMIT; pages++) {
              const answer = await page(client, cursor, options());
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
            return items;
          }),
        false,
      );
    } catch (error) {
      if (caller.controller.signal.aborted) throw error;
      this.logger.warn(`Listing ${feature} of ${source.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      return [];
    }
  }

  // What the source declared (from its kept session); one that cannot be reached offers nothing for now.
  async declared(caller: ResourceCaller, source: FederatedSource): Promise<Declared> {
    const { target, auth } = source;
    const key = JSON.stringify([
      target.tenantId,
      target.url,
      target.headers ?? {},
      auth ?? null,
      auth ? (caller.principal.user ?? null) : null,
    ]);
    const until = this.unreachable.get(key);
    if (until !== undefined && until > Date.now()) return { capabilities: {}, connected: true };
    try {
      const signal = AbortSignal.any([caller.controller.signal, AbortSignal.timeout(CAPABILITIES_TIMEOUT_MS)]);
      const capabilities = await this.as(
        caller,
        source,
        (reached) => this.upstreams.serverCapabilities(reached, CAPABILITIES_TIMEOUT_MS, signal),
        false,
      );
      this.unreachable.delete(key);
      return { capabilities, connected: true };
    } catch (error) {
      if (caller.controller.signal.aborted) throw error;
      if (notConnected(error)) return { capabilities: UNCONNECTED, connected: false };
      this.logger.warn(`${source.name} could not be asked what it offers: ${error instanceof Error ? error.message : String(error)}`);
      this.unreachable.delete(key);
      if (this.unreachable.size >= UNREACHABLE_MAX) this.unreachable.delete(this.unreachable.keys().next().value!);
      this.unreachable.set(key, Date.now() + UNREACHABLE_FOR_MS);
      return { capabilities: {}, connected: true };
    }
  }
}

// The source's request deadline, or the client going away, whichever comes first.
const signalFor = (caller: ResourceCaller, source: FederatedSource): AbortSignal =>
  AbortSignal.any([caller.controller.signal, AbortSignal.timeout(source.timeoutMs)]);

// No connection to act with: none made (or usable) for the caller's user, none for the tenant, or no user named.
function notConnected(error: unknown): boolean {
  if (error instanceof ToolError) return error.code === NOT_CONNECTED || error.code === 'tenant_connection_required';
  return error instanceof AppError && error.code === 'user_required';
}

function errorWithoutTokens(error: unknown, tokens: readonly string[]): unknown {
  if (!(error instanceof Error) || !tokens.some((token) => token.length >= 8 && error.message.includes(token))) return error;
  const message = tokens.reduce((text, token) => (token.length >= 8 ? text.split(token).join('[redacted]') : text), error.message);
  if (error instanceof ToolError) return new ToolError(error.code, message, error.retryable);
  error.message = message;
  return error;
}

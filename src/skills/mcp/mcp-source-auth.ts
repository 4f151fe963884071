import type { ConnectionTokens } from '../../connections/connection-tokens.js';
import { tokenHostRefused, userRequired } from '../../connections/connections.errors.js';
import { discoveredSlug } from '../../connections/mcp-auth-discovery.js';
import { ToolError } from '../../execution/tool-error.js';
import type { McpExecutorAuth } from '../executors/executor-specs.js';

// An MCP source that asks for OAuth, as registered: a provider of the tenant's, or the one discovered from
// the server's 401.
export interface McpSourceAuth {
  provider?: string;
  discover?: true;
  as?: 'user' | 'tenant';
}

export function executorAuthOf(source: { url: string; auth?: McpSourceAuth }): McpExecutorAuth | undefined {
  const { auth } = source;
  if (!auth) return undefined;
  return { provider: auth.provider ?? discoveredSlug(source.url), ...(auth.as && { as: auth.as }) };
}

// The connection a call uses: the end user's (as: user, the default) or the tenant's own.
export function connectionUser(auth: McpExecutorAuth, user: string | null): string | null {
  if (auth.as === 'tenant') return null;
  if (user === null) throw userRequired(auth.provider);
  return user;
}

// The source's own headers with the connection's token as its Authorization (one the admin wrote is replaced).
export function withBearer(headers: Record<string, string> | undefined, token: string): Record<string, string> {
  const kept = Object.entries(headers ?? {}).filter(([name]) => name.toLowerCase() !== 'authorization');
  return { ...Object.fromEntries(kept), Authorization: `Bearer ${token}` };
}

// The access token for a request to the MCP server at `url`: only when the server's host is one of the
// provider's apiHosts (a discovered provider has the server's host alone). `stale`: the token the server just
// refused (401), so a newer one is answered, refreshed if need be.
// `tenantLink`: an admin's request (registration, review) may be answered with a link for the tenant's own connection.
// `link`: false where nobody asked to act (a listing): no link is made, NOT_CONNECTED instead.
export async function sourceToken(
  tokens: ConnectionTokens,
  tenantId: string,
  url: string,
  auth: McpExecutorAuth,
  user: string | null,
  stale?: string,
  tenantLink = false,
  link = true,
): Promise<string> {
  const bearer = await tokens.bearerFor(tenantId, { provider: auth.provider, as: auth.as ?? 'user' }, user, stale, tenantLink, link);
  const host = new URL(url).host.toLowerCase();
  if (!bearer.apiHosts.includes(host)) throw tokenHostRefused(host, auth.provider);
  return bearer.token;
}

// A request with the connection's token, tried once more with a refreshed one when the server answers 401.
// `sent` collects the tokens used, so the caller can keep them out of any error.
export async function withSourceToken<T>(
  token: (stale?: string) => Promise<string>,
  run: (token: string) => Promise<T>,
  sent: string[],
): Promise<T> {
  const first = await token();
  sent.push(first);
  try {
    return await run(first);
  } catch (error) {
    if (!(error instanceof ToolError && error.code === 'upstream_unauthorized')) throw error;
    const second = await token(first);
    sent.push(second);
    return run(second);
  }
}

// An endpoint may echo the token it was sent (a debugging route, a page quoting the request): the caller, and
// the model, never see it. A result too deep to write as JSON is dropped by the caps on results anyway.
export function withoutTokens(result: unknown, tokens: readonly string[]): unknown {
  const secrets = tokens.filter((token) => token.length >= 8);
  if (secrets.length === 0 || result === undefined) return result;
  let text: string;
  try {
    text = JSON.stringify(result);
  } catch {
    return result;
  }
  if (text === undefined || !secrets.some((secret) => text.includes(secret))) return result;
  for (const secret of secrets) text = text.split(secret).join('[redacted]');
  return JSON.parse(text) as unknown;
}

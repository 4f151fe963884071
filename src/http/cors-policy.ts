import { requestPath } from '../common/format/request-path.js';

// Which cross-origin browser requests the service takes, and on which routes. MCP clients that run in a
// page (an inspector, a web agent) sign in and call from their own origin, so the browser asks first.
// Credentials are bearer tokens in the Authorization header, never cookies, so no answer allows credentials
// and a page learns nothing it could not fetch without a browser.
// - OAuth discovery and the token, registration and revocation endpoints: any origin. They hold nothing a
//   page could take from a signed-in person (no cookie is ever sent), and a browser-based client must reach
//   them from its own origin (OAuth 2.0 for Browser-Based Apps).
// - The MCP endpoints (a project's and its toolsets'): only the origins MCP_ALLOWED_ORIGINS lists, the same
//   ones McpOriginGuard lets through; for any other the browser is told nothing and the request itself is
//   refused by the guard (403 origin_not_allowed).
// - Everything else (the REST API, the console, the consent page): no cross-origin access, as before.
// `/oauth/authorize` is not on the list: a browser navigates to it, it is never fetched.
// The headers are the ones the `cors` middleware writes for the same options, decided per request here on
// both adapters (configure-app.ts). A request on any other route costs one regular-expression test: a
// general CORS layer in front of every route was a twentieth of the CPU of refusing a tool call on Fastify.

const OAUTH_PATH =
  /^\/(?:\.well-known\/(?:oauth-protected-resource(?:\/.*)?|oauth-authorization-server|openid-configuration)|oauth\/(?:token|register|revoke))$/;
const MCP_PATH = /^\/v1\/projects\/[^/]+(?:\/toolsets\/[^/]+)?\/mcp$/;

// What a browser-based MCP client sends (the SDK's transport headers, 2026-07-28's Mcp-Method/Mcp-Name, a
// retry's Idempotency-Key) and what it must read (the 401's challenge, the negotiated revision, request ids).
const MCP_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
  'Mcp-Method',
  'Mcp-Name',
  'Last-Event-ID',
  'Idempotency-Key',
  'X-Request-Id',
];
const MCP_RESPONSE_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'X-Request-Id', 'Retry-After'];
// The SDK sends its protocol revision with discovery requests too.
const OAUTH_REQUEST_HEADERS = ['Content-Type', 'Accept', 'Mcp-Protocol-Version'];
// A browser may keep a preflight's answer this long (seconds); Chromium caps it at two hours.
const PREFLIGHT_MAX_AGE = 600;

// The CORS side of one answer: its headers, and for a preflight, that it is answered here (204, no body).
export interface CorsAnswer {
  headers: Readonly<Record<string, string>>;
  preflight: boolean;
}

interface Rule {
  // '*' for any origin, else the listed origins (echoed, with Vary: Origin).
  origins: '*' | ReadonlySet<string>;
  answer: CorsAnswer;
  preflightAnswer: CorsAnswer;
}

function rule(origins: '*' | ReadonlySet<string>, methods: string[], requestHeaders: string[], responseHeaders: string[]): Rule {
  const exposed: Record<string, string> = responseHeaders.length > 0 ? { 'Access-Control-Expose-Headers': responseHeaders.join(',') } : {};
  return {
    origins,
    answer: { headers: exposed, preflight: false },
    preflightAnswer: {
      headers: {
        'Access-Control-Allow-Methods': methods.join(','),
        'Access-Control-Allow-Headers': requestHeaders.join(','),
        'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE),
        ...exposed,
      },
      preflight: true,
    },
  };
}

// Null: no CORS headers (another route, or an origin the MCP endpoints do not take); the request goes on.
export type CorsPolicy = (method: string, url: string, origin: string | undefined) => CorsAnswer | null;

export function corsPolicy(mcpAllowedOrigins: readonly string[]): CorsPolicy {
  const oauth = rule('*', ['GET', 'POST'], OAUTH_REQUEST_HEADERS, []);
  const mcp =
    mcpAllowedOrigins.length > 0
      ? rule(new Set(mcpAllowedOrigins), ['GET', 'POST', 'DELETE'], MCP_REQUEST_HEADERS, MCP_RESPONSE_HEADERS)
      : null;
  return (method, url, origin) => {
    // `/v1/projects/{id}#/mcp` is the project's REST route, as the routers read it: no CORS header.
    const path = requestPath(url);
    const applies = OAUTH_PATH.test(path) ? oauth : mcp !== null && MCP_PATH.test(path) ? mcp : null;
    if (applies === null) return null;
    let allowOrigin: Record<string, string>;
    if (applies.origins === '*') allowOrigin = { 'Access-Control-Allow-Origin': '*' };
    else if (origin !== undefined && applies.origins.has(origin)) allowOrigin = { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' };
    else return null;
    const answer = method === 'OPTIONS' ? applies.preflightAnswer : applies.answer;
    return { headers: { ...allowOrigin, ...answer.headers }, preflight: answer.preflight };
  };
}

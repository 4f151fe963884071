import type { CorsOptions, CorsOptionsDelegate } from '@nestjs/common/interfaces/external/cors-options.interface.js';

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

const OAUTH_PATH = /^\/(?:\.well-known\/(?:oauth-protected-resource(?:\/.*)?|oauth-authorization-server|openid-configuration)|oauth\/(?:token|register|revoke))$/;
const MCP_PATH = /^\/v1\/projects\/[^/]+(?:\/toolsets\/[^/]+)?\/mcp$/;

// What a browser-based MCP client sends (the SDK's transport headers, 2026-07-28's Mcp-Method/Mcp-Name, a
// retry's Idempotency-Key) and what it must read (the 401's challenge, the negotiated revision, request ids).
const MCP_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Mcp-Method', 'Mcp-Name', 'Last-Event-ID', 'Idempotency-Key', 'X-Request-Id'];
const MCP_RESPONSE_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'X-Request-Id', 'Retry-After'];
// The SDK sends its protocol revision with discovery requests too.
const OAUTH_REQUEST_HEADERS = ['Content-Type', 'Accept', 'Mcp-Protocol-Version'];
// A browser may keep a preflight's answer this long (seconds); Chromium caps it at two hours.
const PREFLIGHT_MAX_AGE = 600;

const NO_CORS: CorsOptions = { origin: false };
const OAUTH_CORS: CorsOptions = {
  origin: '*',
  methods: ['GET', 'POST'],
  allowedHeaders: OAUTH_REQUEST_HEADERS,
  credentials: false,
  maxAge: PREFLIGHT_MAX_AGE,
};

export function corsPolicy(mcpAllowedOrigins: readonly string[]): CorsOptionsDelegate<{ url?: string; headers: Record<string, unknown> }> {
  const allowed = new Set(mcpAllowedOrigins);
  const mcpCors: CorsOptions = {
    // Echoed only when listed (with Vary: Origin); an unlisted origin gets no Access-Control-Allow-Origin.
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'POST', 'DELETE'],
    allowedHeaders: MCP_REQUEST_HEADERS,
    exposedHeaders: MCP_RESPONSE_HEADERS,
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE,
  };
  return (request, callback) => {
    const path = (request.url ?? '/').split('?')[0];
    if (OAUTH_PATH.test(path)) return callback(null, OAUTH_CORS);
    if (allowed.size > 0 && MCP_PATH.test(path)) return callback(null, mcpCors);
    callback(null, NO_CORS);
  };
}

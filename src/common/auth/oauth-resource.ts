import { SetMetadata } from '@nestjs/common';
import type { Tenant } from './auth.decorators.js';

// A route that is an OAuth 2.1 protected resource (RFC 9728): a project's MCP endpoint. Only there is an
// OAuth access token accepted, and only for the project it was issued for; a 401 there names where the
// resource's metadata is, so a client can find its authorization server.
export const OAUTH_RESOURCE = 'toolgate:oauth-resource';
export const OAuthProtectedResource = () => SetMetadata(OAUTH_RESOURCE, true);

const MCP_PATH = /^\/v1\/projects\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/mcp$/;

// The service's origin as clients reach it: PUBLIC_URL, or the origin the request was sent to.
export function serviceBaseUrl(publicUrl: string | null, headers: Record<string, unknown>, protocol: string | undefined): string {
  if (publicUrl !== null) return publicUrl;
  const host = typeof headers.host === 'string' && /^[A-Za-z0-9.:[\]-]+$/.test(headers.host) ? headers.host : 'localhost';
  return `${protocol === 'https' ? 'https' : 'http'}://${host.toLowerCase()}`;
}

export const mcpResourceUrl = (base: string, projectId: string): string => `${base}/v1/projects/${projectId}/mcp`;
export const resourceMetadataUrl = (base: string, projectId: string): string =>
  `${base}/.well-known/oauth-protected-resource/v1/projects/${projectId}/mcp`;

// The project a `resource` indicator names when it is one of this service's project MCP URLs; else null.
export function projectOfResource(base: string, resource: string): string | null {
  if (!resource.startsWith(`${base}/`)) return null;
  return MCP_PATH.exec(resource.slice(base.length))?.[1] ?? null;
}

// Verifies access tokens of an external authorization server (OAUTH_ISSUER); provided by the OAuth module.
export const EXTERNAL_TOKENS = Symbol('ExternalTokens');
export interface ExternalTokens {
  // The agent the token acts as at `resource`, or null when the token is not one of the issuer's.
  authenticate(token: string, resource: string, projectId: string): Promise<Tenant | null>;
}

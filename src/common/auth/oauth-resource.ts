import { SetMetadata } from '@nestjs/common';
import type { Tenant } from './auth.decorators.js';

// A route that is an OAuth 2.1 protected resource (RFC 9728): a project's MCP endpoint, and each of its
// toolsets' (`/v1/projects/{id}/toolsets/{slug}/mcp`). Only there is an OAuth access token accepted, and only
// at the one it was issued for; a 401 there names where the resource's metadata is, so a client can find
// its authorization server.
export const OAUTH_RESOURCE = 'toolgate:oauth-resource';
export const OAuthProtectedResource = () => SetMetadata(OAUTH_RESOURCE, true);

// The slug part follows TOOLSET_SLUG (toolsets/dto): lowercase letters, digits and inner dashes.
const MCP_PATH =
  /^\/v1\/projects\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\/toolsets\/([a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?))?\/mcp$/;

// An MCP endpoint of this service: a project's (toolset null) or one of its toolsets'.
export interface McpResource {
  projectId: string;
  toolset: string | null;
}

// The service's origin as clients reach it: PUBLIC_URL, or the origin the request was sent to.
export function serviceBaseUrl(publicUrl: string | null, headers: Record<string, unknown>, protocol: string | undefined): string {
  if (publicUrl !== null) return publicUrl;
  const host = typeof headers.host === 'string' && /^[A-Za-z0-9.:[\]-]+$/.test(headers.host) ? headers.host : 'localhost';
  return `${protocol === 'https' ? 'https' : 'http'}://${host.toLowerCase()}`;
}

export const mcpResourcePath = ({ projectId, toolset }: McpResource): string =>
  toolset === null ? `/v1/projects/${projectId}/mcp` : `/v1/projects/${projectId}/toolsets/${toolset}/mcp`;
export const mcpResourceUrl = (base: string, resource: McpResource): string => `${base}${mcpResourcePath(resource)}`;
// RFC 9728 3.1: the well-known name inserted between the host and the resource's path.
export const resourceMetadataUrl = (base: string, resource: McpResource): string =>
  `${base}/.well-known/oauth-protected-resource${mcpResourcePath(resource)}`;

// The endpoint a `resource` indicator names when it is one of this service's MCP URLs; else null.
export function mcpResourceOf(base: string, resource: string): McpResource | null {
  if (!resource.startsWith(`${base}/`)) return null;
  const match = MCP_PATH.exec(resource.slice(base.length));
  return match ? { projectId: match[1], toolset: match[2] ?? null } : null;
}

// The endpoint a stored resource URL names, whatever origin it was issued under (the origin was checked then).
export const mcpResourceOfUrl = (resource: string): McpResource | null => mcpResourceOf(serviceBaseOf(resource), resource);

// The origin (and any path prefix of PUBLIC_URL) a resource URL of this service was issued under.
export function serviceBaseOf(resource: string): string {
  return resource.replace(/\/v1\/projects\/[^/]+(?:\/toolsets\/[^/]+)?\/mcp$/, '');
}

// Verifies access tokens of an external authorization server (OAUTH_ISSUER); provided by the OAuth module.
export const EXTERNAL_TOKENS = Symbol('ExternalTokens');
export interface ExternalTokens {
  // The agent the token acts as at `resource` (its URL, and which endpoint it is), or null when the token is not one of the issuer's.
  authenticate(token: string, resource: string, endpoint: McpResource): Promise<Tenant | null>;
}

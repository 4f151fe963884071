import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import type { Tenant } from '../common/auth/auth.decorators.js';
import type { ExternalTokens, McpResource } from '../common/auth/oauth-resource.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ProjectsRepository } from '../projects/projects.repository.js';
import { OAuthRepository } from './oauth.repository.js';

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
// Asymmetric signatures only: a shared-secret (HS*) token could be forged by anyone holding the secret.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const TOOLS_CLAIM = 'toolgate_tools';
// An entry of the tools claim: a tool name, or a prefix ending in `*` (as an agent key's tools).
const TOOL_PATTERN = /^[A-Za-z0-9_.-]{0,128}\*?$/;

// OAUTH_ISSUER mode: the access tokens of an external authorization server, as JWTs (RFC 9068) signed by a
// key of its JWKS (from its metadata's jwks_uri, or OAUTH_JWKS_URL), with `iss` the issuer, `aud` the
// project's MCP URL, and a claim (OAUTH_TENANT_CLAIM) naming the tenant that owns the project by its id or by
// its name, whichever the operator chose (OAUTH_TENANT_CLAIM_MATCHES). Such a token acts as an agent of that
// one project, with the tools of its toolgate_tools claim (every tool when it has none).
@Injectable()
export class ExternalTokenVerifier implements ExternalTokens {
  private readonly logger = new Logger('OAuth');
  private readonly issuer: string;
  private keys: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly projects: ProjectsRepository,
    private readonly oauth: OAuthRepository,
  ) {
    this.issuer = config.oauth.issuer ?? '';
  }

  async authenticate(token: string, resource: string, { projectId, toolset }: McpResource): Promise<Tenant | null> {
    if (!JWT.test(token)) return null;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await this.keySet(), {
        issuer: this.issuer,
        audience: resource,
        algorithms: ALGORITHMS,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      this.logger.debug(`external token refused: ${String(error)}`);
      return null;
    }
    const project = await this.projects.findByIdAnyTenant(projectId);
    if (!project) return null;
    if (!(await this.tenantMatches(payload[this.config.oauth.tenantClaim], project.tenantId))) return null;
    const tools = toolsOf(payload[TOOLS_CLAIM]);
    if (tools === undefined) {
      this.logger.warn(`external token refused: its ${TOOLS_CLAIM} claim is not a list of tool names`);
      return null;
    }
    const who = [payload.client_id, payload.azp, payload.sub].find((v): v is string => typeof v === 'string') ?? 'unknown client';
    return {
      tenantId: project.tenantId,
      // Stable per issuer and subject, so what one token holds open is found again (and closed at its exp).
      apiKeyId: uuidFrom(`${this.issuer}\n${who}\n${typeof payload.jti === 'string' ? payload.jti : token}`),
      keyName: `${who} (${this.issuer})`,
      role: 'agent',
      projectIds: [projectId],
      tools,
      expiresAt: new Date((payload.exp ?? 0) * 1000),
      // A token for a toolset's MCP URL is bound to that toolset, as a toolset key is.
      toolset,
      oauthResource: resource,
    };
  }

  // One of the two, never either: a name chosen for one tenant must not match another's id.
  private async tenantMatches(claimed: unknown, tenantId: string): Promise<boolean> {
    if (typeof claimed !== 'string') return false;
    if (this.config.oauth.tenantClaimMatches === 'id') return claimed === tenantId;
    return claimed === (await this.oauth.tenantName(tenantId));
  }

  private async keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.keys) return this.keys;
    const url = this.config.oauth.jwksUrl ?? (await this.discoverJwksUri());
    this.keys = createRemoteJWKSet(new URL(url), { timeoutDuration: 5000, cooldownDuration: 30_000 });
    return this.keys;
  }

  // RFC 8414 (well-known inserted before the issuer's path), then OpenID discovery (appended).
  private async discoverJwksUri(): Promise<string> {
    const issuer = new URL(this.issuer);
    const path = issuer.pathname.replace(/\/$/, '');
    for (const candidate of [
      `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
      `${issuer.origin}${path}/.well-known/openid-configuration`,
    ]) {
      try {
        const res = await fetch(candidate, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) continue;
        const metadata = (await res.json()) as { jwks_uri?: unknown };
        if (typeof metadata.jwks_uri === 'string') return metadata.jwks_uri;
      } catch {
        // the next candidate
      }
    }
    throw new Error(`OAUTH_ISSUER ${this.issuer}: no jwks_uri in its metadata; set OAUTH_JWKS_URL`);
  }
}

// The tools claim: absent is every tool (null); a list of tool names or prefixes binds the token to them
// (`[]` to none). Anything else (a string, a list holding a non-string) is undefined: the token is refused,
// since reading a malformed binding as no binding would hand it every tool.
function toolsOf(claim: unknown): string[] | null | undefined {
  if (claim === undefined) return null;
  if (!Array.isArray(claim)) return undefined;
  const tools: unknown[] = claim;
  return tools.every((t): t is string => typeof t === 'string' && t !== '' && TOOL_PATTERN.test(t)) ? [...new Set(tools)] : undefined;
}

function uuidFrom(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

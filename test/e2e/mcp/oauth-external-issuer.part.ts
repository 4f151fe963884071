import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

// OAUTH_ISSUER: the service trusts a real authorization server (oidc-provider, run here on a local port,
// issuing JWT access tokens for a resource indicator by the client credentials grant) instead of issuing
// tokens itself.
describe('MCP sign-in with an external authorization server (OAUTH_ISSUER)', () => {
  let t: TestApp;
  let server: http.Server;
  let issuer: string;
  let base: string;
  let tenant: TestTenant;
  let other: TestTenant;
  let p: string;
  let q: string;
  // client_id -> the tenant its tokens name
  const tenantOfClient = new Map<string, string>();

  beforeAll(async () => {
    server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const provider = new Provider(issuer, {
      clients: ['agent-service', 'other-service'].map((id) => ({
        client_id: id,
        client_secret: `${id}-secret-0123456789abcdef0123456789`,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'ES256',
        scope: 'mcp',
      })),
      jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'ES256', use: 'sig' }] },
      scopes: ['mcp'],
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
            scope: 'mcp',
            audience: resourceIndicator,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          }),
        },
      },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => {
        const clientId = token.clientId ?? '';
        return {
          toolgate_tenant: tenantOfClient.get(clientId),
          ...(clientId === 'agent-service' ? { toolgate_tools: ['read_file'] } : {}),
        };
      },
    });
    server.on('request', provider.callback());
    t = await createTestApp({ env: { OAUTH_ISSUER: issuer } });
    base = `http://127.0.0.1:${t.port}`;
    tenant = await t.createTenant();
    other = await t.createTenant();
    p = (await t.createProject(tenant)).id;
    q = (await t.createProject(tenant)).id;
    tenantOfClient.set('agent-service', tenant.id);
    tenantOfClient.set('other-service', other.id);
  });
  afterAll(async () => {
    await t?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const tokenFor = async (clientId: string, projectId: string): Promise<string> => {
    const res = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: `${clientId}-secret-0123456789abcdef0123456789`,
        scope: 'mcp',
        resource: `${base}/v1/projects/${projectId}/mcp`,
      }),
    });
    const body = (await res.json()) as { access_token?: string };
    expect({ status: res.status, body }).toEqual({ status: 200, body: expect.objectContaining({ access_token: expect.any(String) }) });
    return body.access_token!;
  };
  const mcp = (projectId: string, token: string, body: object = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
    fetch(`${base}/v1/projects/${projectId}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });

  it('names the issuer in the resource metadata, and issues no tokens itself', async () => {
    const metadata = (await (await fetch(`${base}/.well-known/oauth-protected-resource/v1/projects/${p}/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({ resource: `${base}/v1/projects/${p}/mcp`, authorization_servers: [issuer] });
    expect((await fetch(`${base}/.well-known/oauth-authorization-server`)).status).toBe(404);
    const register = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'] }),
    });
    expect([register.status, ((await register.json()) as { error: string }).error]).toEqual([404, 'oauth_external_issuer']);
  });

  it("accepts the issuer's token at the project it was issued for, with the tools its claim names", async () => {
    const token = await tokenFor('agent-service', p);
    expect(token.split('.')).toHaveLength(3);
    const listed = await mcp(p, token);
    expect(listed.status).toBe(200);
    const tools = ((await listed.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((tool) => tool.name);
    expect(tools).toEqual(['read_file']);

    // Its calls are audited under the client and the issuer that vouched for it.
    const call = await mcp(p, token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'read_file', arguments: { path: 'none.txt' } },
    });
    expect(call.status).toBe(200);
    const rows = (await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200)).body.items as Array<{
      tool: string;
      channel: string;
      caller: unknown;
    }>;
    expect(rows.at(-1)).toMatchObject({
      tool: 'read_file',
      channel: 'mcp',
      caller: { keyId: expect.any(String), name: `agent-service (${issuer})` },
    });
  });

  it('refuses it at another project, at the REST routes, for another tenant, and when signed by another key', async () => {
    const token = await tokenFor('agent-service', p);
    const atQ = await mcp(q, token);
    expect(atQ.status).toBe(401);
    expect(atQ.headers.get('www-authenticate')).toContain(
      `resource_metadata="${base}/.well-known/oauth-protected-resource/v1/projects/${q}/mcp"`,
    );
    const rest = await fetch(`${base}/v1/projects/${p}/tools`, { headers: { authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(401);
    // A token naming another tenant, for this tenant's project.
    expect((await mcp(p, await tokenFor('other-service', p))).status).toBe(401);
    // The same claims, signed by a key the issuer does not publish.
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ toolgate_tenant: tenant.id, client_id: 'agent-service' })
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
      .setIssuer(issuer)
      .setAudience(`${base}/v1/projects/${p}/mcp`)
      .setExpirationTime('5m')
      .sign(privateKey);
    expect((await mcp(p, forged)).status).toBe(401);
  });
});

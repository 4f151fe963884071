import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import Provider, { errors } from 'oidc-provider';
import { discoveredSlug } from '../../src/connections/mcp-auth-discovery.js';
import { closeServer, connectInBrowser, freePort, listen, readJsonBody } from '../support/oauth-servers.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// MCP servers that ask for OAuth (issue 44; security cases 109, 113-115): a real MCP server (the official
// SDK's, Streamable HTTP) behind a bearer check that takes only tokens a real authorization server
// (oidc-provider, with dynamic registration and resource indicators) issued for that server's URL. Toolgate
// meets its 401, discovers the authorization server, registers itself and reads the tools with the admin's
// connection; each call carries the calling user's token, and no token reaches another server.

type Json = Record<string, unknown>;
type Seen = { token: string | null; account: string | null; aud: unknown };

// A stateless MCP server (a fresh SDK server per request) with one tool that answers who its caller is.
async function serveMcp(req: http.IncomingMessage, res: http.ServerResponse, caller: Json): Promise<void> {
  const body = await readJsonBody(req);
  const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: 'whoami',
        description: 'Who the server says the caller is',
        inputSchema: { type: 'object', properties: {} },
        outputSchema: { type: 'object', properties: { account: { type: ['string', 'null'] }, aud: {} } },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, () => ({
    content: [{ type: 'text', text: JSON.stringify(caller) }],
    structuredContent: caller,
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

// A minimal authorization server that takes clients by their client ID metadata document (oidc-provider
// fetches such documents only over https from public addresses, so it cannot play this part on loopback):
// it fetches the document at the client_id URL, takes only a redirect URI the document lists, and binds the
// code and the token to the PKCE challenge and the `resource` (RFC 8707).
class MetadataDocumentServer {
  readonly server = http.createServer(
    (req, res) => void this.handle(req, res).catch((error: unknown) => res.writeHead(500).end(String(error))),
  );
  readonly documentsFetched: string[] = [];
  readonly tokens = new Map<string, { account: string; aud: string }>();
  private readonly codes = new Map<
    string,
    { account: string; challenge: string; resource: string; clientId: string; redirectUri: string }
  >();
  issuer = '';

  async start(): Promise<void> {
    this.issuer = `http://127.0.0.1:${await listen(this.server)}`;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.issuer);
    const json = (status: number, body: unknown): void =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return json(200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        client_id_metadata_document_supported: true,
      });
    }
    if (url.pathname === '/authorize') {
      const q = url.searchParams;
      const clientId = q.get('client_id') ?? '';
      this.documentsFetched.push(clientId);
      const document = (await (await fetch(clientId, { redirect: 'manual' })).json()) as {
        client_id?: string;
        redirect_uris?: string[];
        token_endpoint_auth_method?: string;
      };
      const redirectUri = q.get('redirect_uri') ?? '';
      if (
        document.client_id !== clientId ||
        !document.redirect_uris?.includes(redirectUri) ||
        document.token_endpoint_auth_method !== 'none'
      )
        return json(400, { error: 'invalid_client' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge') || !q.get('resource'))
        return json(400, { error: 'invalid_request' });
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<form method="post"><input name="login"><input name="password"></form>');
        return;
      }
      const form = new URLSearchParams(await readText(req));
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, {
        account: form.get('login')!,
        challenge: q.get('code_challenge')!,
        resource: q.get('resource')!,
        clientId,
        redirectUri,
      });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      back.searchParams.set('iss', this.issuer);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(await readText(req));
      const grant = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verified =
        grant &&
        createHash('sha256')
          .update(form.get('code_verifier') ?? '')
          .digest('base64url') === grant.challenge;
      if (
        !grant ||
        !verified ||
        form.get('client_id') !== grant.clientId ||
        form.get('redirect_uri') !== grant.redirectUri ||
        form.get('resource') !== grant.resource ||
        form.has('client_secret')
      ) {
        return json(400, { error: 'invalid_grant' });
      }
      const token = randomBytes(24).toString('base64url');
      this.tokens.set(token, { account: grant.account, aud: grant.resource });
      return json(200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    json(404, { error: 'not_found' });
  }
}

const readText = async (req: http.IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

describe('MCP sources that ask for OAuth (issue 44)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let p: string;
  let appBase: string;
  let issuer: string;
  let provider: Provider;
  let authServer: http.Server;
  let mcp: http.Server;
  let mcpUrl: string;
  let other: http.Server;
  let otherUrl: string;
  let walled: http.Server;
  let walledUrl: string;
  let hidden: http.Server;
  let hiddenBase: string;
  const cimd = new MetadataDocumentServer();
  let team: http.Server;
  let teamUrl: string;
  const teamSaw: Seen[] = [];
  let notesId: string;
  let agent: { Authorization: string };
  let ops: { Authorization: string };
  // Every request the protected server received, with the token it carried and whose that token was.
  const mcpSaw: Seen[] = [];
  const otherSaw: Array<string | undefined> = [];
  const hiddenSaw: string[] = [];

  beforeAll(async () => {
    authServer = http.createServer();
    issuer = `http://127.0.0.1:${await listen(authServer)}`;

    mcp = http.createServer((req, res) => {
      void (async () => {
        const base = `http://${req.headers.host}`;
        if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              resource: `${base}/mcp`,
              authorization_servers: [issuer],
              scopes_supported: ['notes:read'],
              bearer_methods_supported: ['header'],
            }),
          );
          return;
        }
        const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
        const found = token ? await provider.AccessToken.find(token) : undefined;
        const valid = found !== undefined && found.aud === `${base}/mcp`;
        mcpSaw.push({ token, account: valid ? found.accountId : null, aud: found?.aud });
        if (!valid) {
          await readJsonBody(req);
          res.writeHead(401, {
            'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`,
            'content-type': 'application/json',
          });
          res.end(JSON.stringify({ error: 'invalid_token' }));
          return;
        }
        await serveMcp(req, res, { account: found.accountId, aud: found.aud });
      })().catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
    mcpUrl = `http://127.0.0.1:${await listen(mcp)}/mcp`;

    // Another MCP server, open to anyone: it must never see a token meant for the protected one.
    other = http.createServer((req, res) => {
      otherSaw.push(req.headers.authorization);
      void serveMcp(req, res, { account: null, aud: null });
    });
    otherUrl = `http://127.0.0.1:${await listen(other)}/mcp`;

    // A server whose metadata is somewhere the address policy keeps closed (another loopback port, not opened).
    hidden = http.createServer((req, res) => {
      hiddenSaw.push(req.url ?? '');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: walledUrl, authorization_servers: [issuer] }));
    });
    hiddenBase = `http://127.0.0.1:${await listen(hidden)}`;
    walled = http.createServer((req, res) => {
      void (async () => {
        await readJsonBody(req);
        const base = `http://${req.headers.host}`;
        // /lying: its own authorization server (allowed) names a token endpoint at the closed address.
        if (req.url === '/.well-known/oauth-protected-resource/lying') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ resource: `${base}/lying`, authorization_servers: [`${base}/as`] }));
          return;
        }
        if (req.url === '/.well-known/oauth-authorization-server/as' || req.url === '/as/.well-known/openid-configuration') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              issuer: `${base}/as`,
              authorization_endpoint: `${base}/as/auth`,
              token_endpoint: `${hiddenBase}/tok`,
              registration_endpoint: `${base}/as/reg`,
              response_types_supported: ['code'],
              code_challenge_methods_supported: ['S256'],
            }),
          );
          return;
        }
        if (req.url === '/lying') {
          res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/lying"` }).end();
          return;
        }
        if (req.url === '/.well-known/oauth-protected-resource/mcp') {
          // Its own document (allowed) names an authorization server at the closed address.
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [hiddenBase] }));
          return;
        }
        const metadata = req.url === '/mcp' ? `${hiddenBase}/prm` : `${base}/.well-known/oauth-protected-resource/mcp`;
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadata}"` }).end();
      })();
    });
    walledUrl = `http://127.0.0.1:${await listen(walled)}/mcp`;

    // An MCP server whose authorization server takes client ID metadata documents; used as the tenant's.
    await cimd.start();
    team = http.createServer((req, res) => {
      void (async () => {
        const base = `http://${req.headers.host}`;
        if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [cimd.issuer] }));
          return;
        }
        const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
        const found = token ? cimd.tokens.get(token) : undefined;
        const valid = found !== undefined && found.aud === `${base}/mcp`;
        teamSaw.push({ token, account: valid ? found.account : null, aud: found?.aud });
        if (!valid) {
          await readJsonBody(req);
          res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` }).end();
          return;
        }
        await serveMcp(req, res, { account: found.account, aud: found.aud });
      })().catch((error: unknown) => res.writeHead(500).end(String(error)));
    });
    teamUrl = `http://127.0.0.1:${await listen(team)}/mcp`;

    const appPort = await freePort();
    appBase = `http://127.0.0.1:${appPort}`;
    provider = new Provider(issuer, {
      cookies: { keys: ['test-cookie-key-0123456789'] },
      features: {
        devInteractions: { enabled: true },
        registration: { enabled: true },
        revocation: { enabled: true, allowedPolicy: () => true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            if (resource !== mcpUrl) throw new errors.InvalidTarget();
            return { scope: 'notes:read', audience: resource, accessTokenFormat: 'opaque' };
          },
        },
      },
      ttl: { AccessToken: 3600, RefreshToken: 86_400, Grant: 86_400, Interaction: 600, Session: 3600, AuthorizationCode: 60 },
      pkce: { required: () => true },
      issueRefreshToken: () => true,
      findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: () => ({ sub: accountId }) }),
    });
    authServer.on('request', provider.callback());

    const host = (url: string) => new URL(url).host;
    t = await createTestApp({
      port: appPort,
      env: { PUBLIC_URL: appBase, FETCH_ALLOW_HOSTS: [issuer, mcpUrl, otherUrl, walledUrl, cimd.issuer, teamUrl].map(host).join(',') },
    });
    tenant = await t.createTenant();
    p = (await t.createProject(tenant)).id;
    const key = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'assistant', role: 'agent', projectIds: [p], actAsUsers: true })
      .expect(201);
    agent = { Authorization: `Bearer ${key.body.key}` };
    const admin = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'ops', role: 'admin', actAsUsers: true }).expect(201);
    ops = { Authorization: `Bearer ${admin.body.key}` };
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([authServer, mcp, other, walled, hidden, cimd.server, team].map(closeServer));
  });

  const register = (body: Json, user?: string) => {
    const req = t.http.post('/v1/skills').set(ops);
    return (user === undefined ? req : req.set('Toolgate-User', user)).send(body);
  };
  const call = (tool: string, user?: string) => {
    const req = t.http.post(`/v1/projects/${p}/tools/${tool}/invoke`).set(agent);
    return (user === undefined ? req : req.set('Toolgate-User', user)).send({ arguments: {} });
  };

  const notes = { name: 'notes', version: '1.0.0', description: 'Notes, as each user' };

  it('[sec-115] discovers the authorization server from the 401, registers, and reads the tools with the admin’s own connection', async () => {
    const first = await register({ ...notes, source: { type: 'mcp', url: mcpUrl, auth: { discover: true } } }, 'ann');
    expect([first.status, first.body.error?.code]).toEqual([409, 'authorization_required']);
    const link = first.body.error.details.authorization as Json;
    const authorizeUrl = new URL(link.url as string);
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${issuer}/auth`);
    // RFC 8707: the authorization request names the MCP server; PKCE S256; the scope the 401 asked for.
    expect(Object.fromEntries(authorizeUrl.searchParams)).toMatchObject({
      resource: mcpUrl,
      code_challenge_method: 'S256',
      scope: 'notes:read',
      redirect_uri: `${appBase}/v1/connections/callback`,
    });
    expect(first.body.error.message).toContain("the connection of user 'ann'");

    // The provider Toolgate registered (dynamically: this server takes no client ID metadata document).
    const providers = (await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body.items as Json[];
    expect(providers).toEqual([
      expect.objectContaining({
        slug: discoveredSlug(mcpUrl),
        issuer,
        discovered: true,
        apiHosts: [new URL(mcpUrl).host],
        scopes: ['notes:read'],
      }),
    ]);
    const registered = await provider.Client.find(String(providers[0].clientId));
    expect(registered?.redirectUris).toEqual([`${appBase}/v1/connections/callback`]);
    expect(mcpSaw.every((seen) => seen.account === null)).toBe(true);

    await connectInBrowser(authorizeUrl.href, 'ann', appBase);
    const again = await register({ ...notes, source: { type: 'mcp', url: mcpUrl, auth: { discover: true } } }, 'ann');
    expect(again.status).toBe(201);
    expect((again.body.tools as Json[]).map((tool) => tool.name)).toEqual(['whoami']);
    // The tools were read with ann's token, issued for this server.
    expect(mcpSaw.filter((seen) => seen.account !== null).map((seen) => [seen.account, seen.aud])).toEqual(
      expect.arrayContaining([['ann', mcpUrl]]),
    );
    expect(new Set(mcpSaw.filter((seen) => seen.account !== null).map((seen) => seen.account))).toEqual(new Set(['ann']));
    notesId = again.body.id as string;
    await t.http.post(`/v1/projects/${p}/skills`).set(tenant.auth).send({ skillId: notesId }).expect(201);
  });

  it('reads the source again for review with the requesting admin’s connection, or asks for the tenant’s', async () => {
    const mark = mcpSaw.length;
    const asAnn = await t.http.post(`/v1/skills/${notesId}/refresh`).set(ops).set('Toolgate-User', 'ann').expect(200);
    expect(asAnn.body.pending).toEqual([]);
    expect(
      mcpSaw
        .slice(mark)
        .filter((seen) => seen.account !== null)
        .map((seen) => seen.account),
    ).toContain('ann');
    // Naming nobody: the tenant's own connection, which nobody has made.
    const asTenant = await t.http.post(`/v1/skills/${notesId}/refresh`).set(ops);
    expect([asTenant.status, asTenant.body.error?.code]).toEqual([409, 'authorization_required']);
    expect(asTenant.body.error.details.authorization).toMatchObject({
      provider: discoveredSlug(mcpUrl),
      url: expect.stringContaining(`${issuer}/auth?`),
    });
  });

  it('[sec-109] a call as alice without a connection answers authorization_required; after she connects it runs with her token; bob never gets it', async () => {
    const before = mcpSaw.length;
    const first = await call('whoami', 'alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 'authorization_required',
      authorization: { provider: discoveredSlug(mcpUrl), url: expect.stringContaining(`${issuer}/auth?`), scopes: ['notes:read'] },
    });
    expect(mcpSaw.length).toBe(before);

    await connectInBrowser(first.body.authorization.url as string, 'alice', appBase);
    const ran = await call('whoami', 'alice');
    expect(ran.body).toMatchObject({ status: 'ok', result: { account: 'alice', aud: mcpUrl } });
    const aliceTokens = new Set(mcpSaw.filter((seen) => seen.account === 'alice').map((seen) => seen.token));
    expect(aliceTokens.size).toBe(1);

    const mark = mcpSaw.length;
    const bob = await call('whoami', 'bob');
    expect(bob.body).toMatchObject({ status: 'authorization_required', authorization: { provider: discoveredSlug(mcpUrl) } });
    // A call naming nobody is refused before anything runs.
    const nobody = await call('whoami');
    expect([nobody.status, nobody.body.error.code]).toEqual([422, 'user_required']);
    expect(mcpSaw.length).toBe(mark);
  });

  it('refreshes alice’s token once after the server refuses it, and calls again', async () => {
    const used = mcpSaw.filter((seen) => seen.account === 'alice').at(-1)!.token!;
    await (await provider.AccessToken.find(used))!.destroy();
    const ran = await call('whoami', 'alice');
    expect(ran.body).toMatchObject({ status: 'ok', result: { account: 'alice', aud: mcpUrl } });
    expect(mcpSaw.some((seen) => seen.token === used && seen.account === null)).toBe(true);
    expect(mcpSaw.at(-1)!.token).not.toBe(used);
  });

  it('[sec-113] the source’s tokens never appear in the skill, audit rows, the export, the providers or logs', async () => {
    const tokens = [...new Set(mcpSaw.filter((seen) => seen.account !== null).map((seen) => seen.token!))];
    expect(tokens.length).toBeGreaterThan(1);
    const texts = {
      skill: JSON.stringify((await t.http.get(`/v1/skills/${notesId}`).set(tenant.auth).expect(200)).body),
      audit: JSON.stringify((await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200)).body),
      exported: (await t.http.get(`/v1/projects/${p}/invocations/export`).set(tenant.auth).expect(200)).text,
      providers: JSON.stringify((await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body),
      connections: JSON.stringify((await t.http.get('/v1/connections').set(tenant.auth).expect(200)).body),
      logs: JSON.stringify(t.logs),
    };
    for (const token of tokens) {
      for (const [where, text] of Object.entries(texts)) expect({ where, leaks: text.includes(token) }).toEqual({ where, leaks: false });
    }
  });

  it('[sec-115] a token for this source is never sent to another source’s host', async () => {
    // The discovered provider named for another server: its host is not one the token may go to.
    const borrowed = await register(
      {
        name: 'borrowed',
        version: '1.0.0',
        description: 'x',
        source: { type: 'mcp', url: otherUrl, auth: { provider: discoveredSlug(mcpUrl) } },
      },
      'ann',
    );
    expect([borrowed.status, borrowed.body.error?.code]).toEqual([403, 'token_host_refused']);
    // A plain source beside it: imported and called without any Authorization header.
    const plain = await register({ name: 'open_notes', version: '1.0.0', description: 'x', source: { type: 'mcp', url: otherUrl } }, 'ann');
    expect(plain.status).toBe(201);
    expect(otherSaw.length).toBeGreaterThan(0);
    expect(otherSaw.every((header) => header === undefined)).toBe(true);
  });

  it('[sec-115] protected resource and authorization server metadata at a closed address are refused', async () => {
    const viaHeader = await register(
      { name: 'walled', version: '1.0.0', description: 'x', source: { type: 'mcp', url: walledUrl, auth: { discover: true } } },
      'ann',
    );
    expect([viaHeader.status, viaHeader.body.error?.code]).toEqual([403, 'url_blocked']);
    const viaDocument = await register(
      { name: 'walled', version: '1.0.0', description: 'x', source: { type: 'mcp', url: `${walledUrl}/other`, auth: { discover: true } } },
      'ann',
    );
    expect([viaDocument.status, viaDocument.body.error?.code]).toEqual([403, 'url_blocked']);
    // An allowed authorization server whose metadata names a token endpoint at a closed address: refused,
    // and no provider is kept that would send a code or a refresh token there.
    const lyingUrl = walledUrl.replace(/\/mcp$/, '/lying');
    const viaServer = await register(
      { name: 'lying', version: '1.0.0', description: 'x', source: { type: 'mcp', url: lyingUrl, auth: { discover: true } } },
      'ann',
    );
    expect([viaServer.status, viaServer.body.error?.code]).toEqual([403, 'url_blocked']);
    const providers = (await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body.items as Array<{ tokenUrl: string }>;
    expect(providers.filter((p) => p.tokenUrl.startsWith(hiddenBase))).toEqual([]);
    expect(hiddenSaw).toEqual([]);
  });

  it('registers by its client ID metadata document where the authorization server takes one; as: tenant, every call uses the tenant’s connection', async () => {
    const body = {
      name: 'team_notes',
      version: '1.0.0',
      description: 'The team’s notes',
      source: { type: 'mcp', url: teamUrl, auth: { discover: true, as: 'tenant' } },
    };
    // as: tenant reads with the tenant's own connection, whoever registers.
    const first = await register(body, 'ann');
    expect([first.status, first.body.error?.code]).toEqual([409, 'authorization_required']);
    expect(first.body.error.message).toContain('the tenant’s own connection');
    const documentUrl = `${appBase}/v1/connections/client-metadata.json`;
    const link = new URL(first.body.error.details.authorization.url as string);
    expect(Object.fromEntries(link.searchParams)).toMatchObject({
      client_id: documentUrl,
      resource: teamUrl,
      code_challenge_method: 'S256',
    });
    const document = (await fetch(documentUrl).then((res) => res.json())) as Json;
    expect(document).toEqual({
      client_id: documentUrl,
      client_name: 'Toolgate',
      client_uri: appBase,
      redirect_uris: [`${appBase}/v1/connections/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const providers = (await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body.items as Json[];
    expect(providers.find((item) => item.slug === discoveredSlug(teamUrl))).toMatchObject({
      issuer: cimd.issuer,
      clientId: documentUrl,
      discovered: true,
      apiHosts: [new URL(teamUrl).host],
    });

    await connectInBrowser(link.href, 'team-account', appBase);
    expect(cimd.documentsFetched).toContain(documentUrl);
    const imported = await register(body);
    expect(imported.status).toBe(201);
    expect(teamSaw.filter((seen) => seen.account !== null).map((seen) => [seen.account, seen.aud])).toEqual(
      expect.arrayContaining([['team-account', teamUrl]]),
    );
    // On its own project (its tool is named like the notes source's): any user's call, or one naming nobody,
    // runs with the tenant's connection.
    const q = (await t.createProject(tenant)).id;
    await t.http.post(`/v1/projects/${q}/skills`).set(tenant.auth).send({ skillId: imported.body.id }).expect(201);
    const teamKey = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'team', role: 'agent', projectIds: [q], actAsUsers: true })
      .expect(201);
    const asTeam = { Authorization: `Bearer ${teamKey.body.key}` };
    for (const user of ['alice', 'bob', undefined]) {
      const req = t.http.post(`/v1/projects/${q}/tools/whoami/invoke`).set(asTeam);
      const res = await (user === undefined ? req : req.set('Toolgate-User', user)).send({ arguments: {} });
      expect({ user, body: res.body as Json }).toMatchObject({
        user,
        body: { status: 'ok', result: { account: 'team-account', aud: teamUrl } },
      });
    }
    // Neither server ever saw the other's token.
    const teamTokens = new Set(teamSaw.map((seen) => seen.token).filter(Boolean));
    expect(mcpSaw.some((seen) => teamTokens.has(seen.token))).toBe(false);
    expect(teamSaw.some((seen) => seen.token !== null && !cimd.tokens.has(seen.token))).toBe(false);
  });
});

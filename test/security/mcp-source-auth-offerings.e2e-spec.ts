import http from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import Provider, { errors } from 'oidc-provider';
import { discoveredSlug } from '../../src/connections/mcp-auth-discovery.js';
import { postModern } from '../e2e/mcp/mcp-test-kit.js';
import { closeServer, connectInBrowser, freePort, listen, readJsonBody } from '../support/oauth-servers.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// An MCP source that asks for OAuth, beyond its tools (security cases 109 and 113): its resources and
// prompts are relayed with the same connection its tools/call uses, the calling user's, refreshed once
// after a 401, and without one the read or prompt answers with the link (never another user's token). And
// Toolgate's dynamic registration at the server's authorization server asks for the token endpoint
// authentication that server takes: a public client where `none` is offered, client_secret_basic where only
// that is. Real parts: oidc-provider as the authorization servers, the official SDK's MCP server (and a
// hand-written answer of revision 2026-07-28) behind a bearer check, the official SDK's client.

type Json = Record<string, unknown>;
// Every request the protected server received: the token it carried, whose it was, and the JSON-RPC method.
type Seen = { token: string | null; account: string | null; method: string | null; modern: boolean };

const MODERN = '2026-07-28';

// A stateless MCP server answering as `account`: a tool, a resource (and no template), a prompt.
async function serveNotes(req: http.IncomingMessage, res: http.ServerResponse, body: unknown, account: string): Promise<void> {
  const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {}, resources: {}, prompts: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'whoami', description: 'Who the server says the caller is', inputSchema: { type: 'object', properties: {} } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: account }] }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: 'notes://today', name: 'today' }] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => ({
    contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: `notes of ${account}` }],
  }));
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: 'summary', description: 'Summarise the notes' }] }));
  server.setRequestHandler(GetPromptRequestSchema, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Summarise the notes of ${account}` } }],
  }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

// Revision 2026-07-28, as a source of that revision answers it: server/discover, and prompts/get.
function serveModern(res: http.ServerResponse, body: Json, account: string): void {
  const answer = (result: Json) =>
    void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
  if (body.method === 'server/discover')
    return answer({ supportedVersions: [MODERN, '2025-11-25'], capabilities: { tools: {}, resources: {}, prompts: {} } });
  if (body.method === 'prompts/get')
    return answer({
      resultType: 'complete',
      messages: [{ role: 'user', content: { type: 'text', text: `Summarise the notes of ${account} (${MODERN})` } }],
    });
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: body.id, error: { code: ErrorCode.MethodNotFound, message: 'Method not found' } }));
}

// An authorization server (oidc-provider, dynamic registration on) whose tokens are for `resource` alone.
function authorizationServer(issuer: string, resource: () => string, clientAuthMethods?: string[]): Provider {
  return new Provider(issuer, {
    cookies: { keys: ['test-cookie-key-0123456789'] },
    ...(clientAuthMethods && { clientAuthMethods }),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true, allowedPolicy: () => true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, asked: string) => {
          if (asked !== resource()) throw new errors.InvalidTarget();
          return { scope: 'notes:read', audience: asked, accessTokenFormat: 'opaque' };
        },
      },
    },
    ttl: { AccessToken: 3600, RefreshToken: 86_400, Grant: 86_400, Interaction: 600, Session: 3600, AuthorizationCode: 60 },
    pkce: { required: () => true },
    issueRefreshToken: () => true,
    findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: () => ({ sub: accountId }) }),
  });
}

// An MCP server that takes only tokens `provider` issued for its own URL, answering 401 (RFC 9728) otherwise.
function protectedServer(provider: () => Provider, issuer: () => string, saw: Seen[]): http.Server {
  return http.createServer((req, res) => {
    void (async () => {
      const base = `http://${req.headers.host}`;
      if (req.method === 'GET' && req.url === '/.well-known/oauth-protected-resource/mcp') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [issuer()], scopes_supported: ['notes:read'] }));
        return;
      }
      const body = (await readJsonBody(req)) as Json | undefined;
      const modern = req.headers['mcp-protocol-version'] === MODERN;
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
      const found = token ? await provider().AccessToken.find(token) : undefined;
      const valid = found !== undefined && found.aud === `${base}/mcp`;
      saw.push({ token, account: valid ? found.accountId : null, method: typeof body?.method === 'string' ? body.method : null, modern });
      if (!valid) {
        res.writeHead(401, {
          'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`,
          'content-type': 'application/json',
        });
        res.end(JSON.stringify({ error: 'invalid_token' }));
        return;
      }
      if (modern && body) return serveModern(res, body, found.accountId);
      await serveNotes(req, res, body, found.accountId);
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
}

describe('An MCP source that asks for OAuth: its resources and prompts, and how Toolgate registers', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let p: string;
  let appBase: string;
  let agent: { Authorization: string };
  let ops: { Authorization: string };
  // The notes server, whose authorization server offers `none` among its token endpoint authentications.
  let issuer: string;
  let provider: Provider;
  let authServer: http.Server;
  let notes: http.Server;
  let notesUrl: string;
  const notesSaw: Seen[] = [];
  const notesTokenRequests: Array<{ authorization: string | null }> = [];
  // The vault server, whose authorization server takes client_secret_basic alone.
  let vaultIssuer: string;
  let vaultProvider: Provider;
  let vaultAuthServer: http.Server;
  let vault: http.Server;
  let vaultUrl: string;
  const vaultSaw: Seen[] = [];
  const vaultTokenRequests: Array<{ authorization: string | null }> = [];

  beforeAll(async () => {
    authServer = http.createServer();
    issuer = `http://127.0.0.1:${await listen(authServer)}`;
    vaultAuthServer = http.createServer();
    vaultIssuer = `http://127.0.0.1:${await listen(vaultAuthServer)}`;
    notes = protectedServer(
      () => provider,
      () => issuer,
      notesSaw,
    );
    notesUrl = `http://127.0.0.1:${await listen(notes)}/mcp`;
    vault = protectedServer(
      () => vaultProvider,
      () => vaultIssuer,
      vaultSaw,
    );
    vaultUrl = `http://127.0.0.1:${await listen(vault)}/mcp`;
    provider = authorizationServer(issuer, () => notesUrl);
    vaultProvider = authorizationServer(vaultIssuer, () => vaultUrl, ['client_secret_basic']);
    const recording = (into: Array<{ authorization: string | null }>, callback: ReturnType<Provider['callback']>) => {
      return (req: http.IncomingMessage, res: http.ServerResponse) => {
        if (req.url?.startsWith('/token')) into.push({ authorization: req.headers.authorization ?? null });
        void callback(req, res);
      };
    };
    authServer.on('request', recording(notesTokenRequests, provider.callback()));
    vaultAuthServer.on('request', recording(vaultTokenRequests, vaultProvider.callback()));

    const appPort = await freePort();
    appBase = `http://127.0.0.1:${appPort}`;
    const host = (url: string) => new URL(url).host;
    t = await createTestApp({
      port: appPort,
      env: { PUBLIC_URL: appBase, FETCH_ALLOW_HOSTS: [issuer, notesUrl, vaultIssuer, vaultUrl].map(host).join(',') },
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
    await Promise.all([closeServer(authServer), closeServer(notes), closeServer(vaultAuthServer), closeServer(vault)]);
  });

  const register = (name: string, url: string) =>
    t.http
      .post('/v1/skills')
      .set(ops)
      .set('Toolgate-User', 'ann')
      .send({ name, version: '1.0.0', description: `${name}, as each user`, source: { type: 'mcp', url, auth: { discover: true } } });
  const call = (user: string) =>
    t.http.post(`/v1/projects/${p}/tools/whoami/invoke`).set(agent).set('Toolgate-User', user).send({ arguments: {} });
  const clientOf = (slug: string) =>
    t.http
      .get('/v1/auth-providers')
      .set(tenant.auth)
      .expect(200)
      .then((res) => String((res.body.items as Json[]).find((item) => item.slug === slug)!.clientId));
  // The official SDK client at the project's endpoint, for `user` (none: no Toolgate-User), declaring `capabilities`.
  const mcpClient = async (user: string | undefined, capabilities: Json = {}): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${appBase}/v1/projects/${p}/mcp`), {
      requestInit: { headers: { ...agent, ...(user !== undefined && { 'Toolgate-User': user }) } },
    });
    const client = new Client({ name: 'offerings-test', version: '1.0.0' }, { capabilities });
    await client.connect(transport);
    return client;
  };
  // Every page of resources/list (the workspace's files come first, then the sources' resources).
  const allResources = async (client: Client): Promise<string[]> => {
    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      uris.push(...page.resources.map((resource) => resource.uri));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return uris;
  };
  const refusal = async (request: Promise<unknown>): Promise<McpError> => {
    const error = await request.then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  };

  it('registers as a public client (none, with PKCE) where the authorization server offers it, and sends no secret', async () => {
    const first = await register('notes', notesUrl);
    expect([first.status, first.body.error?.code]).toEqual([409, 'authorization_required']);
    const clientId = await clientOf(discoveredSlug(notesUrl));
    const registered = await provider.Client.find(clientId);
    expect({ method: registered?.tokenEndpointAuthMethod, secret: registered?.clientSecret }).toEqual({
      method: 'none',
      secret: undefined,
    });

    await connectInBrowser(first.body.error.details.authorization.url as string, 'ann', appBase);
    const again = await register('notes', notesUrl);
    expect(again.status).toBe(201);
    // The code was exchanged without client authentication (PKCE binds it), and the tools read with ann's token.
    expect(notesTokenRequests.length).toBeGreaterThan(0);
    expect(notesTokenRequests.every((request) => request.authorization === null)).toBe(true);
    expect(notesSaw.some((seen) => seen.account === 'ann' && seen.method === 'tools/list')).toBe(true);
    await t.http.post(`/v1/projects/${p}/skills`).set(tenant.auth).send({ skillId: again.body.id }).expect(201);
  });

  it('registers for client_secret_basic where that is all the authorization server takes, and authenticates so', async () => {
    const first = await register('vault', vaultUrl);
    expect([first.status, first.body.error?.code]).toEqual([409, 'authorization_required']);
    const clientId = await clientOf(discoveredSlug(vaultUrl));
    const registered = await vaultProvider.Client.find(clientId);
    expect(registered?.tokenEndpointAuthMethod).toBe('client_secret_basic');
    expect(typeof registered?.clientSecret).toBe('string');

    await connectInBrowser(first.body.error.details.authorization.url as string, 'ann', appBase);
    const again = await register('vault', vaultUrl);
    expect(again.status).toBe(201);
    // oidc-provider takes only the method the client registered: the exchange succeeded, in HTTP Basic.
    expect(vaultTokenRequests.length).toBeGreaterThan(0);
    for (const request of vaultTokenRequests) {
      const basic = /^Basic (.+)$/.exec(request.authorization ?? '')?.[1];
      expect(basic && decodeURIComponent(Buffer.from(basic, 'base64').toString('utf8').split(':')[0])).toBe(clientId);
    }
    expect(vaultSaw.some((seen) => seen.account === 'ann' && seen.method === 'tools/list')).toBe(true);
  });

  it('[sec-109] alice’s resources and prompts reach the server with her token; bob’s read and prompt answer authorization_required with a link, never her token', async () => {
    const first = await call('alice');
    expect(first.body).toMatchObject({ status: 'authorization_required' });
    await connectInBrowser(first.body.authorization.url as string, 'alice', appBase);

    const mark = notesSaw.length;
    const alice = await mcpClient('alice');
    expect(await allResources(alice)).toContain('notes://today');
    expect((await alice.readResource({ uri: 'notes://today' })).contents).toEqual([
      { uri: 'notes://today', mimeType: 'text/plain', text: 'notes of alice' },
    ]);
    expect((await alice.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['summary']);
    const prompt = await alice.getPrompt({ name: 'summary' });
    expect(prompt.messages[0].content).toEqual({ type: 'text', text: 'Summarise the notes of alice' });
    await alice.close();
    const aliceSaw = notesSaw.slice(mark);
    for (const method of ['resources/list', 'resources/read', 'prompts/list', 'prompts/get'])
      expect(aliceSaw.filter((seen) => seen.method === method).map((seen) => seen.account)).toContain('alice');
    expect(aliceSaw.filter((seen) => seen.account !== null && seen.account !== 'alice')).toEqual([]);
    const aliceTokens = new Set(aliceSaw.map((seen) => seen.token).filter(Boolean));

    // bob has no connection: his client, declaring URL-mode elicitation, gets -32042 with the link, as tools/call does.
    const bobMark = notesSaw.length;
    const bob = await mcpClient('bob', { elicitation: { url: {} } });
    expect(await allResources(bob)).not.toContain('notes://today');
    for (const request of [bob.readResource({ uri: 'notes://today' }), bob.getPrompt({ name: 'summary' })]) {
      const error = await refusal(request);
      expect(error.code).toBe(ErrorCode.UrlElicitationRequired);
      expect(error.message).toMatch(/Ask the user to open http.* to connect mcp-[0-9a-f]{16}, then call again/);
      expect((error.data as { elicitations: Json[] }).elicitations).toEqual([
        { mode: 'url', elicitationId: expect.any(String), url: expect.stringContaining(`${issuer}/auth?`), message: expect.any(String) },
      ]);
    }
    await bob.close();
    // A client that takes no URL elicitation: a JSON-RPC error, the link in its data and in its message.
    const plainBob = await mcpClient('bob');
    const plain = await refusal(plainBob.readResource({ uri: 'notes://today' }));
    expect(plain.code).toBe(ErrorCode.InternalError);
    expect(plain.data).toEqual({
      code: 'authorization_required',
      authorization: {
        provider: discoveredSlug(notesUrl),
        url: expect.stringContaining(`${issuer}/auth?`),
        scopes: ['notes:read'],
        expiresAt: expect.any(String),
      },
    });
    expect(plain.message).toContain((plain.data as { authorization: { url: string } }).authorization.url);
    // Nothing of bob's reached the server: no request went there without his own token.
    expect(notesSaw.slice(bobMark)).toEqual([]);
    // Naming nobody: refused as tools/call refuses it.
    const nobody = await mcpClient(undefined);
    expect((await refusal(nobody.readResource({ uri: 'notes://today' }))).data).toMatchObject({ code: 'user_required' });
    await nobody.close();
    expect(notesSaw.slice(bobMark)).toEqual([]);

    // bob opens the link he was given: his read now carries his own token.
    await connectInBrowser((plain.data as { authorization: { url: string } }).authorization.url, 'bob', appBase);
    const read = await plainBob.readResource({ uri: 'notes://today' });
    expect(read.contents).toEqual([{ uri: 'notes://today', mimeType: 'text/plain', text: 'notes of bob' }]);
    await plainBob.close();
    const bobSaw = notesSaw.slice(bobMark);
    expect(bobSaw.filter((seen) => seen.method === 'resources/read').map((seen) => seen.account)).toEqual(['bob']);
    expect(bobSaw.filter((seen) => seen.account !== 'bob')).toEqual([]);
    expect(bobSaw.some((seen) => aliceTokens.has(seen.token))).toBe(false);

    const rows = (await t.http.get(`/v1/projects/${p}/invocations?user=bob`).set(tenant.auth).expect(200)).body.items as Json[];
    expect(rows.map((row) => [row.tool, row.status]).sort()).toEqual(
      [
        ['prompts/get', 'authorization_required'],
        ['resources/read', 'authorization_required'],
        ['resources/read', 'authorization_required'],
        ['resources/read', 'ok'],
      ].sort(),
    );
  });

  it('refreshes alice’s token once after the server refuses it on a read, and reads again', async () => {
    const used = notesSaw.filter((seen) => seen.account === 'alice').at(-1)!.token!;
    await (await provider.AccessToken.find(used))!.destroy();
    const alice = await mcpClient('alice');
    const mark = notesSaw.length;
    expect((await alice.readResource({ uri: 'notes://today' })).contents[0]).toMatchObject({ text: 'notes of alice' });
    await alice.close();
    const saw = notesSaw.slice(mark);
    expect(saw.some((seen) => seen.token === used && seen.account === null)).toBe(true);
    expect(saw.filter((seen) => seen.method === 'resources/read').at(-1)).toMatchObject({ account: 'alice' });
    expect(saw.at(-1)!.token).not.toBe(used);
  });

  it('after her token is revoked, eight reads at once each read with one refreshed token', async () => {
    const used = notesSaw.filter((seen) => seen.account === 'alice').at(-1)!.token!;
    await (await provider.AccessToken.find(used))!.destroy();
    const clients = await Promise.all(Array.from({ length: 8 }, () => mcpClient('alice')));
    const mark = notesSaw.length;
    // Each read lists the source's resources and templates at once on the session of the revoked token: the
    // first refusal closes that session under the others, which then ask again rather than count it as offering nothing.
    const reads = await Promise.all(clients.map((client) => client.readResource({ uri: 'notes://today' })));
    await Promise.all(clients.map((client) => client.close()));
    for (const read of reads) expect(read.contents[0]).toMatchObject({ text: 'notes of alice' });
    const fresh = new Set(
      notesSaw
        .slice(mark)
        .filter((seen) => seen.account === 'alice')
        .map((seen) => seen.token),
    );
    expect(fresh.size).toBe(1);
    expect(fresh.has(used)).toBe(false);
  });

  it('[sec-109] revision 2026-07-28: prompts/get reaches a source of that revision with alice’s token; carol’s read and prompt answer with the link', async () => {
    const mark = notesSaw.length;
    const asAlice = await postModern(t, p, { ...agent, 'Toolgate-User': 'alice' }, 'prompts/get', { name: 'summary' }, 'summary');
    expect(asAlice.body.result).toMatchObject({
      resultType: 'complete',
      messages: [{ role: 'user', content: { type: 'text', text: `Summarise the notes of alice (${MODERN})` } }],
    });
    expect(notesSaw.slice(mark).filter((seen) => seen.modern && seen.method === 'prompts/get')).toEqual([
      { token: expect.any(String), account: 'alice', method: 'prompts/get', modern: true },
    ]);

    const carolMark = notesSaw.length;
    const carol = { ...agent, 'Toolgate-User': 'carol' };
    const eliciting = { _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } } };
    const prompt = await postModern(t, p, carol, 'prompts/get', { name: 'summary', ...eliciting }, 'summary');
    expect(prompt.body.error?.code).toBe(-32042);
    const read = await postModern(t, p, carol, 'resources/read', { uri: 'notes://today', ...eliciting }, 'notes://today');
    expect(read.body.error?.code).toBe(-32042);
    expect((read.body.error as { data?: { elicitations: Json[] } }).data?.elicitations[0]).toMatchObject({
      mode: 'url',
      url: expect.stringContaining(`${issuer}/auth?`),
    });
    // Without URL elicitation declared on the request: the error with the link in its data.
    const plain = await postModern(t, p, carol, 'prompts/get', { name: 'summary' }, 'summary');
    expect(plain.body.error).toMatchObject({ code: ErrorCode.InternalError, data: { code: 'authorization_required' } });
    expect(notesSaw.slice(carolMark)).toEqual([]);
  });

  it('[sec-113] the tokens its resources and prompts were read with never appear in audit rows, the export or logs', async () => {
    const tokens = [...new Set(notesSaw.filter((seen) => seen.account !== null).map((seen) => seen.token!))];
    expect(tokens.length).toBeGreaterThan(2);
    const texts = {
      audit: JSON.stringify((await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200)).body),
      exported: (await t.http.get(`/v1/projects/${p}/invocations/export`).set(tenant.auth).expect(200)).text,
      logs: JSON.stringify(t.logs),
    };
    for (const token of tokens) {
      for (const [where, text] of Object.entries(texts)) expect({ where, leaks: text.includes(token) }).toEqual({ where, leaks: false });
    }
  });
});

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import Provider from 'oidc-provider';
import { SecretBox } from '../../src/common/secrets/secret-box.js';
import { ConnectionsSweeper } from '../../src/connections/connections.sweeper.js';
import { withEnvelope } from '../e2e/mcp/mcp-test-kit.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md, "Connections" (109-114): a real authorization server (oidc-provider, its sign-in and
// consent driven with plain HTTP requests), a local API that accepts only that server's access tokens, and a
// server outside the provider's apiHosts that must never see one.

type Json = Record<string, unknown>;
// The tenant's own page the browser is sent to with a flow id (never fetched here: the redirect is read).
const VERIFY_PAGE = 'https://app.example.test/connections/verify';

const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const freePort = async (): Promise<number> => {
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
};
const close = async (server: http.Server | undefined) => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
};

describe('Connections: tools act as the person they serve (security cases 109-114)', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let p: string;
  let appBase: string;
  let issuer: string;
  let provider: Provider;
  let authServer: http.Server;
  let api: http.Server;
  let outside: http.Server;
  let apiHost: string;
  let outsideHost: string;
  let agent: { Authorization: string };
  // What the API and the outside server saw: every bearer token and whose it was.
  const apiSaw: Array<{ token: string; account: string | null }> = [];
  const outsideSaw: Array<string | undefined> = [];
  // [sec-115] An authorization server the operator opened (rogue) whose documents and redirects point at an
  // address nobody opened (trap): the trap must never be asked anything.
  let rogue: http.Server;
  let trap: http.Server;
  let rogueBase: string;
  let trapHost: string;
  const trapSaw: string[] = [];
  // Every token the authorization server issued (found by the API), to look for anywhere else.
  const issued = new Set<string>();

  beforeAll(async () => {
    authServer = http.createServer();
    issuer = `http://127.0.0.1:${await listen(authServer)}`;
    api = http.createServer((req, res) => {
      void (async () => {
        const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
        const found = token ? await provider.AccessToken.find(token) : undefined;
        if (token) {
          issued.add(token);
          apiSaw.push({ token, account: found?.accountId ?? null });
        }
        // An API endpoint that sends its caller on to another host: the executor does not follow it.
        if (req.url === '/moved' && found) return res.writeHead(302, { location: `http://${outsideHost}/x` }).end();
        // An endpoint that echoes what it was sent, the Authorization header included.
        if (req.url === '/echo' && found)
          return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ youSent: req.headers.authorization }));
        res.writeHead(found ? 200 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify(found ? { account: found.accountId, scope: found.scope } : { error: 'invalid_token', got: token ?? null }));
      })();
    });
    apiHost = `127.0.0.1:${await listen(api)}`;
    outside = http.createServer((req, res) => {
      outsideSaw.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    outsideHost = `127.0.0.1:${await listen(outside)}`;
    trap = http.createServer((req, res) => {
      trapSaw.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    trapHost = `127.0.0.1:${await listen(trap)}`;
    rogue = http.createServer((req, res) => {
      const url = req.url ?? '';
      if (!url.includes('/.well-known/')) return res.writeHead(404).end();
      if (url.includes('redirect')) return res.writeHead(302, { location: `http://${trapHost}/.well-known/openid-configuration` }).end();
      const name = /private-token|metadata-token|private-revocation|foreign-authorization/.exec(url)?.[0];
      if (!name) return res.writeHead(404).end();
      const doc = {
        issuer: `${rogueBase}/${name}`,
        // foreign-authorization: people would sign in at the real server, their code brought to this one.
        authorization_endpoint: name === 'foreign-authorization' ? `${issuer}/auth` : `${rogueBase}/${name}/auth`,
        token_endpoint:
          name === 'private-token'
            ? `https://${trapHost}/token`
            : name === 'metadata-token'
              ? 'https://169.254.169.254/token'
              : `${rogueBase}/${name}/token`,
        ...(name === 'private-revocation' && { revocation_endpoint: `http://${trapHost}/revoke` }),
        response_types_supported: ['code'],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    });
    rogueBase = `http://127.0.0.1:${await listen(rogue)}`;

    const appPort = await freePort();
    appBase = `http://127.0.0.1:${appPort}`;
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'toolgate',
          client_secret: 'toolgate-client-secret-0123456789abcdef',
          redirect_uris: [`${appBase}/v1/connections/callback`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      scopes: ['api:read', 'api:write'],
      cookies: { keys: ['test-cookie-key-0123456789'] },
      features: { devInteractions: { enabled: true }, revocation: { enabled: true, allowedPolicy: () => true } },
      ttl: { AccessToken: 3600, RefreshToken: 86_400, Grant: 86_400, Interaction: 600, Session: 3600, AuthorizationCode: 60 },
      pkce: { required: () => true },
      issueRefreshToken: () => true,
      findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: () => ({ sub: accountId }) }),
    });
    authServer.on('request', provider.callback());
    t = await createTestApp({
      port: appPort,
      env: {
        PUBLIC_URL: appBase,
        FETCH_ALLOW_HOSTS: `${issuer.slice('http://'.length)},${apiHost},${outsideHost},${rogueBase.slice('http://'.length)}`,
      },
    });
    tenant = await t.createTenant();
    p = (await t.createProject(tenant)).id;
    const key = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'assistant', role: 'agent', projectIds: [p], actAsUsers: true })
      .expect(201);
    expect(key.body.actAsUsers).toBe(true);
    agent = { Authorization: `Bearer ${key.body.key}` };

    const created = await t.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({
        slug: 'acme',
        name: 'Acme',
        issuer,
        clientId: 'toolgate',
        clientSecret: 'toolgate-client-secret-0123456789abcdef',
        scopes: ['api:read'],
        apiHosts: [apiHost],
      });
    expect(created.status).toBe(201);
    // The same server as a provider whose connections the tenant's app confirms (verifyUrl).
    await t.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({
        slug: 'acme-verified',
        name: 'Acme Verified',
        issuer,
        clientId: 'toolgate',
        clientSecret: 'toolgate-client-secret-0123456789abcdef',
        scopes: ['api:read'],
        apiHosts: [apiHost],
        verifyUrl: `${VERIFY_PAGE}?from=toolgate`,
      })
      .expect(201);
    const skill = await t.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'acme',
        version: '1.0.0',
        description: 'Acme as the user',
        tools: [
          {
            name: 'acme_whoami',
            description: 'Who Acme says the user is',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme' } },
          },
          {
            name: 'acme_elsewhere',
            description: 'An endpoint outside apiHosts',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${outsideHost}/x`, auth: { provider: 'acme' } },
          },
          {
            name: 'acme_verified_whoami',
            description: 'Who Acme says the user is, verified',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme-verified' } },
          },
          {
            name: 'acme_moved',
            description: 'An endpoint that redirects elsewhere',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/moved`, auth: { provider: 'acme' } },
          },
          {
            name: 'acme_write',
            description: 'Needs api:write',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/w`, auth: { provider: 'acme', scopes: ['api:write'] } },
          },
          {
            name: 'acme_echo',
            description: 'Echoes the request',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/echo`, auth: { provider: 'acme' } },
          },
          {
            name: 'acme_team',
            description: "The tenant's own Acme account",
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme', as: 'tenant' } },
          },
        ],
      });
    expect(skill.status).toBe(201);
    await t.http.post(`/v1/projects/${p}/skills`).set(tenant.auth).send({ skillId: skill.body.id }).expect(201);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([close(authServer), close(api), close(outside), close(rogue), close(trap)]);
  });

  const call = (tool: string, user?: string, auth = agent) => {
    const req = t.http.post(`/v1/projects/${p}/tools/${tool}/invoke`).set(auth);
    return (user === undefined ? req : req.set('Toolgate-User', user)).send({ arguments: {} });
  };

  // A header as a client sends a UTF-8 name: its bytes (fetch sends each character of a latin-1 string as one byte).
  const callAsBytes = async (tool: string, user: string) => {
    const res = await fetch(`${appBase}/v1/projects/${p}/tools/${tool}/invoke`, {
      method: 'POST',
      headers: { ...agent, 'content-type': 'application/json', 'toolgate-user': Buffer.from(user, 'utf8').toString('latin1') },
      body: JSON.stringify({ arguments: {} }),
    });
    return { status: res.status, body: (await res.json()) as { status?: string; error?: { code: string } } };
  };

  // The person's browser: the authorization URL, the provider's sign-in and consent forms, up to the redirect
  // back to Toolgate's callback (answered as the URL, not followed).
  async function signInAtProvider(authorizationUrl: string, login: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = new URL(authorizationUrl);
    let form: URLSearchParams | undefined;
    for (let step = 0; step < 20; step++) {
      const res = await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(form && { body: form.toString() }),
      });
      for (const cookie of res.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      form = undefined;
      if (res.status >= 300 && res.status < 400) {
        url = new URL(res.headers.get('location')!, url);
        if (url.href.startsWith(`${appBase}/v1/connections/callback`)) return url;
        continue;
      }
      const page = await res.text();
      expect({ status: res.status, url: url.href }).toEqual({ status: 200, url: expect.any(String) });
      if (page.includes('name="login"')) form = new URLSearchParams({ prompt: 'login', login, password: 'any' });
      else if (page.includes('value="consent"')) form = new URLSearchParams({ prompt: 'consent' });
      else throw new Error(`unexpected page at ${url.href}: ${page.slice(0, 300)}`);
    }
    throw new Error('too many steps');
  }

  const connect = async (authorizationUrl: string, login: string) => {
    const back = await signInAtProvider(authorizationUrl, login);
    const done = await fetch(back);
    expect({ status: done.status, text: await done.text() }).toEqual({
      status: 200,
      text: expect.stringContaining('Your Acme account is connected'),
    });
  };

  it('shows the provider with its discovered endpoints and redirect URI, never its secret', async () => {
    const list = await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200);
    expect(list.body.items).toEqual([
      expect.objectContaining({
        slug: 'acme',
        issuer,
        discovered: true,
        tokenUrl: `${issuer}/token`,
        redirectUri: `${appBase}/v1/connections/callback`,
        apiHosts: [apiHost],
        verifyUrl: null,
      }),
      expect.objectContaining({ slug: 'acme-verified', verifyUrl: `${VERIFY_PAGE}?from=toolgate` }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain('toolgate-client-secret');
    const rows = await t.database.driver.query<{ client_secret: string }>('SELECT client_secret FROM auth_providers');
    expect(rows.every((row) => row.client_secret.startsWith('tgenc:v1:'))).toBe(true);
    // Agent keys do not manage providers.
    await t.http.get('/v1/auth-providers').set(agent).expect(403);
  });

  it('[sec-113] moving a provider to another token endpoint or client needs its secret again, and ends the connections made at the old one', async () => {
    const created = await t.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({
        slug: 'acme-moving',
        name: 'Acme Moving',
        issuer,
        clientId: 'toolgate',
        clientSecret: 'toolgate-client-secret-0123456789abcdef',
        scopes: ['api:read'],
        apiHosts: [apiHost],
      })
      .expect(201);
    const pending = await t.http
      .post('/v1/connections/authorize')
      .set(tenant.auth)
      .send({ provider: 'acme-moving', user: 'carol' })
      .expect(201);
    const moved = await t.http
      .patch(`/v1/auth-providers/${created.body.id}`)
      .set(tenant.auth)
      .send({ tokenUrl: `${issuer}/token?elsewhere=1` });
    expect([moved.status, moved.body.error?.code]).toEqual([422, 'invalid_auth_provider']);
    expect(moved.body.error.message).toMatch(/needs clientSecret again/);
    await t.http.patch(`/v1/auth-providers/${created.body.id}`).set(tenant.auth).send({ clientId: 'someone-else' }).expect(422);
    // A rename alone keeps everything.
    await t.http.patch(`/v1/auth-providers/${created.body.id}`).set(tenant.auth).send({ name: 'Acme, moving' }).expect(200);
    const listed = async () =>
      (
        (await t.http.get('/v1/connections?provider=acme-moving').set(tenant.auth).expect(200)).body.items as Array<{
          id: string;
          status: string;
        }>
      ).find((c) => c.id === pending.body.id);
    expect((await listed())?.status).toBe('pending');
    await t.http
      .patch(`/v1/auth-providers/${created.body.id}`)
      .set(tenant.auth)
      .send({ tokenUrl: `${issuer}/token?elsewhere=1`, clientSecret: 'a-new-secret-0123456789abcdef' })
      .expect(200);
    expect((await listed())?.status).toBe('revoked');
    await t.http.delete(`/v1/auth-providers/${created.body.id}`).set(tenant.auth).expect(204);
  });

  it("[sec-111] an agent's call of a tool that acts as the tenant gets no link to make the tenant's connection: only an admin makes it", async () => {
    const before = (await t.http.get('/v1/connections?provider=acme').set(tenant.auth).expect(200)).body.items as Array<{
      user: string | null;
    }>;
    const apiCalls = apiSaw.length;
    const res = await call('acme_team', 'mallory');
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'tenant_connection_required' } });
    expect(res.body.error.message).toMatch(/tenant's own connection at 'acme'.*an admin makes it/);
    expect(res.body.authorization).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain(`${issuer}/auth?`);
    const after = (await t.http.get('/v1/connections?provider=acme').set(tenant.auth).expect(200)).body.items as Array<{
      user: string | null;
    }>;
    expect(after.filter((c) => c.user === null)).toHaveLength(before.filter((c) => c.user === null).length);
    // Nothing reached the API: no token of anyone's was sent for mallory's call.
    expect(apiSaw.length).toBe(apiCalls);
  });

  it('[sec-109] alice connects and her call runs with her token; bob gets authorization_required and never hers', async () => {
    const first = await call('acme_whoami', 'alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      status: 'authorization_required',
      authorization: { provider: 'acme', url: expect.stringContaining(`${issuer}/auth?`), scopes: ['api:read'] },
    });
    expect(first.body.error.message).toMatch(/^Ask the user to open http.* to connect acme, then call again/);
    expect(apiSaw).toHaveLength(0);

    await connect(first.body.authorization.url as string, 'alice');
    const ran = await call('acme_whoami', 'alice');
    expect(ran.body).toMatchObject({ status: 'ok', result: { account: 'alice', scope: 'api:read' } });
    expect(apiSaw.map((seen) => seen.account)).toEqual(['alice']);

    const bob = await call('acme_whoami', 'bob');
    expect(bob.body).toMatchObject({ status: 'authorization_required', authorization: { provider: 'acme' } });
    // A call that names nobody is refused before anything runs.
    const nobody = await call('acme_whoami');
    expect([nobody.status, nobody.body.error.code]).toEqual([422, 'user_required']);
    expect(apiSaw.map((seen) => seen.account)).toEqual(['alice']);

    // Another tenant with a provider of the same slug never reaches alice's connection.
    const other = await t.createTenant();
    const q = (await t.createProject(other)).id;
    await t.http
      .post('/v1/auth-providers')
      .set(other.auth)
      .send({ slug: 'acme', name: 'Acme', issuer, clientId: 'toolgate-other-tenant', clientSecret: 'x', apiHosts: [apiHost] })
      .expect(201);
    const otherKey = await t.http
      .post('/v1/api-keys')
      .set(other.auth)
      .send({ role: 'agent', projectIds: [q], actAsUsers: true })
      .expect(201);
    const otherSkill = await t.http
      .post('/v1/skills')
      .set(other.auth)
      .send({
        name: 'acme',
        version: '1.0.0',
        description: 'x',
        tools: [
          {
            name: 'acme_whoami',
            description: 'x',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme' } },
          },
        ],
      })
      .expect(201);
    await t.http.post(`/v1/projects/${q}/skills`).set(other.auth).send({ skillId: otherSkill.body.id }).expect(201);
    const cross = await t.http
      .post(`/v1/projects/${q}/tools/acme_whoami/invoke`)
      .set({ Authorization: `Bearer ${otherKey.body.key}` })
      .set('Toolgate-User', 'alice')
      .send({ arguments: {} });
    expect(cross.body.status).toBe('authorization_required');
    expect(apiSaw).toHaveLength(1);

    // The audit names the user and keeps no link.
    const rows = (await t.http.get(`/v1/projects/${p}/invocations?user=alice`).set(tenant.auth).expect(200)).body.items as Json[];
    expect(rows.map((row) => [row.user, row.status])).toEqual([
      ['alice', 'authorization_required'],
      ['alice', 'ok'],
    ]);
    expect(JSON.stringify(rows)).not.toContain('/auth?');
  });

  it('[sec-113] an endpoint that echoes the token it was sent answers with it redacted', async () => {
    // alice connected above.
    const echoed = await call('acme_echo', 'alice');
    expect(echoed.body).toMatchObject({ status: 'ok', result: { youSent: 'Bearer [redacted]' } });
    const seen = apiSaw[apiSaw.length - 1].token;
    expect(seen.length).toBeGreaterThan(8);
    expect(JSON.stringify(echoed.body)).not.toContain(seen);
  });

  it('[sec-110] Toolgate-User from a key without actAsUsers, or a malformed user id, is refused and nothing runs', async () => {
    const before = apiSaw.length;
    const admin = await call('acme_whoami', 'alice', tenant.auth);
    expect([admin.status, admin.body.error.code]).toEqual([403, 'user_assertion_not_allowed']);
    for (const bad of ['a\tb', 'alice\u202Eecila', 'x'.repeat(257), 'zero\u200Bwidth', 'line\u2028break']) {
      const res = await callAsBytes('acme_whoami', bad);
      expect({ bad, status: res.status, code: res.body.error?.code }).toEqual({ bad, status: 422, code: 'invalid_user' });
    }
    // 256 characters, and a non-ASCII name sent as UTF-8, are fine.
    expect((await call('acme_whoami', 'y'.repeat(256))).body.status).toBe('authorization_required');
    const jose = await callAsBytes('acme_whoami', 'José');
    expect(jose.body.status).toBe('authorization_required');
    expect(
      (
        await t.http
          .get(`/v1/projects/${p}/invocations?user=${encodeURIComponent('José')}`)
          .set(tenant.auth)
          .expect(200)
      ).body.items,
    ).toHaveLength(1);
    expect(apiSaw.length).toBe(before);
    // An approver key cannot be made to act as users.
    await t.http.post('/v1/api-keys').set(tenant.auth).send({ role: 'approver', actAsUsers: true }).expect(400);
  });

  it('[sec-111] a link used twice, expired, with a changed state or iss, or from another provider is refused', async () => {
    const link = (await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'carol' }).expect(201))
      .body as Json;
    expect(link).toMatchObject({
      id: expect.any(String),
      authorizationUrl: expect.stringContaining('code_challenge_method=S256'),
      expiresAt: expect.any(String),
    });
    const back = await signInAtProvider(link.authorizationUrl as string, 'carol');

    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    expect((await fetch(tampered)).status).toBe(400);
    const wrongIss = new URL(back);
    wrongIss.searchParams.set('iss', 'http://127.0.0.1:9');
    const refused = await fetch(wrongIss);
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([400, 'connection_failed']);
    // The link was taken by that attempt: the genuine answer comes too late.
    const again = await fetch(back);
    expect([again.status, ((await again.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_connection_link']);

    // Used twice.
    const second = (await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'carol' }).expect(201))
      .body as Json;
    const ok = await signInAtProvider(second.authorizationUrl as string, 'carol');
    expect((await fetch(ok)).status).toBe(200);
    expect((await fetch(ok)).status).toBe(400);

    // Expired (10 minutes, played by moving the clock of the row).
    const third = (await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'dave' }).expect(201))
      .body as Json;
    await t.database.driver.query(`UPDATE connections SET link_expires_at = now() - interval '1 second' WHERE id = $1`, [third.id]);
    const late = await signInAtProvider(third.authorizationUrl as string, 'dave');
    expect((await fetch(late)).status).toBe(400);
    const listed = (await t.http.get('/v1/connections?user=dave').set(tenant.auth).expect(200)).body.items as Json[];
    expect(listed.map((c) => c.status)).toEqual(['expired']);

    // Another provider's code (same server, another Toolgate provider): the link's own provider exchanges it.
    await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'nope', user: 'carol' }).expect(404);
    const carol = (await t.http.get('/v1/connections?user=carol&provider=acme').set(tenant.auth).expect(200)).body.items as Json[];
    expect(carol.map((c) => c.status)).toEqual(['revoked', 'active']);
  });

  it('[sec-116] a tenant keeps at most 1000 links waiting: past them a link is refused, and links past their time make room', async () => {
    const hoarder = await t.createTenant();
    const made = await t.http
      .post('/v1/auth-providers')
      .set(hoarder.auth)
      .send({
        slug: 'acme',
        name: 'Acme',
        issuer,
        clientId: 'toolgate-hoarder',
        clientSecret: 'toolgate-client-secret-0123456789abcdef',
        apiHosts: [apiHost],
      })
      .expect(201);
    // 999 links asked for by an agent naming a new end user each time (as SQL: a thousand calls take long).
    await t.database.driver.query(
      `INSERT INTO connections (id, tenant_id, provider_id, end_user, status, state_hash, code_verifier, link_expires_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'user-' || i, 'pending', sha256(('s' || i || $1)::bytea), 'x', now() + interval '10 minutes', now()
       FROM generate_series(1, 999) AS i`,
      [hoarder.id, made.body.id],
    );
    const ask = (user: string) => t.http.post('/v1/connections/authorize').set(hoarder.auth).send({ provider: 'acme', user });
    expect((await ask('the-last-one')).status).toBe(201);
    const refused = await ask('one-more');
    expect([refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
      429,
      'connection_links_exceeded',
      { limit: 1000 },
    ]);
    const waiting = async () =>
      (await t.database.driver.query<{ n: number }>(`SELECT count(*)::int AS n FROM connections WHERE tenant_id = $1`, [hoarder.id]))[0].n;
    expect(await waiting()).toBe(1000);

    // Links past their time (and a minute more) go as soon as another is asked for.
    await t.database.driver.query(
      `UPDATE connections SET link_expires_at = now() - interval '2 minutes' WHERE tenant_id = $1 AND end_user LIKE 'user-%'`,
      [hoarder.id],
    );
    expect((await ask('one-more')).status).toBe(201);
    expect(await waiting()).toBe(2);
  });

  it('[sec-112] with verifyUrl, a link completed in another person’s browser never becomes active unless the app confirms the same user', async () => {
    const agentWithout = {
      Authorization: `Bearer ${
        (
          await t.http
            .post('/v1/api-keys')
            .set(tenant.auth)
            .send({ role: 'agent', projectIds: [p] })
            .expect(201)
        ).body.key as string
      }`,
    };
    const verify = (flow: string, user: string, auth: Json = agent) =>
      t.http
        .post('/v1/connections/verify')
        .set(auth as Record<string, string>)
        .send({ flow, user });
    // The person's browser up to the redirect to the app's page: the flow id and nothing else of the exchange.
    const complete = async (forUser: string, signedInAs: string): Promise<{ id: string; flow: string }> => {
      const first = await call('acme_verified_whoami', forUser);
      expect(first.body.status).toBe('authorization_required');
      const back = await signInAtProvider(first.body.authorization.url as string, signedInAs);
      const res = await fetch(back, { redirect: 'manual' });
      expect(res.status).toBe(303);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(VERIFY_PAGE);
      expect([...location.searchParams.keys()].sort()).toEqual(['flow', 'from']);
      for (const token of issued) expect(location.href).not.toContain(token);
      const [pending] = (
        (await t.http.get(`/v1/connections?user=${forUser}&provider=acme-verified`).set(tenant.auth).expect(200)).body.items as Json[]
      ).slice(-1);
      expect(pending.status).toBe('pending');
      return { id: pending.id as string, flow: location.searchParams.get('flow')! };
    };
    const before = apiSaw.length;

    // frank's link, completed by mallory: the account is mallory's; the app, where mallory is signed in, says so.
    const stolen = await complete('frank', 'mallory');
    expect((await call('acme_verified_whoami', 'frank')).body.status).toBe('authorization_required');
    const mismatch = await verify(stolen.flow, 'mallory');
    expect([mismatch.status, mismatch.body.error.code]).toEqual([403, 'connection_user_mismatch']);
    expect((await verify(stolen.flow, 'frank')).body.error.code).toBe('invalid_verification_flow');
    // (the calls' own authorization_required each left a fresh link, pending)
    const listed = (await t.http.get('/v1/connections?user=frank&provider=acme-verified').set(tenant.auth).expect(200)).body
      .items as Json[];
    expect(listed.find((c) => c.id === stolen.id)).toMatchObject({ status: 'revoked' });
    expect(listed.filter((c) => c.status === 'active')).toEqual([]);
    expect((await call('acme_verified_whoami', 'frank')).body.status).toBe('authorization_required');
    expect(apiSaw.length).toBe(before);

    // frank's own: another tenant, an agent key without actAsUsers and a changed flow are refused and leave it.
    const own = await complete('frank', 'frank');
    const other = await t.createTenant();
    expect((await verify(own.flow, 'frank', other.auth)).body.error.code).toBe('invalid_verification_flow');
    expect((await verify(own.flow, 'frank', agentWithout)).body.error.code).toBe('user_assertion_not_allowed');
    expect((await verify(`${own.flow}x`, 'frank')).body.error.code).toBe('invalid_verification_flow');
    expect((await verify(own.flow, 'frank\u202E')).status).toBe(422);
    const confirmed = await verify(own.flow, 'frank');
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ id: own.id, provider: 'acme-verified', user: 'frank', status: 'active', returnTo: null });
    expect((await verify(own.flow, 'frank')).body.error.code).toBe('invalid_verification_flow');
    expect((await call('acme_verified_whoami', 'frank')).body).toMatchObject({ status: 'ok', result: { account: 'frank' } });

    // A flow nobody confirms within 10 minutes (the row's clock moved) is refused and never used.
    const late = await complete('grace', 'grace');
    await t.database.driver.query(`UPDATE connections SET verify_expires_at = now() - interval '1 second' WHERE id = $1`, [late.id]);
    expect((await verify(late.flow, 'grace', tenant.auth)).body.error.code).toBe('invalid_verification_flow');
    const dropped = await t.database.driver.query<{ access_token: string | null; refresh_token: string | null }>(
      'SELECT access_token, refresh_token FROM connections WHERE id = $1',
      [late.id],
    );
    expect(dropped).toEqual([{ access_token: null, refresh_token: null }]);
    const graces = (await t.http.get('/v1/connections?user=grace').set(tenant.auth).expect(200)).body.items as Json[];
    expect(graces.find((c) => c.id === late.id)).toMatchObject({ status: 'expired' });
    expect(graces.filter((c) => c.status === 'active')).toEqual([]);
    expect((await call('acme_verified_whoami', 'grace')).body.status).toBe('authorization_required');
    expect(apiSaw.slice(before).map((seen) => seen.account)).toEqual(['frank']);
  });

  it('[sec-113] tokens never appear in the connections listing, audit rows, the export, errors or logs, and are sealed at rest', async () => {
    expect(issued.size).toBeGreaterThan(0);
    const listing = JSON.stringify(await listAll(tenant.auth, '', 100));
    const audit = JSON.stringify((await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200)).body);
    const exported = (await t.http.get(`/v1/projects/${p}/invocations/export`).set(tenant.auth).expect(200)).text;
    const logs = JSON.stringify(t.logs);
    for (const token of issued) {
      for (const [where, text] of Object.entries({ listing, audit, exported, logs }))
        expect({ where, leaks: text.includes(token) }).toEqual({ where, leaks: false });
    }
    const rows = await t.database.driver.query<{ access_token: string | null; refresh_token: string | null }>(
      `SELECT access_token, refresh_token FROM connections WHERE status = 'active'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.access_token).toMatch(/^tgenc:v1:/);
      expect(row.refresh_token).toMatch(/^tgenc:v1:/);
    }
  });

  it('[sec-114] the token is not sent to a host outside the provider’s apiHosts', async () => {
    const res = await call('acme_elsewhere', 'alice');
    expect([res.status, res.body.error.code]).toEqual([403, 'token_host_refused']);
    expect(outsideSaw).toEqual([]);
  });

  it('[sec-115] provider endpoints are fetched under the fetch_url address policy, given, discovered or redirected to', async () => {
    const create = (slug: string, endpoints: Json) =>
      t.http
        .post('/v1/auth-providers')
        .set(tenant.auth)
        .send({
          slug,
          name: 'Acme',
          clientId: 'toolgate',
          clientSecret: 'toolgate-client-secret-0123456789abcdef',
          apiHosts: [apiHost],
          ...endpoints,
        });
    const refused = async (slug: string, endpoints: Json, status: number, code: string) => {
      const res = await create(slug, endpoints);
      expect({ slug, status: res.status, code: res.body.error?.code }).toEqual({ slug, status, code });
    };
    // An issuer at a loopback, private or metadata address nobody opened.
    await refused('loopback-issuer', { issuer: `https://${trapHost}` }, 403, 'url_blocked');
    await refused('plain-issuer', { issuer: `http://${trapHost}` }, 422, 'invalid_auth_provider');
    await refused('metadata-issuer', { issuer: 'https://169.254.169.254' }, 403, 'url_blocked');
    await refused('private-issuer', { issuer: 'https://10.1.2.3' }, 403, 'url_blocked');
    await refused('v6-issuer', { issuer: 'https://[::1]:8443' }, 403, 'url_blocked');
    // Endpoints given by hand.
    const auth = `${rogueBase}/auth`;
    await refused('loopback-token', { authorizationUrl: auth, tokenUrl: `https://${trapHost}/token` }, 403, 'url_blocked');
    await refused('metadata-token', { authorizationUrl: auth, tokenUrl: 'https://169.254.169.254/latest/meta-data' }, 403, 'url_blocked');
    await refused('mapped-token', { authorizationUrl: auth, tokenUrl: 'https://[::ffff:127.0.0.1]/token' }, 403, 'url_blocked');
    await refused(
      'loopback-revocation',
      { authorizationUrl: auth, tokenUrl: `${rogueBase}/token`, revocationUrl: `https://${trapHost}/revoke` },
      403,
      'url_blocked',
    );
    // A discovery document, at an opened host, that names endpoints at addresses nobody opened.
    await refused('doc-private-token', { issuer: `${rogueBase}/private-token` }, 403, 'url_blocked');
    await refused('doc-metadata-token', { issuer: `${rogueBase}/metadata-token` }, 403, 'url_blocked');
    await refused('doc-private-revocation', { issuer: `${rogueBase}/private-revocation` }, 422, 'invalid_auth_provider');
    // A discovery document that redirects there: not followed (the policy refuses the redirect's target).
    await refused('doc-redirect', { issuer: `${rogueBase}/redirect` }, 403, 'url_blocked');
    expect(trapSaw).toEqual([]);
    const slugs = ((await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body.items as Json[]).map((item) => item.slug);
    expect(slugs).toEqual(['acme', 'acme-verified']);

    // Endpoints that move after the provider was accepted (as a name can be repointed) are judged again at every
    // request: the code exchange, the refresh and the revocation never reach the trap.
    await create('acme-moving', { issuer, scopes: ['api:read'] }).expect(201);
    const movingSkill = await t.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'acme-moving',
        version: '1.0.0',
        description: 'x',
        tools: [
          {
            name: 'moving_whoami',
            description: 'x',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme-moving' } },
          },
        ],
      })
      .expect(201);
    await t.http.post(`/v1/projects/${p}/skills`).set(tenant.auth).send({ skillId: movingSkill.body.id }).expect(201);
    const move = (field: string, to: string) =>
      t.database.driver.query(
        `UPDATE auth_providers SET metadata = jsonb_set(metadata, $2, to_jsonb($3::text)) WHERE slug = 'acme-moving' AND tenant_id = $1`,
        [tenant.id, `{${field}}`, to],
      );
    const first = await call('moving_whoami', 'heidi');
    const back = await signInAtProvider(first.body.authorization.url as string, 'heidi');
    await move('token_endpoint', `https://${trapHost}/token`);
    const exchange = await fetch(back);
    const answer = (await exchange.json()) as { error: { code: string; message: string } };
    expect([exchange.status, answer.error.code]).toEqual([400, 'connection_failed']);
    expect(answer.error.message).toContain('Refused to fetch');
    expect(trapSaw).toEqual([]);

    await move('token_endpoint', `${issuer}/token`);
    const again = await call('moving_whoami', 'heidi');
    await connect(again.body.authorization.url as string, 'heidi');
    expect((await call('moving_whoami', 'heidi')).body).toMatchObject({ status: 'ok', result: { account: 'heidi' } });
    const [heidi] = (
      (await t.http.get('/v1/connections?user=heidi&provider=acme-moving').set(tenant.auth).expect(200)).body.items as Json[]
    ).filter((c) => c.status === 'active');
    await move('token_endpoint', `https://${trapHost}/token`);
    await move('revocation_endpoint', `https://${trapHost}/revoke`);
    await t.database.driver.query(`UPDATE connections SET token_expires_at = now() WHERE id = $1`, [heidi.id]);
    const refresh = await call('moving_whoami', 'heidi');
    expect(refresh.body).toMatchObject({ status: 'error', error: { code: 'auth_provider_unavailable' } });
    await t.http
      .delete(`/v1/connections/${heidi.id as string}`)
      .set(tenant.auth)
      .expect(204);
    expect(trapSaw).toEqual([]);
  });

  it("[sec-115] no provider can have people sign in at one server and bring their code to another's token endpoint (a mix-up)", async () => {
    const create = (slug: string, fields: Json) =>
      t.http
        .post('/v1/auth-providers')
        .set(tenant.auth)
        .send({
          slug,
          name: 'Mix',
          clientId: 'toolgate',
          clientSecret: 'toolgate-client-secret-0123456789abcdef',
          apiHosts: [apiHost],
          ...fields,
        });
    const refused = async (slug: string, fields: Json, message: RegExp) => {
      const res = await create(slug, fields);
      expect({ slug, status: res.status, code: res.body.error?.code }).toEqual({ slug, status: 422, code: 'invalid_auth_provider' });
      expect(res.body.error.message).toMatch(message);
    };
    const before = { trap: trapSaw.length, outside: outsideSaw.length };
    // By hand: the real server's sign-in page, a token or revocation endpoint (or an issuer) elsewhere.
    await refused(
      'mix-token',
      { authorizationUrl: `${issuer}/auth`, tokenUrl: `http://${outsideHost}/token` },
      /tokenUrl must be on the origin of authorizationUrl/,
    );
    await refused(
      'mix-revocation',
      { authorizationUrl: `${issuer}/auth`, tokenUrl: `${issuer}/token`, revocationUrl: `http://${outsideHost}/revoke` },
      /revocationUrl must be on the origin/,
    );
    await refused(
      'mix-issuer',
      { issuer: `http://${outsideHost}`, authorizationUrl: `${issuer}/auth`, tokenUrl: `${issuer}/token` },
      /issuer must be on the origin/,
    );
    // Discovered: a document naming another server's authorization endpoint.
    await refused('mix-discovered', { issuer: `${rogueBase}/foreign-authorization` }, /authorization_endpoint on another origin/);
    // Toolgate's own client (its client ID metadata document, shared by every tenant) is nobody's to claim.
    await refused(
      'mix-own-client',
      { authorizationUrl: `${issuer}/auth`, tokenUrl: `${issuer}/token`, clientId: `${appBase}/v1/connections/client-metadata.json` },
      /client of Toolgate itself/,
    );
    // Nothing was asked of the other server.
    expect([trapSaw.slice(before.trap), outsideSaw.slice(before.outside)]).toEqual([[], []]);
    // All on one origin is taken as before.
    const kept = await create('mix-none', { authorizationUrl: `${issuer}/auth`, tokenUrl: `${issuer}/token` });
    expect(kept.status).toBe(201);
    // A provider stored before the rule, its token endpoint elsewhere, makes no link until it is mended.
    await t.database.driver.query(
      `UPDATE auth_providers SET metadata = jsonb_set(metadata, '{token_endpoint}', to_jsonb($2::text)) WHERE id = $1`,
      [kept.body.id, `http://${outsideHost}/token`],
    );
    const link = await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'mix-none', user: 'alice' });
    expect({ status: link.status, code: link.body.error?.code }).toEqual({ status: 422, code: 'invalid_auth_provider' });
    // Another tenant may not name this tenant's client at the same server: a person sent its link would
    // consent to this tenant's application and land in the other. At another server the same ID is its own.
    const other = await t.createTenant();
    const claim = (slug: string, at: string) =>
      t.http
        .post('/v1/auth-providers')
        .set(other.auth)
        .send({
          slug,
          name: 'Mine',
          clientId: 'toolgate',
          clientSecret: 'another-secret-0123456789abcdef',
          apiHosts: [apiHost],
          authorizationUrl: `${at}/auth`,
          tokenUrl: `${at}/token`,
        });
    const taken = await claim('same-client', issuer);
    expect({ status: taken.status, code: taken.body.error?.code }).toEqual({ status: 409, code: 'client_id_taken' });
    expect((await claim('same-client', `http://${outsideHost}`)).status).toBe(201);
  });

  it('a link asked for with user null, or returnTo null, is refused as a bad request', async () => {
    for (const body of [
      { provider: 'acme', user: null },
      { provider: 'acme', user: 'alice', returnTo: null },
    ]) {
      const res = await t.http.post('/v1/connections/authorize').set(tenant.auth).send(body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'validation_failed' });
    }
  });

  it('[sec-115] a token for one provider or host is never sent to another', async () => {
    // The API redirects the call to another host: the executor does not follow, the other host sees nothing.
    const sawBefore = apiSaw.length;
    const moved = await call('acme_moved', 'alice');
    expect(moved.body.status).not.toBe('ok');
    expect(apiSaw.slice(sawBefore).map((seen) => seen.account)).toEqual(['alice']);
    // Another provider whose apiHosts is the other host: alice's acme token is not its token.
    await t.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({ slug: 'beta', name: 'Beta', issuer, clientId: 'toolgate', clientSecret: 'x', apiHosts: [outsideHost] })
      .expect(201);
    const betaSkill = await t.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'beta',
        version: '1.0.0',
        description: 'x',
        tools: [
          {
            name: 'beta_whoami',
            description: 'x',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${outsideHost}/x`, auth: { provider: 'beta' } },
          },
        ],
      })
      .expect(201);
    await t.http.post(`/v1/projects/${p}/skills`).set(tenant.auth).send({ skillId: betaSkill.body.id }).expect(201);
    expect((await call('beta_whoami', 'alice')).body.status).toBe('authorization_required');
    expect(outsideSaw).toEqual([]);
  });

  it('asks again for a scope the connection lacks', async () => {
    const res = await call('acme_write', 'alice');
    expect(res.body).toMatchObject({ status: 'authorization_required', authorization: { scopes: ['api:read', 'api:write'] } });
  });

  it('refreshes a token about to expire, and once after the API refuses it; a refused refresh asks the user again', async () => {
    const [alice] = (await t.http.get('/v1/connections?user=alice').set(tenant.auth).expect(200)).body.items as Json[];
    await t.database.driver.query(`UPDATE connections SET token_expires_at = now() WHERE id = $1`, [alice.id]);
    const before = apiSaw.length;
    expect((await call('acme_whoami', 'alice')).body).toMatchObject({ status: 'ok', result: { account: 'alice' } });
    const refreshed = apiSaw.at(-1)!.token;
    expect(apiSaw.slice(0, before).some((seen) => seen.token === refreshed)).toBe(false);

    // The provider forgets the access token: the API answers 401, the executor refreshes once and calls again.
    await (await provider.AccessToken.find(refreshed))!.destroy();
    expect((await call('acme_whoami', 'alice')).body).toMatchObject({ status: 'ok', result: { account: 'alice' } });
    expect(apiSaw.at(-2)).toEqual({ token: refreshed, account: null });

    // Twenty calls at once with an expired token: one refresh.
    await t.database.driver.query(`UPDATE connections SET token_expires_at = now() WHERE id = $1`, [alice.id]);
    const mark = apiSaw.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => call('acme_whoami', 'alice')));
    expect(answers.map((a) => a.body.status)).toEqual(Array(20).fill('ok'));
    expect(new Set(apiSaw.slice(mark).map((seen) => seen.token)).size).toBe(1);

    // A refresh the provider refuses: the connection expires and the call asks the user to connect again.
    const box = t.app.get(SecretBox);
    await t.database.driver.query(`UPDATE connections SET token_expires_at = now(), refresh_token = $2 WHERE id = $1`, [
      alice.id,
      box.seal('not-a-refresh-token'),
    ]);
    const expired = await call('acme_whoami', 'alice');
    expect(expired.body).toMatchObject({ status: 'authorization_required' });
    const listed = (await t.http.get('/v1/connections?user=alice').set(tenant.auth).expect(200)).body.items as Json[];
    expect(listed.find((c) => c.id === alice.id)).toMatchObject({ status: 'expired' });
  });

  it('a call parked for approval keeps its end user: approved, it runs as that same person with their token', async () => {
    const q = (await t.createProject(tenant)).id;
    const skills = (await t.http.get('/v1/skills').set(tenant.auth).expect(200)).body.items as Json[];
    await t.http
      .post(`/v1/projects/${q}/skills`)
      .set(tenant.auth)
      .send({ skillId: skills.find((k) => k.name === 'acme')!.id })
      .expect(201);
    await t.http
      .patch(`/v1/projects/${q}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['acme_whoami'] })
      .expect(200);
    const key = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [q], actAsUsers: true })
      .expect(201);
    const ivan = await call('acme_whoami', 'ivan');
    await connect(ivan.body.authorization.url as string, 'ivan');
    const parked = await t.http
      .post(`/v1/projects/${q}/tools/acme_whoami/invoke`)
      .set({ Authorization: `Bearer ${key.body.key as string}` })
      .set('Toolgate-User', 'ivan')
      .send({ arguments: {} });
    expect(parked.body).toMatchObject({ status: 'pending_approval' });
    const id = parked.body.invocationId as string;
    const rows = await t.database.driver.query<{ end_user: string | null }>('SELECT end_user FROM parked_calls WHERE id = $1', [id]);
    expect(rows.map((row) => row.end_user)).toEqual(['ivan']);
    const before = apiSaw.length;
    const decided = await t.http.post(`/v1/projects/${q}/invocations/${id}/approve`).set(tenant.auth).send({}).expect(200);
    expect(decided.body.outcome).toMatchObject({ status: 'ok', result: { account: 'ivan' } });
    expect(apiSaw.slice(before).map((seen) => seen.account)).toEqual(['ivan']);
    const audit = (await t.http.get(`/v1/projects/${q}/invocations?user=ivan`).set(tenant.auth).expect(200)).body.items as Json[];
    expect(audit.map((row) => [row.user, row.status])).toEqual([['ivan', 'ok']]);

    // Parked for bob (who has no connection), approved: it answers authorization_required for bob, never ivan's token.
    const bobs = await t.http
      .post(`/v1/projects/${q}/tools/acme_whoami/invoke`)
      .set({ Authorization: `Bearer ${key.body.key as string}` })
      .set('Toolgate-User', 'bob')
      .send({ arguments: {} });
    const bobDecided = await t.http
      .post(`/v1/projects/${q}/invocations/${bobs.body.invocationId as string}/approve`)
      .set(tenant.auth)
      .send({})
      .expect(200);
    expect(bobDecided.body.outcome).toMatchObject({ status: 'authorization_required', authorization: { provider: 'acme' } });
    expect(apiSaw.length).toBe(before + 1);
  });

  it('over MCP: a client that declared URL-mode elicitation gets -32042 with the link, any other a tool result with the message; both audited', async () => {
    const mcpClient = async (capabilities: Record<string, unknown>, user: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${appBase}/v1/projects/${p}/mcp`), {
        requestInit: { headers: { ...agent, 'Toolgate-User': user } },
      });
      const client = new Client({ name: 'connections-test', version: '1.0.0' }, { capabilities });
      await client.connect(transport);
      return client;
    };
    const before = apiSaw.length;
    // The official SDK client, declaring elicitation in URL mode (2025-11-25).
    const eliciting = await mcpClient({ elicitation: { url: {} } }, 'judy');
    let refused: unknown;
    await eliciting.callTool({ name: 'acme_whoami', arguments: {} }).catch((error: unknown) => (refused = error));
    expect(refused).toBeInstanceOf(McpError);
    const { code, message, data } = refused as McpError;
    expect(code).toBe(ErrorCode.UrlElicitationRequired);
    expect(code).toBe(-32042);
    expect(message).toMatch(/Ask the user to open http.* to connect acme, then call again/);
    const [elicitation] = (data as { elicitations: Json[] }).elicitations;
    // (the SDK's McpError prefixes "MCP error -32042: " to the message it was sent)
    expect(elicitation).toEqual({
      mode: 'url',
      elicitationId: expect.any(String),
      url: expect.stringContaining(`${issuer}/auth?`),
      message: expect.stringMatching(/^Ask the user to open http/),
    });
    expect(message).toContain(elicitation.message as string);
    await eliciting.close();

    // A client that declared form-mode elicitation only (or none): the tool result, isError, the same message.
    const plain = await mcpClient({ elicitation: {} }, 'judy');
    const result = (await plain.callTool({ name: 'acme_whoami', arguments: {} })) as {
      isError?: boolean;
      content: Array<{ text?: string }>;
    };
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/Ask the user to open http.* to connect acme, then call again/);
    await plain.close();

    // Revision 2026-07-28: the capabilities come with the request.
    const modern = async (capabilities: Json) => {
      const res = await fetch(`${appBase}/v1/projects/${p}/mcp`, {
        method: 'POST',
        headers: {
          ...agent,
          'Toolgate-User': 'judy',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'acme_whoami',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: withEnvelope({
            name: 'acme_whoami',
            arguments: {},
            _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities },
          }),
        }),
      });
      return (await res.json()) as { error?: { code: number; data?: { elicitations: Json[] } }; result?: { isError?: boolean } };
    };
    const modernEliciting = await modern({ elicitation: { url: {} } });
    expect(modernEliciting.error?.code).toBe(-32042);
    expect(modernEliciting.error?.data?.elicitations[0]).toMatchObject({ mode: 'url', url: expect.stringContaining(`${issuer}/auth?`) });
    expect((await modern({})).result?.isError).toBe(true);

    // Each is audited as authorization_required under judy; nothing reached the API.
    const rows = (await t.http.get(`/v1/projects/${p}/invocations?user=judy`).set(tenant.auth).expect(200)).body.items as Json[];
    expect(rows.map((row) => [row.channel, row.status])).toEqual(Array(4).fill(['mcp', 'authorization_required']));
    expect(apiSaw.length).toBe(before);
  });

  it('a revoked connection stops at once, and is revoked at the provider', async () => {
    const first = await call('acme_whoami', 'erin');
    await connect(first.body.authorization.url as string, 'erin');
    expect((await call('acme_whoami', 'erin')).body.status).toBe('ok');
    const token = apiSaw.at(-1)!.token;
    const [erin] = (await t.http.get('/v1/connections?user=erin').set(tenant.auth).expect(200)).body.items as Json[];
    await t.http
      .delete(`/v1/connections/${erin.id as string}`)
      .set(tenant.auth)
      .expect(204);
    expect(await provider.AccessToken.find(token)).toBeUndefined();
    expect((await call('acme_whoami', 'erin')).body.status).toBe('authorization_required');
    await t.http
      .delete(`/v1/connections/${erin.id as string}`)
      .set(tenant.auth)
      .expect(404);
  });

  // Each provider keeps up to about 35 KB; without a count a tenant could add them at its request rate for
  // as long as it liked. The count is taken under the tenant's lock: creations at once cannot pass it.
  it("holds a tenant to 50 auth providers, its MCP sources' included, counted under its lock", async () => {
    const owner = await t.createTenant();
    // A client ID of its own: another tenant's provider at the same server has toolgate's.
    const create = (slug: string, who: TestTenant = owner, clientId = 'owner-client') =>
      t.http
        .post('/v1/auth-providers')
        .set(who.auth)
        .send({
          slug,
          name: 'Acme',
          clientId,
          clientSecret: 'toolgate-client-secret-0123456789abcdef',
          authorizationUrl: `${issuer}/auth`,
          tokenUrl: `${issuer}/token`,
          apiHosts: [apiHost],
        })
        .then((r) => r);
    for (let i = 0; i < 46; i++) expect((await create(`p-${i}`)).status).toBe(201);
    const atOnce = await Promise.all([46, 47, 48, 49, 50, 51].map((i) => create(`p-${i}`)));
    expect(atOnce.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 403, 403]);
    const refused = atOnce.find((r) => r.status === 403)!;
    expect(refused.body.error).toMatchObject({ code: 'too_many_auth_providers', details: { limit: 50 } });
    expect(refused.body.error.message).toMatch(/at most 50 auth providers/);
    expect((await t.http.get('/v1/auth-providers').set(owner.auth).expect(200)).body.items).toHaveLength(50);
    // A slug already taken still says so, at the count or not.
    expect((await create('p-0')).body.error.code).toBe('auth_provider_slug_taken');
    // Another tenant is not counted with it, and one deleted makes room.
    const theirs = await create('not-counted-with-owner', tenant, 'toolgate');
    expect(theirs.status).toBe(201);
    await t.http
      .delete(`/v1/auth-providers/${theirs.body.id as string}`)
      .set(tenant.auth)
      .expect(204);
    const first = ((await t.http.get('/v1/auth-providers').set(owner.auth).expect(200)).body.items as Json[])[0];
    await t.http
      .delete(`/v1/auth-providers/${first.id as string}`)
      .set(owner.auth)
      .expect(204);
    expect((await create('p-again')).status).toBe(201);
  }, 60_000);

  // A tenant of its own with the acme provider (a client ID of its own: another tenant's at the same server
  // is refused).
  const tenantWithAcme = async (clientId: string) => {
    const owner = await t.createTenant();
    const made = await t.http
      .post('/v1/auth-providers')
      .set(owner.auth)
      .send({ slug: 'acme', name: 'Acme', issuer, clientId, clientSecret: 'toolgate-client-secret-0123456789abcdef', apiHosts: [apiHost] })
      .expect(201);
    return { owner, providerId: made.body.id as string };
  };
  const countOf = async (tenantId: string, status?: string) =>
    (
      await t.database.driver.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM connections WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)`,
        [tenantId, status ?? null],
      )
    )[0].n;
  // Every page of GET /v1/connections?<query>, in order.
  const listAll = async (auth: Record<string, string>, query: string, limit: number) => {
    const pages: Json[][] = [];
    let cursor: string | null = null;
    do {
      const page = await t.http
        .get(`/v1/connections?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
        .set(auth)
        .expect(200);
      pages.push(page.body.items as Json[]);
      cursor = page.body.nextCursor as string | null;
    } while (cursor !== null && pages.length < 1000);
    return pages;
  };

  it('holds a tenant to 10000 connections of any status, counted under its lock: links asked for at once at the edge get exactly the room left', async () => {
    const { owner, providerId } = await tenantWithAcme('toolgate-crowd');
    // 9,995 connections, active, revoked and expired, as years of people's flows leave them (in SQL: that
    // many flows through the provider take too long).
    await t.database.driver.query(
      `INSERT INTO connections (id, tenant_id, provider_id, end_user, status, updated_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'person-' || i, (ARRAY['active', 'revoked', 'expired'])[1 + i % 3], now()
       FROM generate_series(1, 9995) AS i`,
      [owner.id, providerId],
    );
    const ask = (user: string, who: TestTenant = owner) =>
      t.http.post('/v1/connections/authorize').set(who.auth).send({ provider: 'acme', user });
    const atOnce = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(`newcomer-${i}`)));
    expect(atOnce.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 403, 403, 403, 403, 403]);
    const refused = atOnce.find((r) => r.status === 403)!;
    expect(refused.body.error).toMatchObject({ code: 'too_many_connections', details: { limit: 10000 } });
    expect(refused.body.error.message).toMatch(/has 10000 connections, the most it may keep/);
    expect(refused.body.error.message).toMatch(/DELETE \/v1\/connections\/\{id\}.*deleted 7 days after it ended/);
    // Nothing of a refused one was kept.
    expect(await countOf(owner.id)).toBe(10_000);

    // A call that would answer with a link is refused the same way, and nothing runs.
    const q = (await t.createProject(owner)).id;
    const skill = await t.http
      .post('/v1/skills')
      .set(owner.auth)
      .send({
        name: 'acme',
        version: '1.0.0',
        description: 'x',
        tools: [
          {
            name: 'acme_whoami',
            description: 'x',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme' } },
          },
        ],
      })
      .expect(201);
    await t.http.post(`/v1/projects/${q}/skills`).set(owner.auth).send({ skillId: skill.body.id }).expect(201);
    const key = await t.http
      .post('/v1/api-keys')
      .set(owner.auth)
      .send({ role: 'agent', projectIds: [q], actAsUsers: true })
      .expect(201);
    const apiCalls = apiSaw.length;
    const refusedCall = await t.http
      .post(`/v1/projects/${q}/tools/acme_whoami/invoke`)
      .set({ Authorization: `Bearer ${key.body.key as string}` })
      .set('Toolgate-User', 'one-more-person')
      .send({ arguments: {} });
    expect([refusedCall.status, refusedCall.body.error?.code]).toEqual([403, 'too_many_connections']);
    expect(apiSaw.length).toBe(apiCalls);
    expect(await countOf(owner.id)).toBe(10_000);

    // Another tenant is not counted with it.
    expect((await ask('someone-else', tenant)).status).toBe(201);
    // A revoked connection still counts until it is deleted.
    const made = atOnce.find((r) => r.status === 201)!;
    await t.http
      .delete(`/v1/connections/${made.body.id as string}`)
      .set(owner.auth)
      .expect(204);
    expect((await ask('after-revoking')).body.error?.code).toBe('too_many_connections');

    // A week on, the sweep deletes the ended ones (in batches: thousands of them) and never an active one.
    const active = await countOf(owner.id, 'active');
    expect(active).toBe(3331);
    await t.database.driver.query(
      `UPDATE connections SET updated_at = now() - interval '8 days' WHERE tenant_id = $1 AND status IN ('revoked', 'expired')`,
      [owner.id],
    );
    expect(await t.app.get(ConnectionsSweeper).sweep()).toBeGreaterThanOrEqual(6665);
    expect(await countOf(owner.id, 'active')).toBe(active);
    expect(await countOf(owner.id)).toBe(active + 4);
    expect((await ask('after-the-sweep')).status).toBe(201);
  }, 60_000);

  it('the sweep deletes connections no longer usable: ended a week ago, or links run out an hour ago; never an active one', async () => {
    const { owner, providerId } = await tenantWithAcme('toolgate-sweep');
    const other = await tenantWithAcme('toolgate-sweep-other');
    // Revoked through the API, long after it was made: the week counts from its revocation. (First: a new link
    // deletes the tenant's links past their time, which the sweep is to find below.)
    const link = await t.http.post('/v1/connections/authorize').set(owner.auth).send({ provider: 'acme', user: 'zoe' }).expect(201);
    await t.database.driver.query(
      `UPDATE connections SET created_at = now() - interval '30 days', updated_at = now() - interval '30 days' WHERE id = $1`,
      [link.body.id],
    );
    await t.http
      .delete(`/v1/connections/${link.body.id as string}`)
      .set(owner.auth)
      .expect(204);

    // A connection as the service leaves it, its clock moved: each time is an SQL interval from now.
    const plant = async (
      where: { owner: TestTenant; providerId: string },
      status: string,
      at: { updated?: string; link?: string; verify?: string },
    ) => {
      const id = randomUUID();
      await t.database.driver.query(
        `INSERT INTO connections (id, tenant_id, provider_id, end_user, status, link_expires_at, verify_expires_at, updated_at, created_at)
         VALUES ($1, $2, $3, 'person', $4, now() + $5::interval, now() + $6::interval, now() + $7::interval, now() - interval '60 days')`,
        [id, where.owner.id, where.providerId, status, at.link ?? null, at.verify ?? null, at.updated ?? '0 seconds'],
      );
      return id;
    };
    const mine = { owner, providerId };
    const stay = {
      activeUntouchedFor30Days: await plant(mine, 'active', { updated: '-30 days' }),
      revokedSixDaysAgo: await plant(mine, 'revoked', { updated: '-6 days' }),
      expiredSixDaysAgo: await plant(mine, 'expired', { updated: '-6 days' }),
      linkRanOutHalfAnHourAgo: await plant(mine, 'pending', { updated: '-40 minutes', link: '-30 minutes' }),
      linkWaiting: await plant(mine, 'pending', { link: '10 minutes' }),
      awaitingVerification: await plant(mine, 'pending', { updated: '-3 hours', link: '-2 hours', verify: '5 minutes' }),
      othersActive: await plant(other, 'active', { updated: '-90 days' }),
    };
    const go = {
      revokedEightDaysAgo: await plant(mine, 'revoked', { updated: '-8 days' }),
      expiredEightDaysAgo: await plant(mine, 'expired', { updated: '-8 days' }),
      linkRanOutTwoHoursAgo: await plant(mine, 'pending', { updated: '-3 hours', link: '-2 hours' }),
      verificationRanOutTwoHoursAgo: await plant(mine, 'pending', { updated: '-3 hours', link: '-2 hours', verify: '-2 hours' }),
      othersRevoked: await plant(other, 'revoked', { updated: '-30 days' }),
    };
    const sweeper = t.app.get(ConnectionsSweeper);
    expect(await sweeper.sweep()).toBeGreaterThanOrEqual(Object.keys(go).length);
    const left = async () =>
      new Set(
        (
          await t.database.driver.query<{ id: string }>(`SELECT id FROM connections WHERE tenant_id IN ($1, $2)`, [
            owner.id,
            other.owner.id,
          ])
        ).map((row) => row.id),
      );
    const after = await left();
    for (const [name, id] of Object.entries(stay)) expect({ name, kept: after.has(id) }).toEqual({ name, kept: true });
    for (const [name, id] of Object.entries(go)) expect({ name, kept: after.has(id) }).toEqual({ name, kept: false });
    expect(after.has(link.body.id as string)).toBe(true);
    // The listing shows what is left, the active one among it.
    const listed = (await listAll(owner.auth, 'provider=acme', 100)).flat();
    expect(listed.map((c) => c.id).sort()).toEqual(
      [
        ...Object.entries(stay)
          .filter(([name]) => name !== 'othersActive')
          .map(([, id]) => id),
        link.body.id as string,
      ].sort(),
    );

    // Eight days after its revocation it goes too; a sweep with nothing to do deletes nothing.
    await t.database.driver.query(`UPDATE connections SET updated_at = now() - interval '8 days' WHERE id = $1`, [link.body.id]);
    await sweeper.sweep();
    expect((await left()).has(link.body.id as string)).toBe(false);
    expect(await sweeper.sweep()).toBe(0);
    expect((await left()).size).toBe(Object.keys(stay).length);
  });

  it('pages GET /v1/connections oldest first: every connection once, limit 1-100 (20 by default), the filters kept', async () => {
    const { owner, providerId } = await tenantWithAcme('toolgate-pager');
    // 45 connections made in the same millisecond (the cursor orders them by id after their time) and 7 links.
    await t.database.driver.query(
      `INSERT INTO connections (id, tenant_id, provider_id, end_user, status, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, 'person-' || (i % 3), 'active', '2000-01-01T00:00:00.000Z', now()
       FROM generate_series(1, 45) AS i`,
      [owner.id, providerId],
    );
    for (let i = 0; i < 7; i++) {
      await t.http
        .post('/v1/connections/authorize')
        .set(owner.auth)
        .send({ provider: 'acme', user: `linked-${i}` })
        .expect(201);
    }
    const all = (await t.database.driver.query<{ id: string }>(`SELECT id FROM connections WHERE tenant_id = $1`, [owner.id])).map(
      (row) => row.id,
    );
    expect(all).toHaveLength(52);

    const first = await t.http.get('/v1/connections').set(owner.auth).expect(200);
    expect(first.body.items).toHaveLength(20);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    for (const limit of [1, 10, 52, 100]) {
      const pages = await listAll(owner.auth, '', limit);
      expect(pages.every((page) => page.length <= limit)).toBe(true);
      expect(pages).toHaveLength(Math.ceil(52 / limit));
      const ids = pages.flat().map((c) => c.id as string);
      expect(ids).toHaveLength(52);
      expect(new Set(ids)).toEqual(new Set(all));
      // Oldest first: the 45 of one millisecond, then the links in the order they were made.
      expect(
        pages
          .flat()
          .slice(45)
          .map((c) => c.user),
      ).toEqual(Array.from({ length: 7 }, (_, i) => `linked-${i}`));
    }
    // The filters hold across pages.
    const person1 = (await listAll(owner.auth, 'user=person-1', 4)).flat();
    expect(person1).toHaveLength(15);
    expect(new Set(person1.map((c) => c.user))).toEqual(new Set(['person-1']));
    expect((await listAll(owner.auth, 'provider=acme&user=linked-3', 4)).flat().map((c) => c.user)).toEqual(['linked-3']);
    expect((await t.http.get('/v1/connections?provider=nope').set(owner.auth).expect(200)).body).toEqual({ items: [], nextCursor: null });

    // Out of bounds, or a cursor the service did not issue: 400 naming the parameter.
    for (const limit of ['0', '101', 'ten']) {
      const res = await t.http.get(`/v1/connections?limit=${limit}`).set(owner.auth);
      expect({ limit, status: res.status, code: res.body.error?.code }).toEqual({ limit, status: 400, code: 'validation_failed' });
      expect(res.body.error.message).toMatch(/limit/);
    }
    for (const cursor of ['garbage', Buffer.from('2000-01-01T00:00:00.000Z|not-an-id').toString('base64url')]) {
      const res = await t.http.get(`/v1/connections?cursor=${cursor}`).set(owner.auth);
      expect([res.status, res.body.error?.code]).toEqual([400, 'invalid_cursor']);
      expect(res.body.error.message).toMatch(/cursor/);
    }
    // A cursor is a place in the tenant's own list: another tenant's pages never hold these connections.
    const theirs = (
      await t.http
        .get(`/v1/connections?limit=100&cursor=${first.body.nextCursor as string}`)
        .set(tenant.auth)
        .expect(200)
    ).body.items as Json[];
    expect(theirs.filter((c) => all.includes(c.id as string))).toEqual([]);
  });
});

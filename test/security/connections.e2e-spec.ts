import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { SecretBox } from '../../src/common/secrets/secret-box.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// security-cases.md, "Connections" (109-114): a real authorization server (oidc-provider, its sign-in and
// consent driven with plain HTTP requests), a local API that accepts only that server's access tokens, and a
// server outside the provider's apiHosts that must never see one.

type Json = Record<string, unknown>;

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
      env: { PUBLIC_URL: appBase, FETCH_ALLOW_HOSTS: `${issuer.slice('http://'.length)},${apiHost},${outsideHost}` },
    });
    tenant = await t.createTenant();
    p = (await t.createProject(tenant)).id;
    const key = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'assistant', role: 'agent', projectIds: [p], actAsUsers: true }).expect(201);
    expect(key.body.actAsUsers).toBe(true);
    agent = { Authorization: `Bearer ${key.body.key}` };

    const created = await t.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({ slug: 'acme', name: 'Acme', issuer, clientId: 'toolgate', clientSecret: 'toolgate-client-secret-0123456789abcdef', scopes: ['api:read'], apiHosts: [apiHost] });
    expect(created.status).toBe(201);
    const skill = await t.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'acme',
        version: '1.0.0',
        description: 'Acme as the user',
        tools: [
          { name: 'acme_whoami', description: 'Who Acme says the user is', inputSchema: { type: 'object' }, executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme' } } },
          { name: 'acme_elsewhere', description: 'An endpoint outside apiHosts', inputSchema: { type: 'object' }, executor: { type: 'http', url: `http://${outsideHost}/x`, auth: { provider: 'acme' } } },
          { name: 'acme_write', description: 'Needs api:write', inputSchema: { type: 'object' }, executor: { type: 'http', url: `http://${apiHost}/w`, auth: { provider: 'acme', scopes: ['api:write'] } } },
        ],
      });
    expect(skill.status).toBe(201);
    await t.http.post(`/v1/projects/${p}/skills`).set(tenant.auth).send({ skillId: skill.body.id }).expect(201);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([close(authServer), close(api), close(outside)]);
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
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form && { 'content-type': 'application/x-www-form-urlencoded' }) },
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
    expect({ status: done.status, text: await done.text() }).toEqual({ status: 200, text: expect.stringContaining('Your Acme account is connected') });
  };

  it('shows the provider with its discovered endpoints and redirect URI, never its secret', async () => {
    const list = await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200);
    expect(list.body.items).toEqual([
      expect.objectContaining({ slug: 'acme', issuer, discovered: true, tokenUrl: `${issuer}/token`, redirectUri: `${appBase}/v1/connections/callback`, apiHosts: [apiHost] }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain('toolgate-client-secret');
    const rows = await t.database.driver.query<{ client_secret: string }>('SELECT client_secret FROM auth_providers');
    expect(rows.every((row) => row.client_secret.startsWith('tgenc:v1:'))).toBe(true);
    // Agent keys do not manage providers.
    await t.http.get('/v1/auth-providers').set(agent).expect(403);
  });

  it('[sec-109] alice connects and her call runs with her token; bob gets authorization_required and never hers', async () => {
    const first = await call('acme_whoami', 'alice');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'authorization_required', authorization: { provider: 'acme', url: expect.stringContaining(`${issuer}/auth?`), scopes: ['api:read'] } });
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
    await t.http.post('/v1/auth-providers').set(other.auth).send({ slug: 'acme', name: 'Acme', issuer, clientId: 'toolgate', clientSecret: 'x', apiHosts: [apiHost] }).expect(201);
    const otherKey = await t.http.post('/v1/api-keys').set(other.auth).send({ role: 'agent', projectIds: [q], actAsUsers: true }).expect(201);
    const otherSkill = await t.http.post('/v1/skills').set(other.auth).send({
      name: 'acme', version: '1.0.0', description: 'x',
      tools: [{ name: 'acme_whoami', description: 'x', inputSchema: { type: 'object' }, executor: { type: 'http', url: `http://${apiHost}/whoami`, auth: { provider: 'acme' } } }],
    }).expect(201);
    await t.http.post(`/v1/projects/${q}/skills`).set(other.auth).send({ skillId: otherSkill.body.id }).expect(201);
    const cross = await t.http.post(`/v1/projects/${q}/tools/acme_whoami/invoke`).set({ Authorization: `Bearer ${otherKey.body.key}` }).set('Toolgate-User', 'alice').send({ arguments: {} });
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
    expect((await t.http.get(`/v1/projects/${p}/invocations?user=${encodeURIComponent('José')}`).set(tenant.auth).expect(200)).body.items).toHaveLength(1);
    expect(apiSaw.length).toBe(before);
    // An approver key cannot be made to act as users.
    await t.http.post('/v1/api-keys').set(tenant.auth).send({ role: 'approver', actAsUsers: true }).expect(400);
  });

  it('[sec-111] a link used twice, expired, with a changed state or iss, or from another provider is refused', async () => {
    const link = (await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'carol' }).expect(201)).body as Json;
    expect(link).toMatchObject({ id: expect.any(String), authorizationUrl: expect.stringContaining('code_challenge_method=S256'), expiresAt: expect.any(String) });
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
    const second = (await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'carol' }).expect(201)).body as Json;
    const ok = await signInAtProvider(second.authorizationUrl as string, 'carol');
    expect((await fetch(ok)).status).toBe(200);
    expect((await fetch(ok)).status).toBe(400);

    // Expired (10 minutes, played by moving the clock of the row).
    const third = (await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'dave' }).expect(201)).body as Json;
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

  it('[sec-113] tokens never appear in the connections listing, audit rows, the export, errors or logs, and are sealed at rest', async () => {
    expect(issued.size).toBeGreaterThan(0);
    const listing = JSON.stringify((await t.http.get('/v1/connections').set(tenant.auth).expect(200)).body);
    const audit = JSON.stringify((await t.http.get(`/v1/projects/${p}/invocations`).set(tenant.auth).expect(200)).body);
    const exported = (await t.http.get(`/v1/projects/${p}/invocations/export`).set(tenant.auth).expect(200)).text;
    const logs = JSON.stringify(t.logs);
    for (const token of issued) {
      for (const [where, text] of Object.entries({ listing, audit, exported, logs })) expect({ where, leaks: text.includes(token) }).toEqual({ where, leaks: false });
    }
    const rows = await t.database.driver.query<{ access_token: string | null; refresh_token: string | null }>(`SELECT access_token, refresh_token FROM connections WHERE status = 'active'`);
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
    await t.database.driver.query(`UPDATE connections SET token_expires_at = now(), refresh_token = $2 WHERE id = $1`, [alice.id, box.seal('not-a-refresh-token')]);
    const expired = await call('acme_whoami', 'alice');
    expect(expired.body).toMatchObject({ status: 'authorization_required' });
    const listed = (await t.http.get('/v1/connections?user=alice').set(tenant.auth).expect(200)).body.items as Json[];
    expect(listed.find((c) => c.id === alice.id)).toMatchObject({ status: 'expired' });
  });

  it('a revoked connection stops at once, and is revoked at the provider', async () => {
    const first = await call('acme_whoami', 'erin');
    await connect(first.body.authorization.url as string, 'erin');
    expect((await call('acme_whoami', 'erin')).body.status).toBe('ok');
    const token = apiSaw.at(-1)!.token;
    const [erin] = (await t.http.get('/v1/connections?user=erin').set(tenant.auth).expect(200)).body.items as Json[];
    await t.http.delete(`/v1/connections/${erin.id as string}`).set(tenant.auth).expect(204);
    expect(await provider.AccessToken.find(token)).toBeUndefined();
    expect((await call('acme_whoami', 'erin')).body.status).toBe('authorization_required');
    await t.http.delete(`/v1/connections/${erin.id as string}`).set(tenant.auth).expect(404);
  });
});

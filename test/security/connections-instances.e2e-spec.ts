import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

// docs/security-model.md 116: connections on two instances of one PostgreSQL. A small authorization server
// counts every refresh (refresh tokens rotate: a second refresh with the same one is refused, as real
// servers do), and an API accepts only the access token it issued last. Runs in CI's PostgreSQL pass.

type Json = Record<string, unknown>;

const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const close = async (server: http.Server | undefined) => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
};
const body = async (req: http.IncomingMessage): Promise<URLSearchParams> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
};

const serverUrl = process.env.TEST_DATABASE_URL;
(serverUrl ? describe : describe.skip)('[sec-116] connections across two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let tenant: TestTenant;
  let project: string;
  let agent: { Authorization: string };
  let authServer: http.Server;
  let api: http.Server;
  let authBase: string;
  let apiHost: string;
  // The authorization server's state: the one access and refresh token that are good now.
  let serial = 0;
  let current = { access: '', refresh: '' };
  let refuseRefresh = false;
  const refreshes: string[] = [];
  const revoked: string[] = [];
  const apiSaw: string[] = [];
  const issued = new Set<string>();

  const issue = () => {
    serial += 1;
    current = {
      access: `access-${serial}-${Math.random().toString(36).slice(2)}`,
      refresh: `refresh-${serial}-${Math.random().toString(36).slice(2)}`,
    };
    issued.add(current.access).add(current.refresh);
    return { access_token: current.access, refresh_token: current.refresh, token_type: 'bearer', expires_in: 3600, scope: 'read' };
  };

  beforeAll(async () => {
    authServer = http.createServer((req, res) => {
      void (async () => {
        const form = await body(req);
        const json = (status: number, answer: Json) =>
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        if (req.url === '/revoke') {
          revoked.push(form.get('token') ?? '');
          return res.writeHead(200).end();
        }
        if (form.get('grant_type') === 'authorization_code') return json(200, issue());
        if (form.get('grant_type') === 'refresh_token') {
          const sent = form.get('refresh_token') ?? '';
          refreshes.push(sent);
          // Slow enough that every concurrent call reaches the refresh while this one runs.
          await new Promise((resolve) => setTimeout(resolve, 400));
          if (refuseRefresh || sent !== current.refresh)
            return json(400, { error: 'invalid_grant', error_description: 'refresh token unknown or already used' });
          return json(200, issue());
        }
        json(400, { error: 'unsupported_grant_type' });
      })();
    });
    authBase = `http://127.0.0.1:${await listen(authServer)}`;
    api = http.createServer((req, res) => {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      apiSaw.push(token);
      const good = token !== '' && token === current.access;
      res
        .writeHead(good ? 200 : 401, { 'content-type': 'application/json' })
        .end(JSON.stringify(good ? { ok: true, serial } : { error: 'invalid_token' }));
    });
    apiHost = `127.0.0.1:${await listen(api)}`;

    database = await createTestDatabase();
    const env = { PUBLIC_URL: 'http://toolgate.example', FETCH_ALLOW_HOSTS: `${authBase.slice('http://'.length)},${apiHost}` };
    a = await createTestApp({ database, env });
    b = await createTestApp({ database, env });
    tenant = await a.createTenant();
    project = (await a.createProject(tenant)).id;
    const key = await a.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [project], actAsUsers: true })
      .expect(201);
    agent = { Authorization: `Bearer ${key.body.key as string}` };
    await a.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({
        slug: 'acme',
        name: 'Acme',
        authorizationUrl: `${authBase}/authorize`,
        tokenUrl: `${authBase}/token`,
        revocationUrl: `${authBase}/revoke`,
        clientId: 'toolgate',
        clientSecret: 'secret-0123456789',
        apiHosts: [apiHost],
      })
      .expect(201);
    const skill = await a.http
      .post('/v1/skills')
      .set(tenant.auth)
      .send({
        name: 'acme',
        version: '1.0.0',
        description: 'Acme as the user',
        tools: [
          {
            name: 'acme_read',
            description: 'Reads as the user',
            inputSchema: { type: 'object' },
            executor: { type: 'http', url: `http://${apiHost}/read`, auth: { provider: 'acme' } },
          },
        ],
      })
      .expect(201);
    await a.http.post(`/v1/projects/${project}/skills`).set(tenant.auth).send({ skillId: skill.body.id }).expect(201);
  }, 90_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.close();
    await Promise.all([close(authServer), close(api)]);
  }, 60_000);

  const call = (app: TestApp, user = 'alice') =>
    app.http.post(`/v1/projects/${project}/tools/acme_read/invoke`).set(agent).set('Toolgate-User', user).send({ arguments: {} });

  // The person completes the link: the provider sends the browser back with a code (this server takes any).
  async function connect(user: string): Promise<string> {
    const link = (await a.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user }).expect(201))
      .body as Json;
    const state = new URL(link.authorizationUrl as string).searchParams.get('state')!;
    await b.http.get('/v1/connections/callback').query({ code: 'a-code', state }).expect(200);
    return link.id as string;
  }

  it('twenty concurrent calls over both instances with an expired token refresh it once', async () => {
    const id = await connect('alice');
    expect((await call(a)).body).toMatchObject({ status: 'ok' });
    await a.database.driver.query(`UPDATE connections SET token_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    const mark = apiSaw.length;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? b : a)));
    expect(answers.map((r) => r.body.status)).toEqual(Array(20).fill('ok'));
    expect(refreshes).toHaveLength(1);
    // Every call used the one new token.
    expect([...new Set(apiSaw.slice(mark))]).toEqual([current.access]);
  }, 60_000);

  it('a refused refresh marks the connection expired, answers authorization_required on both instances and leaks nothing', async () => {
    const [alice] = (await a.http.get('/v1/connections?user=alice').set(tenant.auth).expect(200)).body.items as Json[];
    refuseRefresh = true;
    await a.database.driver.query(`UPDATE connections SET token_expires_at = now() - interval '1 second' WHERE id = $1`, [alice.id]);
    const mark = apiSaw.length;
    const answers = await Promise.all([call(a), call(b), call(a), call(b)]);
    expect(answers.map((r) => r.body.status)).toEqual(Array(4).fill('authorization_required'));
    expect(refreshes).toHaveLength(2);
    expect(apiSaw.length).toBe(mark);
    const listed = (await b.http.get('/v1/connections?user=alice').set(tenant.auth).expect(200)).body.items as Json[];
    expect(listed.find((c) => c.id === alice.id)).toMatchObject({ status: 'expired' });
    const seen = JSON.stringify([
      answers.map((r) => r.body),
      listed,
      a.logs,
      b.logs,
      (await a.http.get(`/v1/projects/${project}/invocations`).set(tenant.auth)).body,
    ]);
    for (const token of issued) expect({ token, leaked: seen.includes(token) }).toEqual({ token, leaked: false });
    expect(seen).not.toContain('already used');
    refuseRefresh = false;
  }, 60_000);

  it('a revoked connection stops at once on the other instance', async () => {
    const id = await connect('bob');
    expect((await call(b, 'bob')).body).toMatchObject({ status: 'ok' });
    await a.http.delete(`/v1/connections/${id}`).set(tenant.auth).expect(204);
    const mark = apiSaw.length;
    expect((await call(b, 'bob')).body).toMatchObject({ status: 'authorization_required' });
    expect(apiSaw.length).toBe(mark);
    expect(revoked).toContain(current.refresh);
  }, 60_000);

  it('deleting the provider stops its connections at once on the other instance, and revokes their tokens at the provider', async () => {
    await connect('carol');
    const carol = { ...current };
    expect((await call(b, 'carol')).body).toMatchObject({ status: 'ok' });
    const provider = ((await a.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body.items as Json[])[0];
    await a.http
      .delete(`/v1/auth-providers/${provider.id as string}`)
      .set(tenant.auth)
      .expect(204);
    expect(revoked).toEqual(expect.arrayContaining([carol.refresh, carol.access]));
    const mark = apiSaw.length;
    const after = await call(b, 'carol');
    expect(after.body.status).not.toBe('ok');
    expect(JSON.stringify(after.body)).toContain('auth_provider_not_found');
    expect(apiSaw.length).toBe(mark);
    const rows = await a.database.driver.query<{ n: number }>('SELECT count(*)::int AS n FROM connections');
    expect(rows[0].n).toBe(0);
  }, 60_000);
});

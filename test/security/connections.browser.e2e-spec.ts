import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { Browser } from 'playwright-core';
import { describeInBrowser, launchChromium } from '../support/console-browser.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// The whole of a connection as a person makes it, in headless Chromium: alice's agent is told to ask her
// to open a link; the browser opens it, signs in and consents at the authorization server (oidc-provider's
// own pages), and comes back to Toolgate's callback; the same call then runs with alice's token, which the
// API sees, while bob is still asked to connect.

const listen = async (server: http.Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};
const close = async (server: http.Server | undefined) => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
};

describeInBrowser('a connection made in a real browser', 'connections end to end in Chromium', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let project: string;
  let agent: { Authorization: string };
  let provider: Provider;
  let authServer: http.Server;
  let api: http.Server;
  let issuer: string;
  let browser: Browser;
  const apiSaw: Array<{ token: string; account: string | null }> = [];

  beforeAll(async () => {
    authServer = http.createServer();
    issuer = `http://127.0.0.1:${await listen(authServer)}`;
    api = http.createServer((req, res) => {
      void (async () => {
        const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
        const found = token ? await provider.AccessToken.find(token) : undefined;
        if (token) apiSaw.push({ token, account: found?.accountId ?? null });
        res
          .writeHead(found ? 200 : 401, { 'content-type': 'application/json' })
          .end(JSON.stringify(found ? { account: found.accountId } : { error: 'invalid_token' }));
      })();
    });
    const apiHost = `127.0.0.1:${await listen(api)}`;
    const probe = http.createServer();
    const appPort = await listen(probe);
    await new Promise((resolve) => probe.close(resolve));
    const appBase = `http://127.0.0.1:${appPort}`;
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'toolgate',
          client_secret: 'browser-client-secret-0123456789abcdef',
          redirect_uris: [`${appBase}/v1/connections/callback`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      scopes: ['api:read'],
      cookies: { keys: ['browser-cookie-key-0123456789'] },
      features: { devInteractions: { enabled: true }, revocation: { enabled: true } },
      ttl: { AccessToken: 3600, RefreshToken: 86_400, Grant: 86_400, Interaction: 600, Session: 3600, AuthorizationCode: 60 },
      pkce: { required: () => true },
      issueRefreshToken: () => true,
      findAccount: (_ctx: unknown, accountId: string) => ({ accountId, claims: () => ({ sub: accountId }) }),
    });
    authServer.on('request', provider.callback());
    t = await createTestApp({
      port: appPort,
      env: { PUBLIC_URL: appBase, FETCH_ALLOW_HOSTS: `${issuer.slice('http://'.length)},${apiHost}` },
    });
    tenant = await t.createTenant();
    project = (await t.createProject(tenant)).id;
    const key = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [project], actAsUsers: true })
      .expect(201);
    agent = { Authorization: `Bearer ${key.body.key as string}` };
    await t.http
      .post('/v1/auth-providers')
      .set(tenant.auth)
      .send({
        slug: 'acme',
        name: 'Acme',
        issuer,
        clientId: 'toolgate',
        clientSecret: 'browser-client-secret-0123456789abcdef',
        scopes: ['api:read'],
        apiHosts: [apiHost],
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
        ],
      })
      .expect(201);
    await t.http.post(`/v1/projects/${project}/skills`).set(tenant.auth).send({ skillId: skill.body.id }).expect(201);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await Promise.all([close(authServer), close(api)]);
  });

  const call = (user: string) =>
    t.http.post(`/v1/projects/${project}/tools/acme_whoami/invoke`).set(agent).set('Toolgate-User', user).send({ arguments: {} });

  it('alice opens the link, signs in and consents; her call then runs with her token, and bob is still asked to connect', async () => {
    const first = await call('alice');
    expect(first.body).toMatchObject({
      status: 'authorization_required',
      authorization: { provider: 'acme', url: expect.stringContaining(`${issuer}/auth?`) },
    });
    expect(apiSaw).toEqual([]);

    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(first.body.authorization.url as string);
    // oidc-provider's own sign-in page, then its consent page.
    await page.locator('input[name="login"]').fill('alice');
    await page.locator('input[name="password"]').fill('any password');
    await page.locator('button[type="submit"]').click();
    await page.locator('button[type="submit"]', { hasText: 'Continue' }).click();
    await page.getByText('Your Acme account is connected').waitFor();
    expect(new URL(page.url()).pathname).toBe('/v1/connections/callback');
    await context.close();

    const ran = await call('alice');
    expect(ran.body).toMatchObject({ status: 'ok', result: { account: 'alice' } });
    expect(apiSaw.map((seen) => seen.account)).toEqual(['alice']);
    const [aliceToken] = apiSaw.map((seen) => seen.token);
    expect(await provider.AccessToken.find(aliceToken)).toMatchObject({ accountId: 'alice' });

    const bob = await call('bob');
    expect(bob.body).toMatchObject({ status: 'authorization_required', authorization: { provider: 'acme' } });
    expect(apiSaw).toHaveLength(1);
  }, 60_000);
});

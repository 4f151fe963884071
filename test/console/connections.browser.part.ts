import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { SecretBox } from '../../src/common/secrets/secret-box.js';
import { describeInBrowser, launchChromium, baseUrl, signInToConsole, watchPage } from '../support/console-browser.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

type Json = Record<string, unknown>;

describeInBrowser('the console: auth providers and connections in a real browser', 'auth providers and connections in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let tenant: TestTenant;
  let discovery: http.Server;
  let issuer: string;
  const problems: string[] = [];

  beforeAll(async () => {
    // An authorization server's discovery document (nothing else of it is reached here).
    discovery = http.createServer((req, res) => {
      if (req.url !== '/.well-known/openid-configuration') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          revocation_endpoint: `${issuer}/revoke`,
          response_types_supported: ['code'],
        }),
      );
    });
    await new Promise<void>((resolve) => discovery.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(discovery.address() as AddressInfo).port}`;
    t = await createTestApp({ env: { PUBLIC_URL: 'http://toolgate.example', FETCH_ALLOW_HOSTS: issuer.slice('http://'.length) } });
    base = baseUrl(t);
    tenant = await t.createTenant();
    browser = await launchChromium();
    page = watchPage(await browser.newPage({ viewport: { width: 1280, height: 900 } }), problems);
    page.on('dialog', (dialog) => void dialog.accept());
    await signInToConsole(page, base, tenant.key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    discovery?.closeAllConnections();
    await new Promise((resolve) => discovery?.close(resolve));
  });

  afterEach(() => expect(problems).toEqual([]));

  const providers = async () => (await t.http.get('/v1/auth-providers').set(tenant.auth).expect(200)).body.items as Json[];

  it('adds, edits and deletes an auth provider; its secret is written, never shown', async () => {
    await page.getByRole('link', { name: 'Auth providers' }).click();
    await page.getByRole('heading', { name: 'Auth providers', level: 1 }).waitFor();
    await page.getByText('No auth providers yet.').waitFor();
    await page.getByLabel('Slug', { exact: true }).fill('acme');
    await page.getByLabel('Name', { exact: true }).fill('Acme');
    await page.getByLabel('Issuer', { exact: true }).fill(issuer);
    await page.getByLabel('Client id', { exact: true }).fill('toolgate');
    await page.getByLabel('Client secret', { exact: true }).fill('console-secret-0123456789');
    await page.getByLabel('Scopes', { exact: true }).fill('read, write');
    await page.getByLabel('API hosts', { exact: true }).fill('api.acme.example');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('cell', { name: 'http://toolgate.example/v1/connections/callback' }).waitFor();
    expect(await providers()).toEqual([
      expect.objectContaining({
        slug: 'acme',
        name: 'Acme',
        issuer,
        scopes: ['read', 'write'],
        apiHosts: ['api.acme.example'],
        verifyUrl: null,
      }),
    ]);
    expect(await page.content()).not.toContain('console-secret-0123456789');
    expect(await page.getByLabel('Client secret', { exact: true }).inputValue()).toBe('');

    await page.getByRole('button', { name: 'Edit Acme' }).click();
    expect(await page.getByLabel('Client secret', { exact: true }).inputValue()).toBe('');
    await page.getByLabel('Name', { exact: true }).fill('Acme Inc');
    await page.getByLabel('Verify URL', { exact: true }).fill('https://app.example.com/verify');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByRole('cell', { name: 'Acme Inc', exact: true }).waitFor();
    expect(await providers()).toEqual([
      expect.objectContaining({ slug: 'acme', name: 'Acme Inc', verifyUrl: 'https://app.example.com/verify' }),
    ]);
    // The secret left empty was left as it was (sealed at rest).
    const sealed = await t.database.driver.query<{ client_secret: string }>('SELECT client_secret FROM auth_providers');
    expect(sealed[0].client_secret).toMatch(/^tgenc:v1:/);
    expect(t.app.get(SecretBox).open(sealed[0].client_secret)).toBe('console-secret-0123456789');
  });

  it('lists connections per user, makes a link, and revokes a connection', async () => {
    await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'alice' }).expect(201);
    await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'carol' }).expect(201);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'Connections', level: 1 }).waitFor();
    await page.getByLabel('User', { exact: true }).fill('alice');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('button', { name: "Revoke alice's connection to acme" }).waitFor();
    // Alice's row was listed before the filter too: the filtered list has come once carol's row is gone.
    await page.getByRole('button', { name: "Revoke carol's connection to acme" }).waitFor({ state: 'detached' });
    expect(await page.getByRole('button', { name: "Revoke carol's connection to acme" }).count()).toBe(0);

    await page.getByRole('button', { name: "Revoke alice's connection to acme" }).click();
    await page.getByText('revoked').waitFor();
    const alice = (await t.http.get('/v1/connections?user=alice').set(tenant.auth).expect(200)).body.items as Json[];
    expect(alice.map((c) => c.status)).toEqual(['revoked']);

    // The tenant's own connection: a link made here, by an admin.
    await page.getByRole('button', { name: 'Create link' }).click();
    const link = page.getByRole('link', { name: 'authorization link' });
    await link.waitFor();
    expect(await link.getAttribute('href')).toContain(`${issuer}/authorize?`);
    const all = (await t.http.get('/v1/connections').set(tenant.auth).expect(200)).body.items as Json[];
    expect(all.filter((c) => c.user === null).map((c) => c.status)).toEqual(['pending']);
  });

  it('lists a page of connections at a time, and loads more on demand', async () => {
    // Each link asked for the same person is a row of its own.
    for (let i = 0; i < 55; i++)
      await t.http.post('/v1/connections/authorize').set(tenant.auth).send({ provider: 'acme', user: 'bob' }).expect(201);
    await page.getByLabel('User', { exact: true }).fill('bob');
    await page.getByRole('button', { name: 'Show' }).click();
    const revokeBob = page.getByRole('button', { name: "Revoke bob's connection to acme" });
    await page.getByRole('button', { name: 'Load more' }).waitFor();
    expect(await revokeBob.count()).toBe(50);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
    expect(await revokeBob.count()).toBe(55);
  });

  it('deletes the provider, and its connections with it', async () => {
    await page.getByRole('link', { name: 'Auth providers' }).click();
    await page.getByRole('button', { name: 'Delete Acme Inc' }).click();
    await page.getByText('No auth providers yet.').waitFor();
    expect(await providers()).toEqual([]);
    expect((await t.http.get('/v1/connections').set(tenant.auth).expect(200)).body.items).toEqual([]);
  });
});

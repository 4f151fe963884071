import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { describeInBrowser, launchChromium, baseUrl, watchPage } from '../../support/console-browser.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

const MCP_ACCEPT = 'application/json, text/event-stream';
const FOREIGN = 'https://elsewhere.example';

// A request sent as written: the path goes on the request line with a literal '#' (clients would drop it).
async function rawRequest(port: number, method: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

// A page of another origin: the MCP client running in a browser. Serves one empty page.
async function startClientPage(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>client</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  return {
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('cross-origin requests of browser-based MCP clients (CORS)', () => {
  let t: TestApp;
  let page: { origin: string; close(): Promise<void> };
  let tenant: TestTenant;
  let projectId: string;
  let agentKey: string;

  beforeAll(async () => {
    page = await startClientPage();
    t = await createTestApp({ env: { MCP_ALLOWED_ORIGINS: page.origin } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    agentKey = (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'browser agent', role: 'agent', projectIds: [projectId] })
        .expect(201)
    ).body.key as string;
  });
  afterAll(async () => {
    await t?.close();
    await page?.close();
  });

  const preflight = (path: string, origin: string, method: string, headers: string) =>
    t.http.options(path).set('Origin', origin).set('Access-Control-Request-Method', method).set('Access-Control-Request-Headers', headers);

  it("answers OAuth discovery and the token, registration and revocation endpoints' preflights from any origin, without credentials", async () => {
    for (const [path, method, headers] of [
      ['/oauth/token', 'POST', 'content-type'],
      ['/oauth/register', 'POST', 'content-type'],
      ['/oauth/revoke', 'POST', 'content-type'],
      [`/.well-known/oauth-protected-resource/v1/projects/${projectId}/mcp`, 'GET', 'mcp-protocol-version'],
      ['/.well-known/oauth-authorization-server', 'GET', 'mcp-protocol-version'],
    ] as const) {
      const res = await preflight(path, FOREIGN, method, headers);
      expect({
        path,
        status: res.status,
        origin: res.headers['access-control-allow-origin'],
        credentials: res.headers['access-control-allow-credentials'],
      }).toEqual({
        path,
        status: 204,
        origin: '*',
        credentials: undefined,
      });
      expect(res.headers['access-control-allow-headers']?.toLowerCase()).toContain(headers);
    }
    const document = await t.http.get('/.well-known/oauth-authorization-server').set('Origin', FOREIGN).expect(200);
    expect(document.headers['access-control-allow-origin']).toBe('*');
  });

  it('takes the MCP endpoint from the listed origins only: another gets no CORS answer and a 403', async () => {
    const path = `/v1/projects/${projectId}/mcp`;
    const listed = await preflight(path, page.origin, 'POST', 'authorization,content-type,mcp-protocol-version');
    expect([listed.status, listed.headers['access-control-allow-origin']]).toEqual([204, page.origin]);
    expect(listed.headers['access-control-allow-headers']?.toLowerCase()).toEqual(expect.stringContaining('authorization'));
    expect(listed.headers.vary).toMatch(/Origin/i);

    const unlisted = await preflight(path, FOREIGN, 'POST', 'authorization,content-type');
    expect(unlisted.headers['access-control-allow-origin']).toBeUndefined();
    const call = await t.http
      .post(path)
      .set('Origin', FOREIGN)
      .set('Authorization', `Bearer ${agentKey}`)
      .set('Accept', MCP_ACCEPT)
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect([call.status, call.body.error?.code, call.headers['access-control-allow-origin']]).toEqual([
      403,
      'origin_not_allowed',
      undefined,
    ]);
  });

  it('writes the same CORS headers on either adapter: preflights answered 204 before any guard, answers with what a page may read', async () => {
    const cors = (res: { status: number; headers: Record<string, string | undefined> }): Record<string, unknown> => ({
      status: res.status,
      ...Object.fromEntries(
        Object.entries(res.headers).filter(([name]) => name.startsWith('access-control-') || name === 'vary' || name === 'content-length'),
      ),
    });
    const path = `/v1/projects/${projectId}/mcp`;
    expect(cors(await preflight(path, page.origin, 'POST', 'authorization'))).toEqual({
      status: 204,
      'access-control-allow-origin': page.origin,
      vary: 'Origin',
      'access-control-allow-methods': 'GET,POST,DELETE',
      'access-control-allow-headers':
        'Authorization,Content-Type,Accept,Mcp-Protocol-Version,Mcp-Session-Id,Mcp-Method,Mcp-Name,Last-Event-ID,Idempotency-Key,X-Request-Id',
      'access-control-max-age': '600',
      'access-control-expose-headers': 'WWW-Authenticate,Mcp-Session-Id,Mcp-Protocol-Version,X-Request-Id,Retry-After',
      'content-length': '0',
    });
    const call = await t.http
      .post(path)
      .set('Origin', page.origin)
      .set('Authorization', `Bearer ${agentKey}`)
      .set('Accept', MCP_ACCEPT)
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(cors(call)).toMatchObject({
      status: 200,
      'access-control-allow-origin': page.origin,
      vary: 'Origin',
      'access-control-expose-headers': 'WWW-Authenticate,Mcp-Session-Id,Mcp-Protocol-Version,X-Request-Id,Retry-After',
    });
    expect(cors(call)['access-control-allow-methods']).toBeUndefined();
    expect(cors(await preflight('/oauth/token?x=1', FOREIGN, 'POST', 'content-type'))).toEqual({
      status: 204,
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET,POST',
      'access-control-allow-headers': 'Content-Type,Accept,Mcp-Protocol-Version',
      'access-control-max-age': '600',
      'content-length': '0',
    });
    // Another route: no CORS header at all (not even Vary), and a preflight finds no route.
    const rest = await preflight(`/v1/projects/${projectId}/tools/read_file/invoke`, page.origin, 'POST', 'authorization');
    expect([rest.status, rest.body.error?.code]).toEqual([404, 'route_not_found']);
    expect(Object.keys(cors(rest)).filter((name) => name !== 'status' && name !== 'content-length')).toEqual([]);
    const listing = await t.http.get('/v1/projects').set('Origin', page.origin).set(tenant.auth).expect(200);
    expect(Object.keys(cors(listing)).filter((name) => name !== 'status' && name !== 'content-length')).toEqual([]);
    // A literal '#' in the request line ends the path for both routers: this is the project's REST route.
    const hashed = await rawRequest(t.port, 'GET', `/v1/projects/${projectId}#/mcp`, {
      origin: page.origin,
      authorization: tenant.auth.Authorization,
    });
    expect([hashed.status, JSON.parse(hashed.body).id]).toEqual([200, projectId]);
    expect(Object.keys(hashed.headers).filter((name) => name.startsWith('access-control-') || name === 'vary')).toEqual([]);
    const hashedPreflight = await rawRequest(t.port, 'OPTIONS', `/v1/projects/${projectId}#/mcp`, {
      origin: page.origin,
      'access-control-request-method': 'GET',
    });
    expect([hashedPreflight.status, hashedPreflight.headers['access-control-allow-origin']]).toEqual([404, undefined]);
  });

  it('opens no REST route, the console or the authorization endpoint to other origins, the listed ones included', async () => {
    for (const path of [
      '/v1/projects',
      `/v1/projects/${projectId}/tools/read_file/invoke`,
      '/v1/api-keys',
      '/console/',
      '/oauth/authorize',
    ]) {
      const res = await preflight(path, page.origin, 'POST', 'authorization,content-type');
      expect({ path, origin: res.headers['access-control-allow-origin'] }).toEqual({ path, origin: undefined });
    }
    const listing = await t.http.get('/v1/projects').set('Origin', page.origin).set(tenant.auth).expect(200);
    expect(listing.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describeInBrowser('a browser-based MCP client on another origin', 'browser MCP client', () => {
  let t: TestApp;
  let clientPage: { origin: string; close(): Promise<void> };
  let browser: Browser;
  let tab: Page;
  const problems: string[] = [];
  let base: string;
  let projectId: string;
  let agentKey: string;
  let adminKey: string;

  beforeAll(async () => {
    clientPage = await startClientPage();
    t = await createTestApp({ env: { MCP_ALLOWED_ORIGINS: clientPage.origin } });
    base = baseUrl(t);
    const tenant = await t.createTenant();
    adminKey = tenant.auth.Authorization.replace(/^Bearer /, '');
    projectId = (await t.createProject(tenant)).id;
    agentKey = (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'browser agent', role: 'agent', projectIds: [projectId] })
        .expect(201)
    ).body.key as string;
    browser = await launchChromium();
    tab = watchPage(await browser.newPage(), problems);
    await tab.goto(clientPage.origin);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await clientPage?.close();
  });

  // Runs fetch in the page, as a client's script would; a request the browser blocks answers `blocked`.
  const fetchInPage = (url: string, init: { method?: string; headers?: Record<string, string>; body?: string }) =>
    tab.evaluate(
      async ({ url, init }) => {
        try {
          const res = await fetch(url, init);
          return { status: res.status, body: await res.text(), challenge: res.headers.get('www-authenticate') };
        } catch (error) {
          return { blocked: String(error) };
        }
      },
      { url, init },
    );

  it('discovers how to sign in, reads the 401 challenge and calls the MCP endpoint with its key', async () => {
    const mcpUrl = `${base}/v1/projects/${projectId}/mcp`;
    const anonymous = await fetchInPage(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: MCP_ACCEPT, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous).toMatchObject({ status: 401, challenge: expect.stringContaining('resource_metadata=') });
    const metadataUrl = /resource_metadata="([^"]+)"/.exec((anonymous as { challenge: string }).challenge)![1];
    const metadata = await fetchInPage(metadataUrl, { headers: { 'mcp-protocol-version': '2025-11-25' } });
    expect(JSON.parse((metadata as { body: string }).body)).toMatchObject({ resource: mcpUrl });
    const register = await fetchInPage(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Page client',
        redirect_uris: [`${clientPage.origin.replace('localhost', '127.0.0.1')}/callback`],
      }),
    });
    expect(register).toMatchObject({ status: 201 });

    const listed = await fetchInPage(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentKey}`,
        'content-type': 'application/json',
        accept: MCP_ACCEPT,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(listed).toMatchObject({ status: 200 });
    expect(JSON.parse((listed as { body: string }).body).result.tools.map((tool: { name: string }) => tool.name)).toContain('read_file');
  });

  it('cannot reach the REST API from the page, even with a key', async () => {
    const blocked = await fetchInPage(`${base}/v1/projects`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(blocked).toMatchObject({ blocked: expect.stringMatching(/Failed to fetch/) });
    // What the browser blocked is only its own report; drop it from the page's problems.
    problems.splice(0, problems.length, ...problems.filter((problem) => !/CORS|Failed to load resource/.test(problem)));
    expect(problems).toEqual([]);
  });
});

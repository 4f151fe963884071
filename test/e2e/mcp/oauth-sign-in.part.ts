import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser } from 'playwright-core';
import { describeInBrowser, launchChromium, baseUrl } from '../../support/console-browser.js';
import {
  type CallbackServer,
  type DocumentServer,
  LOCALHOST_CERT_FILE,
  MemoryOAuthProvider,
  serveJson,
  startCallbackServer,
  startDocumentServer,
} from '../../support/oauth-clients.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

// The official SDK client's own auth() against the service: discovery from the MCP URL, registration (RFC
// 7591, or a client ID metadata document on a local HTTPS server), consent by a person on the console page
// in a real browser, the code exchanged, and a tool called with the token.
describeInBrowser('MCP sign-in with OAuth, as an MCP client does it', 'MCP sign-in in a browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let documents: DocumentServer;
  let callback: CallbackServer;
  let tenant: TestTenant;
  let projectId: string;
  let mcpUrl: URL;

  beforeAll(async () => {
    documents = await startDocumentServer();
    callback = await startCallbackServer();
    t = await createTestApp({
      env: { OAUTH_CLIENT_METADATA_ALLOW_HOSTS: documents.hostPort, OAUTH_CLIENT_METADATA_CA_FILE: LOCALHOST_CERT_FILE },
    });
    base = baseUrl(t);
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await t.http
      .post(`/v1/projects/${projectId}/tools/write_file/invoke`)
      .set(tenant.auth)
      .send({ arguments: { path: 'notes.txt', content: 'signed in\n' } })
      .expect(200);
    mcpUrl = new URL(`${base}/v1/projects/${projectId}/mcp`);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await documents?.close();
    await callback?.close();
  });

  // A person signs in to the console on the consent page the authorization URL leads to, leaves the client
  // only read_file and list_files, and approves; the browser goes back to the client's callback.
  const consentInBrowser = async (authorizationUrl: URL, expectedName: string, expectedOrigin: string | null): Promise<URLSearchParams> => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    try {
      // The project's tool list is held back until the test has seen that Approve waits for it: approving
      // before the list is shown would grant every tool unseen.
      let releaseTools!: () => void;
      const toolsHeld = new Promise<void>((resolve) => (releaseTools = resolve));
      await page.route(/\/v1\/projects\/[^/]+\/tools$/, async (route) => {
        await toolsHeld;
        await route.continue();
      });
      await page.goto(authorizationUrl.href);
      expect(new URL(page.url()).pathname).toBe('/console/oauth/consent');
      // An admin's consent: the client calls tools itself (an approver's would have each call wait for approval).
      await page.getByLabel('API key', { exact: true }).fill(tenant.auth.Authorization.slice('Bearer '.length));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByTestId('client-name').textContent()).resolves.toBe(expectedName);
      if (expectedOrigin) await expect(page.getByTestId('client-origin').textContent()).resolves.toBe(expectedOrigin);
      else await page.getByText('Registered itself').waitFor();
      await expect(page.getByTestId('redirect-uri').textContent()).resolves.toBe(callback.url);
      await page.getByText("Loading the project's tools…").waitFor();
      expect(await page.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
      releaseTools();
      // The tool list arrives after the client's details: all() does not wait for it, so wait for a box first.
      await page.locator('input[type="checkbox"][value="read_file"]').waitFor();
      expect(await page.getByRole('button', { name: 'Approve' }).isEnabled()).toBe(true);
      for (const box of await page.getByRole('checkbox').all()) {
        const name = await box.getAttribute('value');
        if (name !== 'read_file' && name !== 'list_files') await box.uncheck();
      }
      const checked: string[] = [];
      for (const box of await page.getByRole('checkbox').all())
        if (await box.isChecked()) checked.push((await box.getAttribute('value')) ?? '');
      expect(checked.sort()).toEqual(['list_files', 'read_file']);
      const arrived = callback.next();
      await page.getByRole('button', { name: 'Approve' }).click();
      return await arrived;
    } finally {
      await context.close();
    }
  };

  const signInAndCall = async (provider: MemoryOAuthProvider, expectedName: string, expectedOrigin: string | null) => {
    await expect(auth(provider, { serverUrl: mcpUrl })).resolves.toBe('REDIRECT');
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin).toBe(base);
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl.href);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

    const query = await consentInBrowser(authorizationUrl, expectedName, expectedOrigin);
    expect(query.get('state')).toBe('state-123');
    expect(query.get('iss')).toBe(base);
    await expect(auth(provider, { serverUrl: mcpUrl, authorizationCode: query.get('code')! })).resolves.toBe('AUTHORIZED');
    const tokens = provider.tokens()!;
    expect(tokens.access_token).toMatch(/^tg_/);
    expect(tokens.refresh_token).toMatch(/^tgr_/);

    const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(['list_files', 'read_file']);
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.structuredContent)).toContain('signed in');
    } finally {
      await client.close();
    }
    return tokens;
  };

  it('answers an MCP request without a token with 401 and where the resource metadata is', async () => {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/v1/projects/${projectId}/mcp"`,
    );
    const metadata = (await (await fetch(`${base}/.well-known/oauth-protected-resource/v1/projects/${projectId}/mcp`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata).toMatchObject({ resource: mcpUrl.href, authorization_servers: [base], scopes_supported: ['mcp'] });
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const server = (await (await fetch(`${base}${path}`)).json()) as Record<string, unknown>;
      expect(server).toMatchObject({
        issuer: base,
        code_challenge_methods_supported: ['S256'],
        client_id_metadata_document_supported: true,
      });
    }
  });

  it('registers by dynamic client registration, is consented in the console, and calls a tool with its token', async () => {
    const provider = new MemoryOAuthProvider(callback.url);
    const tokens = await signInAndCall(provider, 'Test MCP client', null);
    expect(provider.clientInformation()?.client_id).toMatch(/^tgc_/);

    // The token is listed beside the keys, named for its client and bound to the project and the tools chosen.
    const keys = await t.http.get('/v1/api-keys').set(tenant.auth).expect(200);
    const listed = (keys.body.items as Array<Record<string, unknown>>).filter((k) => k.oauthResource === mcpUrl.href);
    expect(listed).toEqual([
      expect.objectContaining({
        name: 'Test MCP client (OAuth)',
        role: 'agent',
        projectIds: [projectId],
        tools: ['read_file', 'list_files'],
      }),
    ]);
    // Its call is audited with the client's name.
    const audited = await t.http
      .get(`/v1/projects/${projectId}/invocations`)
      .query({ callerKeyId: listed[0].id })
      .set(tenant.auth)
      .expect(200);
    expect(audited.body.items).toEqual([
      expect.objectContaining({
        tool: 'read_file',
        channel: 'mcp',
        status: 'ok',
        caller: { keyId: listed[0].id, name: 'Test MCP client (OAuth)' },
      }),
    ]);

    // The refresh token rotates: the SDK's auth() refreshes, and the old access token stops working.
    const again = await auth(provider, { serverUrl: mcpUrl });
    expect(again).toBe('AUTHORIZED');
    expect(provider.tokens()!.refresh_token).not.toBe(tokens.refresh_token);
    const old = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{}',
    });
    expect(old.status).toBe(401);
  });

  it('identifies itself with a client ID metadata document on an HTTPS server, and is shown with its verified origin', async () => {
    const documentUrl = `${documents.origin}/oauth/client.json`;
    documents.routes.set(
      '/oauth/client.json',
      serveJson({
        client_id: documentUrl,
        client_name: 'Document Client',
        redirect_uris: [callback.url],
        token_endpoint_auth_method: 'none',
      }),
    );
    const provider = new MemoryOAuthProvider(callback.url, documentUrl);
    await signInAndCall(provider, 'Document Client', documents.origin);
    expect(provider.clientInformation()?.client_id).toBe(documentUrl);
  });
});

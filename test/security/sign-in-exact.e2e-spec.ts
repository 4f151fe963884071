import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import type { Response } from 'supertest';
import { type DocumentServer, LOCALHOST_CERT_FILE, serveJson, startDocumentServer } from '../support/oauth-clients.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md 122-124: the sign-in paths taken exactly, on the real app and database.
type Auth = { Authorization: string };
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };
const listTools = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describe("an external issuer's claims are taken exactly (OAUTH_ISSUER)", () => {
  let t: TestApp;
  let byName: TestApp;
  let jwks: http.Server;
  let issuer: string;
  let tenant: TestTenant;
  let p: string;
  let sign: (claims: JWTPayload, audience: string) => Promise<string>;
  const tenantName = `acme-${process.pid}`;
  const resourceOf = (app: TestApp, projectId: string) => `http://127.0.0.1:${app.port}/v1/projects/${projectId}/mcp`;
  const mcp = (app: TestApp, projectId: string, token: string, body: object = listTools) =>
    app.http
      .post(`/v1/projects/${projectId}/mcp`)
      .set({ Authorization: `Bearer ${token}` })
      .set(MCP_ACCEPT)
      .send(body);
  const toolNames = (res: Response) => (res.body.result.tools as Array<{ name: string }>).map((tool) => tool.name);

  beforeAll(async () => {
    // A real issuer's keys, served as a JWKS on a local port; its tokens are signed here with whatever claims a test needs.
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}`;
    sign = (claims, audience) =>
      new SignJWT({ client_id: 'agent-service', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setExpirationTime('5m')
        .sign(privateKey);
    const env = { OAUTH_ISSUER: issuer, OAUTH_JWKS_URL: `${issuer}/jwks` };
    t = await createTestApp({ env });
    // The same database under the other setting: a tenant claim that holds names.
    byName = await createTestApp({ env: { ...env, OAUTH_TENANT_CLAIM_MATCHES: 'name' }, database: t.database });
    tenant = await t.createTenant(tenantName);
    p = (await t.createProject(tenant)).id;
  });
  afterAll(async () => {
    await byName?.close();
    await t?.close();
    jwks?.closeAllConnections();
    await new Promise((resolve) => jwks?.close(resolve));
  });

  it('[sec-122] a toolgate_tools claim that is not a list of tool names refuses the token; [] binds it to no tools', async () => {
    const claims = (tools: unknown) => sign({ toolgate_tenant: tenant.id, toolgate_tools: tools }, resourceOf(t, p));
    for (const [what, tools] of [
      ['a string', 'read_file'],
      ['a space-separated string', 'read_file write_file'],
      ['a list holding null', ['read_file', null]],
      ['a list holding a number', ['read_file', 7]],
      ['a list holding an object', [{ name: 'write_file' }]],
      ['null', null],
      ['an object', { read_file: true }],
      ['a list holding an empty name', ['']],
    ] as const) {
      const res = await mcp(t, p, await claims(tools));
      expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 401, code: 'unauthorized' });
      expect({ what, challenge: res.headers['www-authenticate'] }).toEqual({
        what,
        challenge: expect.stringContaining('resource_metadata='),
      });
    }

    // [] is a binding to no tools: an empty listing, and a call refused before anything runs.
    const none = await claims([]);
    expect(toolNames(await mcp(t, p, none).expect(200))).toEqual([]);
    const write = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'none.txt', content: 'x' } },
    };
    const refused = await mcp(t, p, none, write).expect(200);
    expect(refused.body.result?.structuredContent).toBeUndefined();
    expect(JSON.stringify(refused.body)).toMatch(/No tool named 'write_file'/);
    expect(existsSync(path.join(t.workspaceOf(p), 'none.txt'))).toBe(false);

    // A list of names binds to them; no claim at all is the operator's default, every tool.
    expect(toolNames(await mcp(t, p, await claims(['read_file'])).expect(200))).toEqual(['read_file']);
    const all = toolNames(await mcp(t, p, await sign({ toolgate_tenant: tenant.id }, resourceOf(t, p))).expect(200));
    expect(all).toEqual(expect.arrayContaining(['read_file', 'write_file', 'list_files']));
  });

  it('[sec-122] the tenant claim matches the id only, or the name only, as the operator chose', async () => {
    // The default (OAUTH_TENANT_CLAIM_MATCHES=id): the tenant's id, never its name.
    await mcp(t, p, await sign({ toolgate_tenant: tenant.id }, resourceOf(t, p))).expect(200);
    expect((await mcp(t, p, await sign({ toolgate_tenant: tenantName }, resourceOf(t, p)))).status).toBe(401);
    // Set to name: the name, never the id.
    await mcp(byName, p, await sign({ toolgate_tenant: tenantName }, resourceOf(byName, p))).expect(200);
    expect((await mcp(byName, p, await sign({ toolgate_tenant: tenant.id }, resourceOf(byName, p)))).status).toBe(401);
  });

  it('[sec-122] a tenant cannot be named like a tenant id, in any spelling', async () => {
    const compact = tenant.id.replaceAll('-', '');
    for (const name of [tenant.id, tenant.id.toUpperCase(), compact, '00000000-0000-4000-8000-000000000000']) {
      const res = await t.http.post('/v1/admin/tenants').set(t.admin).send({ name });
      expect({ name, status: res.status, code: res.body.error?.code }).toEqual({ name, status: 400, code: 'tenant_name_like_id' });
    }
    const listed = (await t.http.get('/v1/admin/tenants').set(t.admin).expect(200)).body.items as Array<{ name: string }>;
    expect(listed.filter((row) => row.name.toLowerCase().replaceAll('-', '') === compact)).toEqual([]);
    // A name merely holding hex and dashes is still a name.
    await t.http
      .post('/v1/admin/tenants')
      .set(t.admin)
      .send({ name: `team-${compact.slice(0, 8)}` })
      .expect(201);
  });
});

describe('refresh, parked calls and redirect schemes are taken exactly (Toolgate as the issuer)', () => {
  const REDIRECT = 'http://127.0.0.1:9/callback';
  let t: TestApp;
  let documents: DocumentServer;
  let tenant: TestTenant;
  let p: string;
  let gated: string;
  let clientId: string;
  let resourceOf: (projectId: string) => string;

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const query = (projectId: string, challenge: string, client = clientId, redirectUri = REDIRECT) => ({
    response_type: 'code',
    client_id: client,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: resourceOf(projectId),
    state: 'xyz',
  });
  const authorize = (q: Record<string, string>) => t.http.get('/oauth/authorize').query(q);
  const token = (body: Record<string, string>) => t.http.post('/oauth/token').type('form').send(body);
  const bearer = (access: string): Auth => ({ Authorization: `Bearer ${access}` });
  const mcp = (projectId: string, auth: Auth, body: object = listTools) =>
    t.http.post(`/v1/projects/${projectId}/mcp`).set(auth).set(MCP_ACCEPT).send(body);
  const codeFor = async (projectId: string, challenge: string): Promise<string> => {
    const res = await authorize(query(projectId, challenge));
    expect(res.status).toBe(302);
    const requestId = new URL(res.headers.location).searchParams.get('request')!;
    const decided = await t.http.post(`/v1/oauth/requests/${requestId}/decision`).set(tenant.auth).send({ approve: true }).expect(200);
    return new URL(decided.body.redirectTo as string).searchParams.get('code')!;
  };
  // An admin consents: its client calls tools as the project allows.
  const signIn = async (projectId: string) => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(projectId, challenge);
    const tokens = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    }).expect(200);
    return { access: tokens.body.access_token as string, refresh: tokens.body.refresh_token as string };
  };
  const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
    token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...extra });

  beforeAll(async () => {
    documents = await startDocumentServer();
    const port = documents.hostPort.split(':')[1];
    t = await createTestApp({
      env: {
        // The document server by address and by name: a client_id at localhost has a host to reverse.
        OAUTH_CLIENT_METADATA_ALLOW_HOSTS: `${documents.hostPort},localhost:${port}`,
        OAUTH_CLIENT_METADATA_CA_FILE: LOCALHOST_CERT_FILE,
        OAUTH_CLIENT_METADATA_TIMEOUT_MS: '2000',
      },
    });
    tenant = await t.createTenant();
    p = (await t.createProject(tenant)).id;
    gated = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
    const metadata = await t.http.get(`/.well-known/oauth-protected-resource/v1/projects/${p}/mcp`).expect(200);
    const base = (metadata.body.resource as string).replace(/\/v1\/projects\/.*$/, '');
    resourceOf = (projectId) => `${base}/v1/projects/${projectId}/mcp`;
    clientId = (
      await t.http
        .post('/oauth/register')
        .send({ client_name: 'Exact', redirect_uris: [REDIRECT] })
        .expect(201)
    ).body.client_id as string;
  });
  afterAll(async () => {
    await t?.close();
    await documents?.close();
  });

  it('[sec-123] a refresh with a wrong resource or client is refused, and the refresh token still works', async () => {
    const { access, refresh: first } = await signIn(p);
    for (const [what, extra, error] of [
      ['another project', { resource: resourceOf(gated) }, 'invalid_target'],
      ['another service', { resource: 'https://evil.example/v1/projects/x/mcp' }, 'invalid_target'],
      ['another client', { client_id: 'tgc_someone_else' }, 'invalid_grant'],
    ] as const) {
      const res = await refresh(first, extra);
      expect({ what, status: res.status, error: res.body.error }).toEqual({ what, status: 400, error });
      // Nothing was revoked: the consent's access token still works.
      expect({ what, status: (await mcp(p, bearer(access))).status }).toEqual({ what, status: 200 });
    }
    // The same refresh token, sent as it should be, rotates as usual.
    const rotated = await refresh(first, { resource: resourceOf(p) }).expect(200);
    await mcp(p, bearer(rotated.body.access_token as string)).expect(200);
    await refresh(rotated.body.refresh_token as string).expect(200);
  });

  it('[sec-123] a code exchanged with a wrong code_verifier is spent: single use, as documented', async () => {
    const { verifier, challenge } = pkce();
    const code = await codeFor(p, challenge);
    const exchange = { grant_type: 'authorization_code', code, client_id: clientId, redirect_uri: REDIRECT };
    const wrong = await token({ ...exchange, code_verifier: pkce().verifier });
    expect([wrong.status, wrong.body.error, wrong.body.error_description]).toEqual([
      400,
      'invalid_grant',
      'code_verifier does not match the code_challenge (PKCE)',
    ]);
    const again = await token({ ...exchange, code_verifier: verifier });
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect(again.body.access_token).toBeUndefined();
  });

  it('[sec-123] a call parked by an OAuth client is decidable after the client refreshes, and denied once its consent ended', async () => {
    const parkWrite = async (access: string, file: string): Promise<string> => {
      const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write_file', arguments: { path: file, content: 'x' } } };
      expect(JSON.stringify((await mcp(gated, bearer(access), call).expect(200)).body)).toMatch(/approv/i);
      const pending = (
        await t.http.get(`/v1/projects/${gated}/invocations`).query({ status: 'pending_approval' }).set(tenant.auth).expect(200)
      ).body.items as Array<{ id: string }>;
      expect(pending).toHaveLength(1);
      return pending[0].id;
    };
    const approve = (id: string) => t.http.post(`/v1/projects/${gated}/invocations/${id}/approve`).set(tenant.deciderAuth).send({});

    const { access, refresh: first } = await signIn(gated);
    const parked = await parkWrite(access, 'after-refresh.txt');
    // The client refreshes (its access token is retired), twice: the consent behind the call is alive.
    const second = await refresh(first).expect(200);
    const third = await refresh(second.body.refresh_token as string).expect(200);
    expect((await mcp(gated, bearer(access))).status).toBe(401);
    const approved = await approve(parked);
    expect([approved.status, approved.body.decision, approved.body.outcome?.status]).toEqual([200, 'approved', 'ok']);
    expect(existsSync(path.join(t.workspaceOf(gated), 'after-refresh.txt'))).toBe(true);

    // The consent revoked by the client (RFC 7009): what it parked is denied, never run.
    const later = await parkWrite(third.body.access_token as string, 'after-revoke.txt');
    await t.http
      .post('/oauth/revoke')
      .type('form')
      .send({ token: third.body.refresh_token as string, client_id: clientId })
      .expect(200);
    const late = await approve(later);
    expect([late.status, late.body.error?.code]).toEqual([409, 'approval_requester_ended']);
    expect((await t.http.get(`/v1/projects/${gated}/invocations/${later}`).set(tenant.auth).expect(200)).body.status).toBe('denied');
    expect(existsSync(path.join(t.workspaceOf(gated), 'after-revoke.txt'))).toBe(false);
  });

  it("[sec-124] a registered client's private-use scheme must be one the operator lists; system handlers are refused", async () => {
    for (const uri of [
      'x-apple.systempreferences:com.apple.preference.security',
      'ms-settings.x:/',
      'ms-settings:privacy',
      'x-apple-helpbasic:/x',
      'search-ms:query=x',
      // A dotted name is anyone's to claim without a document proving the domain.
      'com.example.app:/oauth/callback',
    ]) {
      const res = await t.http.post('/oauth/register').send({ redirect_uris: [uri] });
      expect({ uri, status: res.status, error: res.body.error }).toEqual({ uri, status: 400, error: 'invalid_redirect_uri' });
    }
    // https, loopback http and the operator's list (OAUTH_APP_SCHEMES: cursor, vscode… by default) are taken.
    for (const uri of ['https://app.example.com/cb', 'http://127.0.0.1:8123/cb', 'cursor://anysphere.cursor-mcp/oauth/callback']) {
      await t.http
        .post('/oauth/register')
        .send({ redirect_uris: [uri] })
        .expect(201);
    }
  });

  it("[sec-124] a metadata document's private-use scheme must be the reverse of its client_id's host", async () => {
    const port = documents.hostPort.split(':')[1];
    const serve = (origin: string, name: string, redirect: string) => {
      const id = `${origin}/${name}.json`;
      documents.routes.set(`/${name}.json`, serveJson({ client_id: id, client_name: name, redirect_uris: [redirect] }));
      return id;
    };
    const named = `https://localhost:${port}`;
    for (const [what, origin, redirect] of [
      ['a macOS handler', named, 'x-apple.systempreferences:com.apple.preference.security'],
      ['a Windows handler', named, 'ms-settings.x:/'],
      ['another domain', named, 'com.example.app:/cb'],
      ['the host alone, a single label', named, 'localhost:/cb'],
      ['a client_id whose host is an address', documents.origin, 'com.example.app:/cb'],
    ] as const) {
      const client = serve(origin, `bad-${what.replaceAll(' ', '-')}`, redirect);
      const res = await authorize(query(p, pkce().challenge, client, redirect));
      expect({ what, status: res.status, code: res.body.error?.code, location: res.headers.location }).toEqual({
        what,
        status: 400,
        code: 'oauth_request_invalid',
        location: undefined,
      });
      expect({ what, message: res.body.error.message as string }).toEqual({
        what,
        message: expect.stringMatching(/invalid|cannot receive a code|handler|scheme/),
      });
    }
    // The host reversed (localhost here), or a name under it, is the client's own.
    for (const [name, redirect] of [
      ['own', 'localhost.toolgate-test:/cb'],
      ['own-sub', 'localhost.toolgate-test.beta:/oauth/callback'],
    ]) {
      const res = await authorize(query(p, pkce().challenge, serve(named, name, redirect), redirect));
      expect({ name, status: res.status, to: (res.headers.location as string | undefined)?.split('?')[0] }).toEqual({
        name,
        status: 302,
        to: expect.stringMatching(/\/console\/oauth\/consent$/),
      });
    }
  });

  describe('revision 2026-07-28 of the authorization spec', () => {
    const register = (body: object) => t.http.post('/oauth/register').send(body);

    it('takes application_type at registration and checks the redirect URIs against it, as OpenID Connect does', async () => {
      const web = await register({ application_type: 'web', redirect_uris: ['https://app.example.com/cb'] }).expect(201);
      expect(web.body.application_type).toBe('web');
      const native = await register({
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1:8123/cb', 'http://localhost/cb', 'cursor://anysphere.cursor-mcp/oauth/callback'],
      }).expect(201);
      expect(native.body.application_type).toBe('native');
      for (const [what, body, error] of [
        [
          'a web client with a loopback URI',
          { application_type: 'web', redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1:8123/cb'] },
          'invalid_redirect_uri',
        ],
        [
          'a web client with https to localhost',
          { application_type: 'web', redirect_uris: ['https://localhost/cb'] },
          'invalid_redirect_uri',
        ],
        [
          'a web client with an app scheme',
          { application_type: 'web', redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback'] },
          'invalid_redirect_uri',
        ],
        [
          'a native client with an https site',
          { application_type: 'native', redirect_uris: ['https://app.example.com/cb'] },
          'invalid_redirect_uri',
        ],
        [
          'another application type',
          { application_type: 'browser', redirect_uris: ['https://app.example.com/cb'] },
          'invalid_client_metadata',
        ],
        [
          'an application type that is not a string',
          { application_type: ['web'], redirect_uris: ['https://app.example.com/cb'] },
          'invalid_client_metadata',
        ],
      ] as const) {
        const res = await register(body);
        expect({ what, status: res.status, error: res.body.error }).toEqual({ what, status: 400, error });
      }
      // A client of an earlier revision sends none: its URIs are judged as before, and nothing is claimed for it.
      const older = await register({ redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1:8123/cb'] }).expect(201);
      expect(older.body.application_type).toBeUndefined();
    });

    it('names the issuer (RFC 9207 iss) in every authorization response, success, refusal and error alike, as the metadata says', async () => {
      const metadata = await t.http.get('/.well-known/oauth-authorization-server').expect(200);
      expect(metadata.body.authorization_response_iss_parameter_supported).toBe(true);
      const issuer = metadata.body.issuer as string;
      const decide = async (approve: boolean) => {
        const res = await authorize(query(p, pkce().challenge)).expect(302);
        const requestId = new URL(res.headers.location).searchParams.get('request')!;
        const decided = await t.http.post(`/v1/oauth/requests/${requestId}/decision`).set(tenant.auth).send({ approve }).expect(200);
        return new URL(decided.body.redirectTo as string).searchParams;
      };
      const approved = await decide(true);
      expect([approved.get('iss'), approved.get('state'), approved.get('code')]).toEqual([issuer, 'xyz', expect.any(String)]);
      const refused = await decide(false);
      expect([refused.get('iss'), refused.get('error')]).toEqual([issuer, 'access_denied']);
      // An error sent back to the client's loopback redirect URI (here a PKCE it did not send).
      const bad = await authorize({ ...query(p, pkce().challenge), code_challenge_method: 'plain' }).expect(302);
      const error = new URL(bad.headers.location).searchParams;
      expect([error.get('iss'), error.get('error'), error.get('state')]).toEqual([issuer, 'invalid_request', 'xyz']);
    });

    it('binds codes, access and refresh tokens to the issuer that minted them: another issuer URL refuses them, and they still work where they were minted', async () => {
      // The same service reached by another of its names is another issuer (without PUBLIC_URL, its Host).
      const elsewhere = `localhost:${t.port}`;
      const { verifier, challenge } = pkce();
      const code = await codeFor(p, challenge);
      const exchange = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT };
      const foreignCode = await t.http.post('/oauth/token').set('Host', elsewhere).type('form').send(exchange);
      expect([foreignCode.status, foreignCode.body.error, foreignCode.body.error_description]).toEqual([
        400,
        'invalid_grant',
        expect.stringContaining('issued by'),
      ]);
      const tokens = await token(exchange).expect(200);
      const access = tokens.body.access_token as string;
      const refreshToken = tokens.body.refresh_token as string;

      const foreignCall = await t.http
        .post(`/v1/projects/${p}/mcp`)
        .set('Host', elsewhere)
        .set(bearer(access))
        .set(MCP_ACCEPT)
        .send(listTools);
      expect([foreignCall.status, foreignCall.body.error?.code]).toEqual([401, 'invalid_token']);
      await mcp(p, bearer(access)).expect(200);

      const foreignRefresh = await t.http
        .post('/oauth/token')
        .set('Host', elsewhere)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
      expect([foreignRefresh.status, foreignRefresh.body.error]).toEqual([400, 'invalid_grant']);
      // Nothing was spent or revoked: the refresh token rotates where it was minted.
      await mcp(p, bearer(access)).expect(200);
      await refresh(refreshToken).expect(200);
    });
  });
});

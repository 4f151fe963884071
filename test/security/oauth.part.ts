import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import type { Response } from 'supertest';
import { type DocumentServer, LOCALHOST_CERT_FILE, serveJson, startDocumentServer } from '../support/oauth-clients.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md, "MCP clients and OAuth" (87-90): what an outsider who read the README could try with OAuth.
type Auth = { Authorization: string };
const REDIRECT = 'http://127.0.0.1:9/callback';
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };

describe('MCP sign-in with OAuth: tokens, consent and client documents under attack', () => {
  let t: TestApp;
  let documents: DocumentServer;
  let tenant: TestTenant;
  let other: TestTenant;
  let p: string;
  let q: string;
  let clientId: string;
  let resourceOf: (projectId: string) => string;

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const authorize = (query: Record<string, string>) => t.http.get('/oauth/authorize').query(query);
  const goodQuery = (projectId: string, challenge: string, client = clientId) => ({
    response_type: 'code',
    client_id: client,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: resourceOf(projectId),
    state: 'xyz',
  });
  const requestIdOf = (res: Response): string => {
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location);
    expect(location.pathname).toBe('/console/oauth/consent');
    return location.searchParams.get('request')!;
  };
  const token = (body: Record<string, string>) => t.http.post('/oauth/token').type('form').send(body);
  const decide = (requestId: string, auth: Auth, body: object = { approve: true }) =>
    t.http.post(`/v1/oauth/requests/${requestId}/decision`).set(auth).send(body);

  // The whole protocol as a client and a person go through it; answers the tokens and the code.
  // An admin consents unless told otherwise: its client calls tools itself.
  const signIn = async (projectId: string, decision: object = { approve: true }, decider: Auth = tenant.auth) => {
    const { verifier, challenge } = pkce();
    const requestId = requestIdOf(await authorize(goodQuery(projectId, challenge)));
    const decided = await decide(requestId, decider, decision).expect(200);
    const code = new URL(decided.body.redirectTo as string).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT };
    const tokens = await token(exchange).expect(200);
    return {
      access: tokens.body.access_token as string,
      refresh: tokens.body.refresh_token as string,
      expiresIn: tokens.body.expires_in as number,
      exchange,
    };
  };
  const mcp = (projectId: string, auth: Auth, body: object = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
    t.http.post(`/v1/projects/${projectId}/mcp`).set(auth).set(MCP_ACCEPT).send(body);
  const bearer = (access: string): Auth => ({ Authorization: `Bearer ${access}` });

  beforeAll(async () => {
    documents = await startDocumentServer();
    t = await createTestApp({
      env: {
        OAUTH_CLIENT_METADATA_ALLOW_HOSTS: documents.hostPort,
        OAUTH_CLIENT_METADATA_CA_FILE: LOCALHOST_CERT_FILE,
        OAUTH_CLIENT_METADATA_TIMEOUT_MS: '1000',
      },
    });
    tenant = await t.createTenant();
    other = await t.createTenant();
    p = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sh'] })).id;
    q = (await t.createProject(tenant)).id;
    const metadata = await t.http.get(`/.well-known/oauth-protected-resource/v1/projects/${p}/mcp`).expect(200);
    const base = (metadata.body.resource as string).replace(/\/v1\/projects\/.*$/, '');
    resourceOf = (projectId) => `${base}/v1/projects/${projectId}/mcp`;
    clientId = (
      await t.http
        .post('/oauth/register')
        .send({ client_name: 'Outsider', redirect_uris: [REDIRECT] })
        .expect(201)
    ).body.client_id as string;
  });
  afterAll(async () => {
    await t?.close();
    await documents?.close();
  });

  it('[sec-87] a token for project P is refused at project Q, at the REST routes, and after revocation', async () => {
    const { access } = await signIn(p);
    await mcp(p, bearer(access)).expect(200);

    const atQ = await mcp(q, bearer(access));
    expect([atQ.status, atQ.body.error?.code]).toEqual([401, 'invalid_token']);
    expect(atQ.headers['www-authenticate']).toBe(
      `Bearer error="invalid_token", resource_metadata="${resourceOf(q).replace('/v1/', '/.well-known/oauth-protected-resource/v1/')}"`,
    );
    for (const [what, attempt] of [
      ['list projects', () => t.http.get('/v1/projects').set(bearer(access))],
      ['list tools', () => t.http.get(`/v1/projects/${p}/tools`).set(bearer(access))],
      [
        'invoke',
        () =>
          t.http
            .post(`/v1/projects/${p}/tools/read_file/invoke`)
            .set(bearer(access))
            .send({ arguments: { path: 'x' } }),
      ],
      ['events', () => t.http.get(`/v1/projects/${p}/events`).set(bearer(access))],
      ['consent', () => t.http.get(`/v1/oauth/requests/${p}`).set(bearer(access))],
      [
        'a toolset of P over MCP',
        () =>
          t.http
            .post(`/v1/projects/${p}/toolsets/any/mcp`)
            .set(bearer(access))
            .set(MCP_ACCEPT)
            .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      ],
    ] as const) {
      const res = await attempt();
      expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 401, code: 'invalid_token' });
    }

    // Revoked in the key listing, while an MCP call of it runs: the call is cut off, the token refused.
    const keys = (await t.http.get('/v1/api-keys').set(tenant.auth).expect(200)).body.items as Array<{
      id: string;
      name: string;
      oauthResource: string | null;
    }>;
    const listed = keys.filter((k) => k.oauthResource === resourceOf(p));
    expect(listed.map((k) => k.name)).toEqual(['Outsider (OAuth)']);
    // Another tenant cannot see or revoke it.
    expect(
      ((await t.http.get('/v1/api-keys').set(other.auth).expect(200)).body.items as Array<{ id: string }>).some(
        (k) => k.id === listed[0].id,
      ),
    ).toBe(false);
    await t.http.delete(`/v1/api-keys/${listed[0].id}`).set(other.auth).expect(404);

    const port = t.port;
    const running = fetch(`http://127.0.0.1:${port}/v1/projects/${p}/mcp`, {
      method: 'POST',
      headers: { ...bearer(access), ...MCP_ACCEPT, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'shell_exec', arguments: { argv: ['sh', '-c', 'sleep 20; echo late > late-87'] } },
      }),
    }).then(async (res) => ({ status: res.status, text: await res.text() }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await t.http.delete(`/v1/api-keys/${listed[0].id}`).set(tenant.auth).expect(204);
    const cut = await running;
    expect(cut.text).toMatch(/cancel/);
    expect(existsSync(path.join(t.workspaceOf(p), 'late-87'))).toBe(false);
    const after = await mcp(p, bearer(access));
    expect(after.status).toBe(401);

    // Revoked by the client (RFC 7009) with its refresh token: the access token and the refresh token both end.
    const second = await signIn(p);
    await t.http.post('/oauth/revoke').type('form').send({ token: second.refresh, client_id: clientId }).expect(200);
    expect((await mcp(p, bearer(second.access))).status).toBe(401);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: second.refresh, client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
  });

  it("[sec-87] a toolset's MCP URL is a protected resource of its own: its token sees that toolset only, and ends with it", async () => {
    const toolsetBody = { slug: 'docs', name: 'Docs', mode: 'direct', tools: [{ select: 'read_file', name: 'read_doc' }] };
    await t.http.post(`/v1/projects/${p}/toolsets`).set(tenant.auth).send(toolsetBody).expect(201);
    await t.http
      .post(`/v1/projects/${p}/toolsets`)
      .set(tenant.auth)
      .send({ ...toolsetBody, slug: 'other', tools: [{ select: 'list_files' }] })
      .expect(201);
    const toolsetUrl = (slug: string, projectId = p) => resourceOf(projectId).replace(/\/mcp$/, `/toolsets/${slug}/mcp`);
    const toolsetMcp = (slug: string, auth: Auth | Record<string, never>) =>
      t.http.post(`/v1/projects/${p}/toolsets/${slug}/mcp`).set(auth).set(MCP_ACCEPT).send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

    // Discovery: the 401 names the toolset's own metadata, whose resource is the toolset's URL.
    const anonymous = await toolsetMcp('docs', {});
    const metadataUrl = toolsetUrl('docs').replace('/v1/', '/.well-known/oauth-protected-resource/v1/');
    expect([anonymous.status, anonymous.headers['www-authenticate']]).toEqual([401, `Bearer resource_metadata="${metadataUrl}"`]);
    const metadata = await t.http.get(new URL(metadataUrl).pathname).expect(200);
    expect(metadata.body.resource).toBe(toolsetUrl('docs'));

    // Consent names the toolset; the token then serves it, under its names, and nothing else.
    const { verifier, challenge } = pkce();
    const requestId = requestIdOf(await authorize({ ...goodQuery(p, challenge), resource: toolsetUrl('docs') }));
    const view = await t.http.get(`/v1/oauth/requests/${requestId}`).set(tenant.auth).expect(200);
    expect({ toolset: view.body.toolset, resource: view.body.resource }).toEqual({ toolset: 'docs', resource: toolsetUrl('docs') });
    const decided = await decide(requestId, tenant.auth).expect(200);
    const code = new URL(decided.body.redirectTo as string).searchParams.get('code')!;
    const tokens = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    }).expect(200);
    const access = bearer(tokens.body.access_token as string);
    const listed = await toolsetMcp('docs', access).expect(200);
    expect((listed.body.result.tools as Array<{ name: string }>).map((tool) => tool.name)).toEqual(['read_doc']);
    for (const [what, attempt] of [
      ["the project's MCP URL", () => mcp(p, access)],
      ['another toolset', () => toolsetMcp('other', access)],
      ["the toolset's REST tools", () => t.http.get(`/v1/projects/${p}/toolsets/docs/tools`).set(access)],
      [
        "the toolset's REST invoke",
        () =>
          t.http
            .post(`/v1/projects/${p}/toolsets/docs/tools/read_doc/invoke`)
            .set(access)
            .send({ arguments: { path: 'x' } }),
      ],
      [
        'the same slug in project Q',
        () =>
          t.http
            .post(`/v1/projects/${q}/toolsets/docs/mcp`)
            .set(access)
            .set(MCP_ACCEPT)
            .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      ],
    ] as const) {
      const res = await attempt();
      expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 401, code: 'invalid_token' });
    }

    // A resource that is not one of this service's MCP URLs, or a toolset the project does not have, gets no consent.
    for (const resource of [
      toolsetUrl('Docs'),
      toolsetUrl('docs').replace('/docs/', '/../'),
      `${toolsetUrl('docs')}/`,
      toolsetUrl('-docs'),
    ]) {
      const res = await authorize({ ...goodQuery(p, challenge), resource });
      expect({ resource, error: new URL(res.headers.location).searchParams.get('error') }).toEqual({ resource, error: 'invalid_target' });
    }
    const missing = requestIdOf(await authorize({ ...goodQuery(p, challenge), resource: toolsetUrl('nothing-here') }));
    expect((await t.http.get(`/v1/oauth/requests/${missing}`).set(tenant.auth)).status).toBe(404);
    expect((await decide(missing, tenant.auth)).status).toBe(404);

    // Renaming the toolset ends a token of its old URL and that consent, as deleting does.
    const renamedFrom = await t.http
      .post(`/v1/projects/${p}/toolsets`)
      .set(tenant.auth)
      .send({ ...toolsetBody, slug: 'docs-v1' })
      .expect(201);
    expect(renamedFrom.body.slug).toBe('docs-v1');
    const second = pkce();
    const secondRequest = requestIdOf(await authorize({ ...goodQuery(p, second.challenge), resource: toolsetUrl('docs-v1') }));
    const secondCode = new URL((await decide(secondRequest, tenant.auth).expect(200)).body.redirectTo as string).searchParams.get('code')!;
    const v1Tokens = await token({
      grant_type: 'authorization_code',
      code: secondCode,
      code_verifier: second.verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    }).expect(200);
    await t.http
      .put(`/v1/projects/${p}/toolsets/docs-v1`)
      .set(tenant.auth)
      .send({ ...toolsetBody, slug: 'docs-v2' })
      .expect(200);
    await t.http
      .post(`/v1/projects/${p}/toolsets`)
      .set(tenant.auth)
      .send({ ...toolsetBody, slug: 'docs-v1', tools: [{ select: '@all' }] })
      .expect(201);
    expect((await toolsetMcp('docs-v1', bearer(v1Tokens.body.access_token as string))).status).toBe(401);
    const v1Refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: v1Tokens.body.refresh_token as string,
      client_id: clientId,
    });
    expect([v1Refresh.status, v1Refresh.body.error]).toEqual([400, 'invalid_grant']);
    for (const slug of ['docs-v1', 'docs-v2']) await t.http.delete(`/v1/projects/${p}/toolsets/${slug}`).set(tenant.auth).expect(204);

    // Deleting the toolset ends the token and its consent: a toolset made again under the slug is not reached with them.
    await t.http.delete(`/v1/projects/${p}/toolsets/docs`).set(tenant.auth).expect(204);
    await t.http
      .post(`/v1/projects/${p}/toolsets`)
      .set(tenant.auth)
      .send({ ...toolsetBody, tools: [{ select: '@all' }] })
      .expect(201);
    expect((await toolsetMcp('docs', access)).status).toBe(401);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string, client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
    await t.http.delete(`/v1/projects/${p}/toolsets/docs`).set(tenant.auth).expect(204);
    await t.http.delete(`/v1/projects/${p}/toolsets/other`).set(tenant.auth).expect(204);
  });

  it('[sec-87] a token carries only the tools chosen at consent, and its refresh token cannot be replayed', async () => {
    const { access, refresh } = await signIn(p, { approve: true, tools: ['list_files'] });
    const listed = await mcp(p, bearer(access)).expect(200);
    expect((listed.body.result.tools as Array<{ name: string }>).map((tool) => tool.name)).toEqual(['list_files']);
    const call = await mcp(p, bearer(access), {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'read_file', arguments: { path: 'x' } },
    });
    // Refused (as a JSON-RPC error or an error result, as the MCP endpoint words it), never run.
    expect(call.body.result?.structuredContent).toBeUndefined();
    expect(JSON.stringify(call.body)).toMatch(/No tool named 'read_file'/);

    const rotated = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId }).expect(200);
    expect(rotated.body.refresh_token).not.toBe(refresh);
    await mcp(p, bearer(rotated.body.access_token as string)).expect(200);
    // The old refresh token again: theft is assumed and the whole grant ends.
    const replay = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });
    expect([replay.status, replay.body.error]).toEqual([400, 'invalid_grant']);
    expect((await mcp(p, bearer(rotated.body.access_token as string))).status).toBe(401);
    const next = await token({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token as string, client_id: clientId });
    expect([next.status, next.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('[sec-88] an authorization request without PKCE S256, with a foreign resource, or an unregistered redirect URI is refused before any consent page', async () => {
    const { challenge } = pkce();
    const good = goodQuery(p, challenge);
    const cases: Array<[string, Record<string, string>, string]> = [
      ['no PKCE', { ...good, code_challenge: '', code_challenge_method: '' }, 'invalid_request'],
      ['plain PKCE', { ...good, code_challenge_method: 'plain' }, 'invalid_request'],
      ['no resource', { ...good, resource: '' }, 'invalid_target'],
      ['another service', { ...good, resource: `https://evil.example/v1/projects/${p}/mcp` }, 'invalid_target'],
      ['a REST route', { ...good, resource: resourceOf(p).replace(/\/mcp$/, '/tools') }, 'invalid_target'],
      ['the service itself', { ...good, resource: resourceOf(p).replace(/\/v1\/.*$/, '/') }, 'invalid_target'],
      ['a token response', { ...good, response_type: 'token' }, 'unsupported_response_type'],
      ['an unknown scope', { ...good, scope: 'mcp admin' }, 'invalid_scope'],
    ];
    for (const [what, query, error] of cases) {
      const res = await authorize(Object.fromEntries(Object.entries(query).filter(([, v]) => v !== '')));
      const location = res.headers.location as string | undefined;
      // Sent back to the client with the error, never to the consent page.
      expect({
        what,
        status: res.status,
        to: location?.split('?')[0],
        error: location && new URL(location).searchParams.get('error'),
      }).toEqual({
        what,
        status: 302,
        to: REDIRECT,
        error,
      });
    }
    for (const [what, query] of [
      ['an unregistered redirect URI', { ...good, redirect_uri: 'https://attacker.example/steal' }],
      ['a redirect URI that only starts like one', { ...good, redirect_uri: `${REDIRECT}/../x` }],
      ['an unknown client', { ...good, client_id: 'tgc_00000000000000000000000000000000' }],
    ] as const) {
      const res = await authorize(query);
      // Refused here, to the person's browser: never redirected anywhere.
      expect({ what, status: res.status, code: res.body.error?.code, location: res.headers.location }).toEqual({
        what,
        status: 400,
        code: 'oauth_request_invalid',
        location: undefined,
      });
    }
  });

  it("audits every call of a token, refused ones included, under its client's name", async () => {
    const keys = async () =>
      (await t.http.get('/v1/api-keys').set(tenant.auth).expect(200)).body.items as Array<{ id: string; name: string }>;
    const before = new Set((await keys()).map((k) => k.id));
    const { access } = await signIn(q, { approve: true, tools: ['list_files'] });
    const issued = (await keys()).filter((k) => !before.has(k.id));
    expect(issued.map((k) => k.name)).toEqual(['Outsider (OAuth)']);
    await mcp(q, bearer(access), { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list_files', arguments: {} } }).expect(
      200,
    );
    await mcp(q, bearer(access), {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'read_file', arguments: { path: 'x' } },
    }).expect(200);

    const rows = (await t.http.get(`/v1/projects/${q}/invocations`).query({ callerKeyId: issued[0].id }).set(tenant.auth).expect(200)).body
      .items as Array<Record<string, unknown>>;
    const caller = { keyId: issued[0].id, name: 'Outsider (OAuth)' };
    expect(rows.map(({ tool, channel, status, errorCode, caller: who }) => ({ tool, channel, status, errorCode, caller: who }))).toEqual([
      { tool: 'list_files', channel: 'mcp', status: 'ok', errorCode: null, caller },
      { tool: 'read_file', channel: 'mcp', status: 'denied', errorCode: 'tool_not_found', caller },
    ]);
    // The export says the same.
    const exported = (await t.http.get(`/v1/projects/${q}/invocations/export`).set(tenant.auth).expect(200)).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { caller: unknown });
    expect(exported.filter((row) => JSON.stringify(row.caller) === JSON.stringify(caller))).toHaveLength(2);
  });

  it('[sec-89] a decision by another tenant, by an agent key or twice is refused; a code used twice revokes what it issued', async () => {
    const { verifier, challenge } = pkce();
    const requestId = requestIdOf(await authorize(goodQuery(p, challenge)));
    const foreign = await t.http.get(`/v1/oauth/requests/${requestId}`).set(other.auth);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'oauth_request_not_found']);
    const foreignDecision = await decide(requestId, other.auth);
    expect([foreignDecision.status, foreignDecision.body.error.code]).toEqual([404, 'oauth_request_not_found']);
    const agent = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'agent', role: 'agent', projectIds: [p] })
      .expect(201);
    const byAgent = await decide(requestId, bearer(agent.body.key as string));
    expect([byAgent.status, byAgent.body.error.code]).toEqual([403, 'forbidden_for_role']);
    const approverOfQ = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'approver-q', role: 'approver', projectIds: [q] })
      .expect(201);
    const byQ = await decide(requestId, bearer(approverOfQ.body.key as string));
    expect([byQ.status, byQ.body.error.code]).toEqual([404, 'oauth_request_not_found']);

    // None of those decided it: the right person still can, once.
    const view = await t.http.get(`/v1/oauth/requests/${requestId}`).set(tenant.deciderAuth).expect(200);
    expect(view.body).toMatchObject({
      client: { id: clientId, name: 'Outsider', verifiedOrigin: null },
      redirectUri: REDIRECT,
      resource: resourceOf(p),
      project: { id: p },
    });
    const decided = await decide(requestId, tenant.deciderAuth).expect(200);
    const twice = await decide(requestId, tenant.auth, { approve: false });
    expect([twice.status, twice.body.error.code]).toEqual([409, 'oauth_request_decided']);

    const code = new URL(decided.body.redirectTo as string).searchParams.get('code')!;
    const exchange = { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT };
    const wrongVerifier = await token({ ...exchange, code_verifier: pkce().verifier });
    expect([wrongVerifier.status, wrongVerifier.body.error]).toEqual([400, 'invalid_grant']);

    const { access, refresh, exchange: used } = await signIn(p);
    await mcp(p, bearer(access)).expect(200);
    const again = await token(used);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect((await mcp(p, bearer(access))).status).toBe(401);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);

    // A denial sends the browser back with access_denied and no code.
    const denied = requestIdOf(await authorize(goodQuery(p, pkce().challenge)));
    const answer = new URL((await decide(denied, tenant.deciderAuth, { approve: false }).expect(200)).body.redirectTo as string);
    expect([answer.searchParams.get('error'), answer.searchParams.get('code'), answer.searchParams.get('state')]).toEqual([
      'access_denied',
      null,
      'xyz',
    ]);
  });

  it("a consent lends the deciding key's authority only: an approver's client has every call wait for another person, and its calls and consent end with the key", async () => {
    const gated = (await t.createProject(tenant, { approvalRequired: ['write_file'] })).id;
    // An approver key that expires in two minutes consents to the client, asking for nothing about how long.
    const approver = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'short-lived approver', role: 'approver', expiresAt: new Date(Date.now() + 120_000).toISOString() })
      .expect(201);
    const approverAuth = bearer(approver.body.key as string);
    const shown = requestIdOf(await authorize(goodQuery(gated, pkce().challenge)));
    expect((await t.http.get(`/v1/oauth/requests/${shown}`).set(approverAuth).expect(200)).body.callsNeedApproval).toBe(true);
    expect((await t.http.get(`/v1/oauth/requests/${shown}`).set(tenant.auth).expect(200)).body.callsNeedApproval).toBe(false);
    const { access, refresh, expiresIn } = await signIn(gated, { approve: true }, approverAuth);
    // No token outlives the key whose consent issued it: an access token of two minutes at most, no refresh token.
    expect([expiresIn <= 120, refresh]).toEqual([true, undefined]);
    const keys = (await t.http.get('/v1/api-keys').set(tenant.auth).expect(200)).body.items as Array<{
      id: string;
      oauthResource: string | null;
      oauthConsentedByKeyId: string | null;
      parksEveryCall: boolean;
    }>;
    expect(keys.find((k) => k.oauthResource === resourceOf(gated))).toMatchObject({
      oauthConsentedByKeyId: approver.body.id,
      parksEveryCall: true,
    });
    expect(keys.find((k) => k.id === approver.body.id)).toMatchObject({ oauthConsentedByKeyId: null, parksEveryCall: false });

    // An approver calls no tools, so neither does its client on its own: a gated tool and an ungated one both
    // park, nothing is written, and the approver who signed it in can decide neither.
    const write = {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'write_file', arguments: { path: 'a.txt', content: 'x' } },
    };
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'list_files', arguments: {} } };
    for (const body of [write, list]) expect(JSON.stringify((await mcp(gated, bearer(access), body).expect(200)).body)).toMatch(/approv/i);
    expect(existsSync(path.join(t.workspaceOf(gated), 'a.txt'))).toBe(false);
    const pending = (
      await t.http.get(`/v1/projects/${gated}/invocations`).query({ status: 'pending_approval' }).set(tenant.auth).expect(200)
    ).body.items as Array<{
      id: string;
      tool: string;
    }>;
    expect(pending.map((call) => call.tool).sort()).toEqual(['list_files', 'write_file']);
    const [written, listed] = [
      pending.find((call) => call.tool === 'write_file')!.id,
      pending.find((call) => call.tool === 'list_files')!.id,
    ];
    for (const verb of ['approve', 'deny']) {
      const self = await t.http.post(`/v1/projects/${gated}/invocations/${written}/${verb}`).set(approverAuth).send({});
      expect([verb, self.status, self.body.error?.code]).toEqual([verb, 403, 'approval_self_decision']);
    }
    await t.http.post(`/v1/projects/${gated}/invocations/${written}/approve`).set(tenant.deciderAuth).send({}).expect(200);
    expect(existsSync(path.join(t.workspaceOf(gated), 'a.txt'))).toBe(true);

    // The approver's key revoked: the client's token ends with it, and what it parked is denied, never run.
    const lasting = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'lasting approver', role: 'approver' }).expect(201);
    const second = await signIn(gated, { approve: true }, bearer(lasting.body.key as string));
    await mcp(gated, bearer(second.access)).expect(200);
    await t.http.delete(`/v1/api-keys/${approver.body.id}`).set(tenant.auth).expect(204);
    expect((await mcp(gated, bearer(access))).status).toBe(401);
    const late = await t.http.post(`/v1/projects/${gated}/invocations/${listed}/approve`).set(tenant.deciderAuth).send({});
    expect([late.status, late.body.error?.code]).toEqual([409, 'approval_requester_ended']);
    expect((await t.http.get(`/v1/projects/${gated}/invocations/${listed}`).set(tenant.auth).expect(200)).body.status).toBe('denied');
    // A consent given by a key that never expires ends with it too, access and refresh tokens alike.
    await mcp(gated, bearer(second.access)).expect(200);
    await t.http.delete(`/v1/api-keys/${lasting.body.id}`).set(tenant.auth).expect(204);
    expect((await mcp(gated, bearer(second.access))).status).toBe(401);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: second.refresh, client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('the authorization endpoint never redirects to a site on an error, and checks what the token and registration endpoints take', async () => {
    // Anyone can register a client with a redirect URI of their choosing.
    const phisher = await t.http
      .post('/oauth/register')
      .send({ client_name: 'Phisher', redirect_uris: ['https://attacker.example/land'] })
      .expect(201);
    const { challenge } = pkce();
    const bad = { ...goodQuery(p, challenge, phisher.body.client_id as string), redirect_uri: 'https://attacker.example/land' };
    for (const [what, query] of [
      ['no PKCE', { ...bad, code_challenge_method: 'plain' }],
      ['a foreign resource', { ...bad, resource: 'https://evil.example/v1/projects/x/mcp' }],
      ['a token response', { ...bad, response_type: 'token' }],
    ] as const) {
      const res = await authorize(query);
      expect({ what, status: res.status, code: res.body.error?.code, location: res.headers.location }).toEqual({
        what,
        status: 400,
        code: 'oauth_request_invalid',
        location: undefined,
      });
    }
    // Its good request still reaches the consent page, where the person sees where the browser would go.
    requestIdOf(await authorize(bad));

    for (const [what, uri] of [
      ['user information before the host', 'https://trusted.example@attacker.example/cb'],
      ['a password too', 'https://user:pw@attacker.example/cb'],
      ['a cleartext websocket', 'ws://attacker.example/cb'],
      ['ftp', 'ftp://attacker.example/cb'],
      ['a Windows handler', 'ms-msdt:/id x'],
      ['a Windows search handler', 'search-ms:query=x'],
      ['mail', 'mailto:someone@example.com'],
      ['view-source', 'view-source:https://attacker.example/'],
      ['a header smuggled in', 'http://127.0.0.1:8765/cb\r\nSet-Cookie: x=1'],
      ['leading whitespace', ' https://attacker.example/cb'],
      ['a trailing tab', 'https://attacker.example/cb\t'],
      ['a C1 control character', 'https://x.example/a\u0085b'],
      ['a right-to-left override', 'https://x.example/\u202ecb'],
      ['a zero-width space', 'https://x.example/\u200bcb'],
      ['a homograph host', 'https://\u0430pple.com/cb'],
      ['a backslash before an @', 'https://x.example\\@evil.example/cb'],
      ['a Windows help handler', 'its:x.chm::/x'],
      ['the Windows shell', 'shell:startup'],
      ['another browser', 'microsoft-edge:https://attacker.example/'],
      ['a browser-internal page', 'edge://settings'],
      ['cleartext file transfer', 'tftp://attacker.example/cb'],
      ['a messenger', 'skype:someone'],
    ] as const) {
      const res = await t.http.post('/oauth/register').send({ redirect_uris: [uri] });
      expect({ what, status: res.status, error: res.body.error }).toEqual({ what, status: 400, error: 'invalid_redirect_uri' });
    }
    // A native app's own scheme is taken when the operator lists it (OAUTH_APP_SCHEMES); a reverse domain name
    // needs a metadata document whose host it reverses (RFC 8252 7.1; sign-in-exact.e2e-spec.ts).
    await t.http
      .post('/oauth/register')
      .send({ redirect_uris: ['cursor://anysphere.cursor-mcp/oauth/callback'] })
      .expect(201);
    expect((await t.http.post('/oauth/register').send({ redirect_uris: ['com.example.app:/oauth/callback'] })).body.error).toBe(
      'invalid_redirect_uri',
    );

    // A loopback redirect URI matches on any port (a native client listens where it can, RFC 8252 7.3), never
    // on another host name.
    requestIdOf(await authorize({ ...goodQuery(p, pkce().challenge), redirect_uri: 'http://127.0.0.1:53123/callback' }));
    for (const uri of ['http://localhost:9/callback', 'http://127.0.0.1:9/callback/other', 'https://127.0.0.1:9/callback']) {
      const res = await authorize({ ...goodQuery(p, pkce().challenge), redirect_uri: uri });
      expect({ uri, status: res.status, location: res.headers.location }).toEqual({ uri, status: 400, location: undefined });
    }

    const requestId = requestIdOf(await authorize(goodQuery(p, pkce().challenge)));
    const code = new URL((await decide(requestId, tenant.deciderAuth).expect(200)).body.redirectTo as string).searchParams.get('code')!;
    for (const [what, verifier] of [
      ['too short', 'abc'],
      ['a character outside the set', `${'a'.repeat(43)} `],
      ['too long', 'a'.repeat(129)],
    ] as const) {
      const res = await token({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT,
      });
      expect({ what, status: res.status, error: res.body.error }).toEqual({ what, status: 400, error: 'invalid_request' });
    }
  });

  it("without PUBLIC_URL, a Host that is not one of the service's names gets no document, redirect or registration", async () => {
    for (const [what, attempt] of [
      ['server metadata', () => t.http.get('/.well-known/oauth-authorization-server').set('Host', 'evil.example')],
      ['OpenID discovery', () => t.http.get('/.well-known/openid-configuration').set('Host', 'evil.example')],
      [
        'resource metadata',
        () => t.http.get(`/.well-known/oauth-protected-resource/v1/projects/${p}/mcp`).set('Host', 'evil.example:8080'),
      ],
      ['authorize', () => authorize(goodQuery(p, pkce().challenge)).set('Host', 'evil.example')],
      [
        'register',
        () =>
          t.http
            .post('/oauth/register')
            .set('Host', 'evil.example')
            .send({ redirect_uris: [REDIRECT] }),
      ],
      ['token', () => token({ grant_type: 'refresh_token', refresh_token: 'x', client_id: clientId }).set('Host', 'evil.example')],
    ] as const) {
      const res = await attempt();
      expect({ what, status: res.status, code: res.body.error?.code, body: JSON.stringify(res.body).includes('evil.example/') }).toEqual({
        what,
        status: 403,
        code: 'host_not_allowed',
        body: false,
      });
    }
    // The service's own names are answered, and a cache is told the document depends on the Host.
    const own = await t.http.get('/.well-known/oauth-authorization-server').set('Host', 'localhost').expect(200);
    expect(own.body.issuer).toBe('http://localhost');
    expect(own.headers.vary).toMatch(/Host/i);
  });

  it('[sec-90] a client ID metadata document at a private or loopback address, over plain HTTP, larger than 5 KiB or slow is refused, in bounded time', async () => {
    const held: http.ServerResponse[] = [];
    documents.routes.set(
      '/big.json',
      serveJson({ client_id: `${documents.origin}/big.json`, redirect_uris: [REDIRECT], padding: 'x'.repeat(6 * 1024) }),
    );
    documents.routes.set('/slow.json', (res) => void held.push(res));
    documents.routes.set('/liar.json', serveJson({ client_id: `${documents.origin}/other.json`, redirect_uris: [REDIRECT] }));
    documents.routes.set(
      '/good.json',
      serveJson({ client_id: `${documents.origin}/good.json`, client_name: 'Good', redirect_uris: [REDIRECT] }),
    );
    const port = documents.hostPort.split(':')[1];
    const cases: Array<[string, string, RegExp]> = [
      ['loopback (not opened)', `https://localhost:${Number(port) + 1}/client.json`, /not allowed|loopback|blocked/i],
      ['private', 'https://10.0.0.7/client.json', /private|not allowed|blocked/i],
      ['metadata service', 'https://169.254.169.254/client.json', /not allowed|blocked|metadata|link-local/i],
      ['plain http', `http://${documents.hostPort}/good.json`, /not registered|https/i],
      ['larger than 5 KiB', `${documents.origin}/big.json`, /larger than 5120 bytes/],
      ['slow', `${documents.origin}/slow.json`, /timed out|1000 ?ms/i],
      ['not its own client_id', `${documents.origin}/liar.json`, /client_id is its own URL/],
    ];
    try {
      for (const [what, client, why] of cases) {
        const started = Date.now();
        const res = await authorize(goodQuery(p, pkce().challenge, client));
        expect({ what, status: res.status, code: res.body.error?.code, location: res.headers.location }).toEqual({
          what,
          status: 400,
          code: 'oauth_request_invalid',
          location: undefined,
        });
        expect({ what, message: res.body.error.message as string }).toEqual({ what, message: expect.stringMatching(why) });
        expect({ what, bounded: Date.now() - started < 4000 }).toEqual({ what, bounded: true });
      }
    } finally {
      for (const res of held) res.destroy();
    }
    // The same server's well-formed document is taken, and the consent page is shown its origin as verified.
    const requestId = requestIdOf(await authorize(goodQuery(p, pkce().challenge, `${documents.origin}/good.json`)));
    const view = await t.http.get(`/v1/oauth/requests/${requestId}`).set(tenant.deciderAuth).expect(200);
    expect(view.body.client).toEqual({ id: `${documents.origin}/good.json`, name: 'Good', verifiedOrigin: documents.origin });
  });
});

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import { eventually } from '../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { ApiKeysSweep } from '../../src/tenants/api-keys.sweep.js';
import { OAuthSweep } from '../../src/oauth/oauth.sweep.js';

// What one tenant, or an anonymous caller, can make the shared database keep: API keys and OAuth tokens are
// counted or swept, whatever the rate they are made at.
type Auth = { Authorization: string };
const REDIRECT = 'http://127.0.0.1:9/callback';
const DAY = 86_400_000;

describe('API keys and OAuth rows a tenant or an outsider can make the database keep', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let projectId: string;
  let clientId: string;
  let resource: string;

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => t.database.driver.query<T>(text, params);
  const count = async (text: string, params: unknown[] = []) => Number((await sql<{ n: string }>(text, params))[0].n);
  // API keys made straight in the database, as many as a test needs: `ended` back-dates their end by that much.
  const insertKeys = async (tenantId: string, n: number, state: 'live' | 'revoked' | 'expired' = 'live', endedAgoMs = 0) => {
    const ended = new Date(Date.now() - endedAgoMs);
    await sql(
      `INSERT INTO api_keys (id, tenant_id, name, prefix, key_hash, revoked_at, expires_at)
       SELECT gen_random_uuid(), $1, 'filler', 'f' || md5(random()::text || g::text), '\\x00'::bytea, $2, $3 FROM generate_series(1, $4) g`,
      [tenantId, state === 'revoked' ? ended : null, state === 'expired' ? ended : null, n],
    );
  };
  const liveKeys = (tenantId: string) =>
    count(
      `SELECT count(*) AS n FROM api_keys WHERE tenant_id = $1 AND oauth_grant_id IS NULL AND revoked_at IS NULL
         AND (expires_at IS NULL OR expires_at > now())`,
      [tenantId],
    );
  const issue = (auth: Auth, body: object = {}) => t.http.post('/v1/api-keys').set(auth).send(body);
  const backdate = (keyId: string, column: 'revoked_at' | 'expires_at', agoMs: number) =>
    sql(`UPDATE api_keys SET ${column} = $2 WHERE id = $1`, [keyId, new Date(Date.now() - agoMs)]);
  const keyExists = async (keyId: string) => (await count('SELECT count(*) AS n FROM api_keys WHERE id = $1', [keyId])) === 1;

  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const token = (body: Record<string, string>) => t.http.post('/oauth/token').type('form').send(body);
  const requestIdOf = (res: Response): string => new URL(res.headers.location).searchParams.get('request')!;
  const authorize = async (at = resource) => {
    const { verifier, challenge } = pkce();
    const query = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: at,
    };
    return { requestId: requestIdOf(await t.http.get('/oauth/authorize').query(query).expect(302)), verifier };
  };
  // The whole sign-in, consented by the tenant's admin key, for the MCP URL `at` of one of its projects.
  const signIn = async (decider: TestTenant = tenant, at = resource) => {
    const { requestId, verifier } = await authorize(at);
    const decided = await t.http.post(`/v1/oauth/requests/${requestId}/decision`).set(decider.auth).send({ approve: true }).expect(200);
    const code = new URL(decided.body.redirectTo as string).searchParams.get('code')!;
    const tokens = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    });
    expect(tokens.status).toBe(200);
    return { access: tokens.body.access_token as string, refresh: tokens.body.refresh_token as string };
  };
  const register = async () =>
    (
      await t.http
        .post('/oauth/register')
        .send({ client_name: 'Capacity', redirect_uris: [REDIRECT] })
        .expect(201)
    ).body.client_id as string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    other = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const metadata = await t.http.get(`/.well-known/oauth-protected-resource/v1/projects/${projectId}/mcp`).expect(200);
    resource = metadata.body.resource as string;
    clientId = await register();
  });
  afterAll(() => t?.close());

  it('refuses a key past 1000 live ones, even to requests racing for the last places, and leaves another tenant alone', async () => {
    const crowded = await t.createTenant();
    // The tenant's own two (default and decider), revoked and expired ones that do not count, fillers to 997.
    await insertKeys(crowded.id, 50, 'revoked');
    await insertKeys(crowded.id, 50, 'expired');
    await insertKeys(crowded.id, 995);
    expect(await liveKeys(crowded.id)).toBe(997);

    const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => issue(crowded.auth, { name: `race-${i}` })));
    expect(raced.map((res) => res.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    expect(await liveKeys(crowded.id)).toBe(1000);
    const refused = raced.find((res) => res.status === 403)!;
    expect(refused.body.error).toEqual({
      code: 'too_many_api_keys',
      message:
        "A tenant has at most 1000 live API keys (not revoked, not expired; OAuth clients' tokens are not counted); revoke keys it no longer uses (DELETE /v1/api-keys/{keyId}), then issue this one again",
      details: { limit: 1000 },
    });
    // The operator's route counts the same keys.
    const byOperator = await t.http.post(`/v1/admin/tenants/${crowded.id}/api-keys`).set(t.admin).send({ name: 'operator' });
    expect([byOperator.status, byOperator.body.error?.code]).toEqual([403, 'too_many_api_keys']);

    // Another tenant issues keys as before.
    await issue(other.auth, { name: 'unaffected' }).expect(201);

    // A revoked key frees its place; so does one that expired.
    const made = raced.find((res) => res.status === 201)!.body as { id: string };
    await t.http.delete(`/v1/api-keys/${made.id}`).set(crowded.auth).expect(204);
    const shortLived = (await issue(crowded.auth, { name: 'short', expiresAt: new Date(Date.now() + 60_000).toISOString() }).expect(201))
      .body as { id: string };
    await issue(crowded.auth).expect(403);
    await backdate(shortLived.id, 'expires_at', 1000);
    await issue(crowded.auth, { name: 'after-expiry' }).expect(201);
  });

  it('keeps at most the 1000 most recently ended keys of a tenant, deleting older ones as it issues (a call awaiting approval keeps its key)', async () => {
    const churning = await t.createTenant();
    const project = await t.createProject(churning, { approvalRequired: ['list_files'] });
    const agent = (await issue(churning.auth, { name: 'parks', role: 'agent', projectIds: [project.id] }).expect(201)).body as {
      id: string;
      key: string;
    };
    const parked = await t.http
      .post(`/v1/projects/${project.id}/tools/list_files/invoke`)
      .set({ Authorization: `Bearer ${agent.key}` })
      .send({ arguments: {} })
      .expect(202);
    await t.http.delete(`/v1/api-keys/${agent.id}`).set(churning.auth).expect(204);
    await backdate(agent.id, 'revoked_at', 10 * DAY);
    const oldest = (await issue(churning.auth, { name: 'oldest' }).expect(201)).body as { id: string };
    await t.http.delete(`/v1/api-keys/${oldest.id}`).set(churning.auth).expect(204);
    await backdate(oldest.id, 'revoked_at', 5 * DAY);
    await insertKeys(churning.id, 1000, 'revoked', DAY);
    await insertKeys(churning.id, 5, 'expired', 2 * DAY);

    await issue(churning.auth, { name: 'next' }).expect(201);
    const ended = await count(
      `SELECT count(*) AS n FROM api_keys WHERE tenant_id = $1 AND oauth_grant_id IS NULL AND (revoked_at IS NOT NULL OR expires_at <= now())`,
      [churning.id],
    );
    // The newest 1000 ended keys, and the one whose call still waits for a person.
    expect(ended).toBe(1001);
    expect(await keyExists(oldest.id)).toBe(false);
    expect(await keyExists(agent.id)).toBe(true);
    const decision = await t.http
      .post(`/v1/projects/${project.id}/invocations/${parked.body.invocationId as string}/approve`)
      .set(churning.deciderAuth)
      .send({});
    expect([decision.status, decision.body.error?.code]).toEqual([409, 'approval_requester_ended']);
    // Another tenant's ended keys are not touched.
    expect(await keyExists(other.keyId)).toBe(true);
  });

  it('sweeps keys ended 30 days ago with their MCP state; live and recent ones stay, and the audit log of a swept key still reads', async () => {
    const agent = (await issue(tenant.auth, { name: 'retired-agent', role: 'agent', projectIds: [projectId] }).expect(201)).body as {
      id: string;
      key: string;
    };
    const call = await t.http
      .post(`/v1/projects/${projectId}/tools/list_files/invoke`)
      .set({ Authorization: `Bearer ${agent.key}` })
      .send({ arguments: {} })
      .expect(200);
    await t.http.delete(`/v1/api-keys/${agent.id}`).set(tenant.auth).expect(204);
    await backdate(agent.id, 'revoked_at', 31 * DAY);
    const recent = (await issue(tenant.auth, { name: 'recently-revoked' }).expect(201)).body as { id: string };
    await t.http.delete(`/v1/api-keys/${recent.id}`).set(tenant.auth).expect(204);
    await backdate(recent.id, 'revoked_at', 29 * DAY);
    const expired = (await issue(tenant.auth, { name: 'expired', expiresAt: new Date(Date.now() + 60_000).toISOString() }).expect(201))
      .body as { id: string };
    await backdate(expired.id, 'expires_at', 31 * DAY);
    const farFuture = (
      await issue(tenant.auth, { name: 'expires-later', expiresAt: new Date(Date.now() + 400 * DAY).toISOString() }).expect(201)
    ).body as { id: string };
    // What the MCP endpoint keeps per key: the swept key's goes with it, a live key's stays.
    for (const keyId of [agent.id, tenant.keyId]) {
      await sql(`INSERT INTO mcp_log_levels (project_id, api_key_id, tenant_id, level, updated_at) VALUES ($1, $2, $3, 'debug', now())`, [
        projectId,
        keyId,
        tenant.id,
      ]);
      await sql(
        `INSERT INTO mcp_client_capabilities (project_id, api_key_id, tenant_id, url_elicitation, updated_at) VALUES ($1, $2, $3, true, now())`,
        [projectId, keyId, tenant.id],
      );
    }

    expect(await t.app.get(ApiKeysSweep).sweep()).toBeGreaterThanOrEqual(2);
    expect(await keyExists(agent.id)).toBe(false);
    expect(await keyExists(expired.id)).toBe(false);
    for (const kept of [recent.id, farFuture.id, tenant.keyId, tenant.deciderKeyId]) expect(await keyExists(kept)).toBe(true);
    for (const table of ['mcp_log_levels', 'mcp_client_capabilities']) {
      const rows = await sql<{ api_key_id: string }>(`SELECT api_key_id FROM ${table} WHERE project_id = $1`, [projectId]);
      expect({ table, keys: rows.map((row) => row.api_key_id) }).toEqual({ table, keys: [tenant.keyId] });
    }
    // The swept key no longer authenticates, and its calls read as they did, under its id and name.
    expect((await t.http.get('/v1/projects').set({ Authorization: `Bearer ${agent.key}` })).status).toBe(401);
    const row = await eventually(async () => {
      const res = await t.http.get(`/v1/projects/${projectId}/invocations`).query({ callerKeyId: agent.id }).set(tenant.auth).expect(200);
      expect(res.body.items).toHaveLength(1);
      return res.body.items[0] as { id: string; caller: unknown };
    });
    expect({ id: row.id, caller: row.caller }).toEqual({ id: call.body.invocationId, caller: { keyId: agent.id, name: 'retired-agent' } });
    await t.http.get(`/v1/projects/${projectId}/invocations/${row.id}`).set(tenant.auth).expect(200);
  });

  it('OAuth tokens are not counted as keys: a tenant at its key cap signs a client in and refreshes, keeping 10 ended tokens a consent', async () => {
    const full = await t.createTenant();
    const fullProject = await t.createProject(full);
    await insertKeys(full.id, 998);
    await issue(full.auth).expect(403);
    let { refresh } = await signIn(full, resource.replace(projectId, fullProject.id));
    for (let i = 0; i < 14; i++) {
      const next = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId }).expect(200);
      refresh = next.body.refresh_token as string;
    }
    const tokens = await sql<{ revoked: boolean }>(
      `SELECT k.revoked_at IS NOT NULL AS revoked FROM api_keys k JOIN oauth_grants g ON g.id = k.oauth_grant_id WHERE g.tenant_id = $1`,
      [full.id],
    );
    expect({ live: tokens.filter((row) => !row.revoked).length, ended: tokens.filter((row) => row.revoked).length }).toEqual({
      live: 1,
      ended: 10,
    });
    await issue(full.auth).expect(403);
  });

  it('refuses a consent past 10000 live ones, to decisions racing for the last place, and leaves the refused request pending', async () => {
    const consenting = await t.createTenant();
    const project = await t.createProject(consenting);
    const projectResource = resource.replace(projectId, project.id);
    const grantColumns = `tenant_id, project_id, client_id, client_name, resource, scope, decided_by_key_id, decided_by_role`;
    // 9999 live consents, and ended ones that do not count.
    await sql(
      `INSERT INTO oauth_grants (id, ${grantColumns}, expires_at, revoked_at)
       SELECT gen_random_uuid(), $1, $2, $3, 'Filler', $4, 'mcp', $5, 'admin', CASE WHEN g > 9999 THEN now() - interval '1 day' END, NULL
       FROM generate_series(1, 10050) g`,
      [consenting.id, project.id, clientId, projectResource, consenting.keyId],
    );
    const { verifier, challenge } = pkce();
    const query = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: projectResource,
    };
    const decide = (requestId: string) =>
      t.http.post(`/v1/oauth/requests/${requestId}/decision`).set(consenting.auth).send({ approve: true });
    const first = requestIdOf(await t.http.get('/oauth/authorize').query(query).expect(302));
    const second = requestIdOf(await t.http.get('/oauth/authorize').query(query).expect(302));
    const raced = await Promise.all([decide(first), decide(second)]);
    expect(raced.map((res) => res.status).sort()).toEqual([200, 403]);
    const refused = raced.find((res) => res.status === 403)!;
    expect(refused.body.error.code).toBe('too_many_oauth_consents');
    expect(refused.body.error.details).toEqual({ limit: 10000 });
    // The refused request is still pending: once a consent ends, the person approves it again.
    const pendingId = raced[0].status === 403 ? first : second;
    await t.http.get(`/v1/oauth/requests/${pendingId}`).set(consenting.auth).expect(200);
    await sql(
      `UPDATE oauth_grants SET revoked_at = now() WHERE id = (SELECT id FROM oauth_grants WHERE tenant_id = $1 AND client_name = 'Filler' LIMIT 1)`,
      [consenting.id],
    );
    const approved = await decide(pendingId).expect(200);
    const code = new URL(approved.body.redirectTo as string).searchParams.get('code')!;
    await token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT }).expect(
      200,
    );
    // Another tenant consents as before.
    await signIn();
    await sql(`DELETE FROM oauth_grants WHERE tenant_id = $1 AND client_name = 'Filler'`, [consenting.id]);
  });

  it('sweeps expired authorization requests, spent refresh tokens, ended consents whose tokens are gone, and unused registrations', async () => {
    const sweep = () => t.app.get(OAuthSweep).sweep();
    const ago = (ms: number) => new Date(Date.now() - ms);

    // Authorization requests a day past their end go; a pending one stays.
    const stale = await authorize();
    const pending = await authorize();
    await sql(`UPDATE oauth_requests SET expires_at = $2 WHERE id = $1`, [stale.requestId, ago(DAY + 60_000)]);

    // A consent with its refresh tokens: used ones a day ago go, the current one stays.
    const signedIn = await signIn();
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: signedIn.refresh, client_id: clientId }).expect(200);
    const [grant] = await sql<{ id: string }>(`SELECT oauth_grant_id AS id FROM api_keys WHERE prefix = $1`, [
      (rotated.body.access_token as string).split('_')[1],
    ]);
    await sql(`UPDATE oauth_refresh_tokens SET used_at = $2 WHERE grant_id = $1 AND used_at IS NOT NULL`, [grant.id, ago(DAY + 60_000)]);

    // An ended consent goes 30 days after it ended, once the keys' sweep has taken its access tokens.
    const ended = await signIn();
    const [endedGrant] = await sql<{ id: string }>(`SELECT oauth_grant_id AS id FROM api_keys WHERE prefix = $1`, [
      ended.access.split('_')[1],
    ]);
    const tokenList = (await t.http.get('/v1/api-keys').set(tenant.auth).expect(200)).body.items as Array<{ id: string; prefix: string }>;
    const endedToken = tokenList.find((k) => k.prefix === ended.access.split('_')[1])!;
    await t.http.delete(`/v1/api-keys/${endedToken.id}`).set(tenant.auth).expect(204);
    await sql(`UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1`, [endedGrant.id, ago(31 * DAY)]);

    // Registrations: one nobody consented to, two days old, goes; one with a live consent stays; one with
    // an ended consent stays for a week from its registration.
    const unused = await register();
    const recentEnded = await register();
    await sql(`UPDATE oauth_clients SET created_at = $2 WHERE id = ANY($1)`, [[unused, recentEnded, clientId], ago(2 * DAY)]);
    await sql(
      `INSERT INTO oauth_grants (id, tenant_id, project_id, client_id, client_name, resource, scope, decided_by_key_id, decided_by_role, revoked_at)
       VALUES ($1, $2, $3, $4, 'Ended', $5, 'mcp', $6, 'admin', now())`,
      [randomUUID(), tenant.id, projectId, recentEnded, resource, tenant.keyId],
    );
    const brandNew = await register();

    const first = await sweep();
    expect(first.requests).toBeGreaterThanOrEqual(1);
    expect(first.refreshTokens).toBeGreaterThanOrEqual(1);
    // Its access token is still there (revoked today): the consent waits for the keys' sweep.
    expect(await count(`SELECT count(*) AS n FROM oauth_grants WHERE id = $1`, [endedGrant.id])).toBe(1);
    await backdate(endedToken.id, 'revoked_at', 31 * DAY);
    await t.app.get(ApiKeysSweep).sweep();
    await sweep();

    expect(await count(`SELECT count(*) AS n FROM oauth_requests WHERE id = $1`, [stale.requestId])).toBe(0);
    await t.http.get(`/v1/oauth/requests/${pending.requestId}`).set(tenant.auth).expect(200);
    const refreshRows = await sql<{ used: boolean }>(`SELECT used_at IS NOT NULL AS used FROM oauth_refresh_tokens WHERE grant_id = $1`, [
      grant.id,
    ]);
    expect(refreshRows).toEqual([{ used: false }]);
    await token({ grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token as string, client_id: clientId }).expect(200);
    expect(await count(`SELECT count(*) AS n FROM oauth_grants WHERE id = $1`, [endedGrant.id])).toBe(0);
    expect(await count(`SELECT count(*) AS n FROM oauth_refresh_tokens WHERE grant_id = $1`, [endedGrant.id])).toBe(0);
    const clients = (await sql<{ id: string }>(`SELECT id FROM oauth_clients`)).map((row) => row.id);
    expect(clients).not.toContain(unused);
    expect(clients).toEqual(expect.arrayContaining([clientId, recentEnded, brandNew]));

    // A week after registering, a client whose consents have all ended is forgotten too.
    await sql(`UPDATE oauth_clients SET created_at = $2 WHERE id = $1`, [recentEnded, ago(8 * DAY)]);
    expect((await sweep()).clients).toBe(1);
    expect((await sql<{ id: string }>(`SELECT id FROM oauth_clients WHERE id = $1`, [recentEnded])).length).toBe(0);
  });
});

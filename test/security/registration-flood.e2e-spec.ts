import { createHash, randomBytes } from 'node:crypto';
import { createTestApp, type TestApp } from '../support/test-app.js';

// docs/security-model.md, case 128: client registrations from ever new addresses, no key needed. Each address
// may register RATE_LIMIT_SIGN_IN clients a window; moving to a new one every 30, an outsider registered 412
// clients of 20 KB a second, each kept a day. Past OAUTH_MAX_UNUSED_CLIENTS registrations that never began an
// authorization, the oldest are forgotten; a client that began one is kept, and nothing stops a registration.

const REDIRECT = 'http://127.0.0.1:9/callback';
const MAX_UNUSED = 100;

describe('[sec-128] a flood of OAuth client registrations', () => {
  let t: TestApp;
  let resource: string;

  const register = async (name = 'Flood') =>
    (
      await t.http
        .post('/oauth/register')
        .send({ client_name: name, redirect_uris: [REDIRECT, `${REDIRECT}/${'p'.repeat(1900)}`] })
        .expect(201)
    ).body.client_id as string;
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => t.database.driver.query<T>(text, params);
  const unused = async () =>
    Number(
      (
        await sql<{ n: string }>(
          `SELECT count(*) AS n FROM oauth_clients c WHERE NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = c.id)
             AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)`,
        )
      )[0].n,
    );
  const exists = async (clientId: string) =>
    Number((await sql<{ n: string }>('SELECT count(*) AS n FROM oauth_clients WHERE id = $1', [clientId]))[0].n) === 1;

  beforeAll(async () => {
    t = await createTestApp({ env: { OAUTH_MAX_UNUSED_CLIENTS: String(MAX_UNUSED) } });
    const tenant = await t.createTenant();
    const projectId = (await t.createProject(tenant)).id;
    resource = (await t.http.get(`/.well-known/oauth-protected-resource/v1/projects/${projectId}/mcp`).expect(200)).body.resource as string;
  });
  afterAll(() => t?.close());

  it('[sec-128] keeps at most OAUTH_MAX_UNUSED_CLIENTS registrations that never began an authorization, the newest; one that began stays', async () => {
    const signingIn = await register('Signing in');
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    await t.http
      .get('/oauth/authorize')
      .query({
        response_type: 'code',
        client_id: signingIn,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource,
      })
      .expect(302)
      .expect((res) => expect(new URL(res.headers.location as string).searchParams.get('request')).toEqual(expect.any(String)));
    const first = await register();
    let last = first;
    for (let i = 0; i < MAX_UNUSED * 2; i++) last = await register();

    // Trimmed every MAX_UNUSED / 50 registrations: at most that many past the figure between trims.
    expect(await unused()).toBeGreaterThanOrEqual(MAX_UNUSED);
    expect(await unused()).toBeLessThanOrEqual(MAX_UNUSED + MAX_UNUSED / 50);
    expect(await exists(first)).toBe(false);
    expect(await exists(last)).toBe(true);
    // The client that began its authorization before the flood finishes signing in as ever.
    expect(await exists(signingIn)).toBe(true);
  });
});

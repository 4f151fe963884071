import { randomBytes } from 'node:crypto';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { callTool, httpTool, installSkill, listSkills, Receiver, signatureIsValid, skillOf } from './skill-test-kit.js';

// Skill signing secrets and http executor headers rest sealed (AES-256-GCM, SECRETS_KEY), are opened only
// to make the call, and survive a key rotation; rows stored in clear are sealed at the next start.

const INPUT = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false };
const API_KEY = `upstream-${randomBytes(8).toString('hex')}`;
const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('hex');

interface SkillRow {
  id: string;
  signing_secret: string;
  tools: string;
}

describe('skill secrets at rest', () => {
  let database: TestDatabase;
  let endpoint: Receiver;
  let closeDatabase: () => Promise<void>;

  beforeAll(async () => {
    endpoint = await new Receiver().start();
    endpoint.on('/echo', () => ({ body: JSON.stringify({ ok: true }) }));
    database = await createTestDatabase();
    // The apps of this file share one database across restarts; the file closes it at the end.
    closeDatabase = database.driver.close.bind(database.driver);
    database.driver.close = () => Promise.resolve();
  });
  afterAll(async () => {
    await closeDatabase?.();
    await database?.close();
    await endpoint?.close();
  });

  const start = (env: Record<string, string>) =>
    createTestApp({ database, env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${endpoint.port}`, ...env } });
  const rows = () =>
    database.driver.withSession((s) =>
      s.query<SkillRow>("SELECT id, signing_secret, tools::text AS tools FROM skills WHERE name LIKE 'sealed-%'"),
    );

  async function callsWithTheRealSecrets(t: TestApp, tenant: TestTenant, projectId: string, signingSecret: string) {
    const before = endpoint.requests.length;
    const res = await callTool(t, tenant, projectId, 'echo_up', { q: 'hi' }).expect(200);
    expect(res.body.status).toBe('ok');
    const request = endpoint.requests[before];
    expect(request.headers['x-api-key']).toBe(API_KEY);
    expect(signatureIsValid(signingSecret, request.body, request.headers['x-toolgate-signature'])).toBe(true);
  }

  it('stores the signing secret and header values sealed, shows the headers masked, and sends the real values', async () => {
    const t = await start({ SECRETS_KEY: keyA });
    try {
      const tenant = await t.createTenant();
      const projectId = (await t.createProject(tenant)).id;
      const tool = {
        ...httpTool('echo_up', endpoint.url('/echo'), INPUT),
        executor: { type: 'http', url: endpoint.url('/echo'), headers: { 'x-api-key': API_KEY } },
      };
      const skill = await installSkill(t, tenant, projectId, { ...skillOf([tool]), name: 'sealed-one' });

      const [row] = await rows();
      expect(row.signing_secret).toMatch(/^tgenc:v1:[0-9a-f]{12}:/);
      expect(row.signing_secret).not.toContain(skill.signingSecret);
      expect(row.tools).not.toContain(API_KEY);
      expect(row.tools).toContain('"x-api-key": "tgenc:v1:');

      const listed = await listSkills(t, tenant);
      expect(JSON.stringify(listed)).not.toContain(API_KEY);
      expect(listed.find((s) => s.name === 'sealed-one')).toMatchObject({
        tools: [{ executor: { headers: { 'x-api-key': '[stored encrypted]' } } }],
      });

      await callsWithTheRealSecrets(t, tenant, projectId, skill.signingSecret);
    } finally {
      await t.close();
    }
  });

  it('re-seals under a new key at start-up (the old one in SECRETS_KEY_PREVIOUS), and rows stored in clear too', async () => {
    const [sealedWithA] = await rows();
    // A row from before sealing existed: its secret and header in clear.
    const plainSecret = `tgs_${randomBytes(32).toString('hex')}`;
    const plainTools = JSON.stringify([
      {
        name: 'echo_up',
        description: 'x',
        inputSchema: INPUT,
        executor: { type: 'http', url: endpoint.url('/echo'), headers: { 'x-api-key': API_KEY } },
      },
    ]);
    const tenantRow = await database.driver.withSession((s) =>
      s.query<{ id: string }>(
        "INSERT INTO tenants (id, name, updated_at) VALUES (gen_random_uuid(), 'legacy-" +
          randomBytes(4).toString('hex') +
          "', now()) RETURNING id",
      ),
    );
    await database.driver.withSession((s) =>
      s.query(
        "INSERT INTO skills (id, tenant_id, name, version, description, tools, signing_secret, updated_at) VALUES (gen_random_uuid(), $1, 'sealed-legacy', '1', 'old', $2::jsonb, $3, now())",
        [tenantRow[0].id, plainTools, plainSecret],
      ),
    );

    const t = await start({ SECRETS_KEY: keyB, SECRETS_KEY_PREVIOUS: keyA });
    try {
      const after = await rows();
      expect(after).toHaveLength(2);
      const kids = new Set(after.map((row) => row.signing_secret.split(':')[2]));
      expect(kids.size).toBe(1);
      expect(sealedWithA.signing_secret.split(':')[2]).not.toBe([...kids][0]);
      for (const row of after) {
        expect(row.signing_secret).not.toContain(plainSecret);
        expect(row.tools).not.toContain(API_KEY);
      }
      expect(t.logs.some((line) => /Sealed the secrets of 2 skill/.test(String(line.msg)))).toBe(true);
    } finally {
      await t.close();
    }

    // Key A is gone for good now: everything opens with B alone, and the calls still carry the real values.
    const again = await start({ SECRETS_KEY: keyB });
    try {
      const tenant = await again.createTenant();
      const projectId = (await again.createProject(tenant)).id;
      const tool = {
        ...httpTool('echo_up', endpoint.url('/echo'), INPUT),
        executor: { type: 'http', url: endpoint.url('/echo'), headers: { 'x-api-key': API_KEY } },
      };
      const skill = await installSkill(again, tenant, projectId, { ...skillOf([tool]), name: 'sealed-two' });
      await callsWithTheRealSecrets(again, tenant, projectId, skill.signingSecret);
      expect(again.logs.some((line) => /cannot be opened/.test(String(line.msg)))).toBe(false);
    } finally {
      await again.close();
    }
  });

  it('names the skill and the fix when its secrets were sealed with a key no longer configured', async () => {
    const t = await start({ SECRETS_KEY: randomBytes(32).toString('base64') });
    try {
      const unreadable = t.logs.filter((line) => /cannot be opened/.test(String(line.msg)));
      expect(unreadable.length).toBe(3);
      expect(String(unreadable[0].msg)).toContain('SECRETS_KEY_PREVIOUS');
    } finally {
      await t.close();
    }
  });
});

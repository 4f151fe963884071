import { randomBytes } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { SKILL_CHANGES_MAX_BYTES, SKILL_MAX_BYTES, SKILL_MAX_TOOLS } from '../../../src/skills/skills.limits.js';
import { PrismaService } from '../../../src/database/prisma.service.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { UpstreamMcpServer } from '../mcp/upstream-mcp-server.js';
import { postSkill, uniqueName } from './skill-test-kit.js';

interface Change {
  id: string;
  tool: string;
  kind: string;
  status: string;
}

const tool = (name: string, description = `Tool ${name}`): Tool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
});

// An upstream is the tenant's choice, and every read of it may raise changes for review. Without bounds, one
// that renamed its tools, or flipped a large description back and forth, added rows on every read for as long
// as the skill existed; and accepting what it added grew a skill past what a registration may hold.
describe("A skill's review queue", () => {
  let t: TestApp;
  let tenant: TestTenant;
  const upstream = new UpstreamMcpServer([tool('base')]);

  const changes = async (skillId: string, status = 'pending'): Promise<Change[]> =>
    (await t.http.get(`/v1/skills/${skillId}/changes?status=${status}`).set(tenant.auth).expect(200)).body.items as Change[];
  const refresh = (skillId: string) => t.http.post(`/v1/skills/${skillId}/refresh`).set(tenant.auth).expect(200);
  const queueBytes = async (skillId: string) => {
    const [row] = await t.app.get(PrismaService).$queryRaw<Array<{ bytes: bigint | null; rows: bigint }>>`
      SELECT sum(coalesce(octet_length(previous::text), 0) + coalesce(octet_length(proposed::text), 0) + octet_length(diff::text) + octet_length(flags::text)) AS bytes,
             count(*) AS rows FROM skill_tool_changes WHERE skill_id = ${skillId}::uuid`;
    return { bytes: Number(row.bytes ?? 0), rows: Number(row.rows) };
  };
  const importSkill = async () => {
    upstream.tools = [tool('base')];
    const imported = await postSkill(t, tenant, {
      name: uniqueName('queue'),
      version: '1.0.0',
      description: 'An upstream that keeps changing',
      source: { type: 'mcp', url: upstream.url },
    });
    expect(imported.status).toBe(201);
    return imported.body.id as string;
  };

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}`, MCP_SOURCE_REFRESH_S: '0' } });
    tenant = await t.createTenant();
  });
  afterAll(async () => {
    await t.close();
    await upstream.stop();
  });

  it('supersedes a pending added tool the upstream no longer offers, and raises no more added tools than a skill may hold', async () => {
    const skillId = await importSkill();
    // Renaming its extra tools on every read: each read's names replace the last's instead of piling up.
    for (let round = 0; round < 3; round++) {
      upstream.tools = [tool('base'), ...Array.from({ length: 40 }, (_, i) => tool(`r${round}_${i}`))];
      await refresh(skillId);
      const pending = await changes(skillId);
      expect(pending).toHaveLength(40);
      expect(pending.every((c) => c.kind === 'added' && c.tool.startsWith(`r${round}_`))).toBe(true);
    }
    expect((await changes(skillId, 'superseded')).length).toBe(80);
    // Offering more than a skill may hold: only what could still be accepted is raised.
    upstream.tools = [tool('base'), ...Array.from({ length: 300 }, (_, i) => tool(`many_${i}`))];
    await refresh(skillId);
    expect(await changes(skillId)).toHaveLength(SKILL_MAX_TOOLS - 1);
  });

  it('keeps the queue within its bytes, dropping decided changes oldest first to make room for a new one', async () => {
    const skillId = await importSkill();
    // 40 KiB descriptions the database cannot compress, flipped back and forth: each flip raises a change,
    // each flip back supersedes it.
    const big = (n: number) => tool('base', `${n} ${randomBytes(30 * 1024).toString('base64')}`);
    for (let n = 0; n < 60; n++) {
      upstream.tools = [big(n)];
      await refresh(skillId);
      upstream.tools = [tool('base')];
      await refresh(skillId);
      const { bytes } = await queueBytes(skillId);
      expect(bytes).toBeLessThanOrEqual(SKILL_CHANGES_MAX_BYTES);
    }
    const kept = await changes(skillId, 'superseded');
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(60);
    // The newest are the ones kept.
    upstream.tools = [big(1000)];
    const raised = (await refresh(skillId)).body.pending as Change[];
    expect(raised).toHaveLength(1);
    expect(await changes(skillId)).toHaveLength(1);
  }, 120_000);

  // Counted as JSON text, not as stored: text the database compresses well took 24 times the queue's bytes
  // to list.
  it('keeps the queue within its bytes as listed, however well the database compresses them', async () => {
    const skillId = await importSkill();
    const dense = (n: number) => tool('base', `${n} ${'中'.repeat(20_000)}`);
    for (let n = 0; n < 40; n++) {
      upstream.tools = [dense(n)];
      await refresh(skillId);
      upstream.tools = [tool('base')];
      await refresh(skillId);
    }
    const listing = await t.http.get(`/v1/skills/${skillId}/changes?status=all`).set(tenant.auth).expect(200);
    expect(Buffer.byteLength(JSON.stringify(listing.body))).toBeLessThan(SKILL_CHANGES_MAX_BYTES * 1.2);
    expect((await queueBytes(skillId)).bytes).toBeLessThanOrEqual(SKILL_CHANGES_MAX_BYTES);
  }, 120_000);

  it('refuses to accept an added tool that would take the skill past its bytes, and leaves the change pending', async () => {
    // A tool's schema is stored twice (served, and pinned as reviewed): 20 tools of 4,000 bytes come to about 180 KB.
    // Descriptions of 1,000 characters each: longer ones are flagged for review at import.
    const padded = (name: string, bytes: number): Tool => ({
      name,
      description: `Tool ${name}`,
      inputSchema: {
        type: 'object',
        properties: Object.fromEntries(
          Array.from({ length: Math.ceil(bytes / 1000) }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(1000) }]),
        ),
        additionalProperties: false,
      },
    });
    upstream.tools = Array.from({ length: 20 }, (_, i) => padded(`t${i}`, 4000));
    const imported = await postSkill(t, tenant, {
      name: uniqueName('full'),
      version: '1.0.0',
      description: 'A skill near its bytes',
      source: { type: 'mcp', url: upstream.url },
    });
    expect(imported.status).toBe(201);
    const skillId = imported.body.id as string;
    upstream.tools = [...upstream.tools, padded('big', 48_000)];
    await refresh(skillId);
    const [added] = await changes(skillId);
    expect(added).toMatchObject({ kind: 'added', tool: 'big' });
    const refused = await t.http.post(`/v1/skills/${skillId}/changes/${added.id}/accept`).set(tenant.auth).expect(413);
    expect(refused.body.error).toMatchObject({ code: 'skill_too_large', details: { limit: SKILL_MAX_BYTES } });
    expect(await changes(skillId)).toEqual([added]);
    const skill = (await t.http.get(`/v1/skills/${skillId}`).set(tenant.auth).expect(200)).body as { tools: unknown[] };
    expect(skill.tools).toHaveLength(20);
  }, 60_000);
});

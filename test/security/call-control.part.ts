import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

describe('call control', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const project = async (body: Record<string, unknown> = {}) => {
    const { id } = await t.createProject(tenant, body);
    return { id, dir: t.workspaceOf(id) };
  };
  const files = (dir: string) => readdir(dir).then((names) => names.sort());

  it('[sec-59] refuses the same Idempotency-Key with a different body, and the tool does not run', async () => {
    const p = await project();
    const send = (content: string) =>
      t.http
        .post(`/v1/projects/${p.id}/tools/write_file/invoke`)
        .set(tenant.auth)
        .set('Idempotency-Key', 'one-key')
        .send({ arguments: { path: 'f.txt', content } });
    await send('first').expect(200);
    const reused = await send('second');
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    expect(await readFile(path.join(p.dir, 'f.txt'), 'utf8')).toBe('first');
  });

  describe('[sec-60] calls that need approval', () => {
    const APPROVAL_TIMEOUT_MS = 4000;
    let short: TestApp;
    beforeAll(async () => {
      short = await createTestApp({ env: { APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS) } });
    });
    afterAll(() => short.close());

    it('[sec-60] runs nothing until approved; a denied or expired call never runs; another tenant cannot approve', async () => {
      const owner = await short.createTenant();
      const intruder = await short.createTenant();
      const { id: projectId } = await short.createProject(owner, {
        shellEnabled: true,
        shellAllowlist: ['sh'],
        approvalRequired: ['shell_exec'],
      });
      const { id: intruderProject } = await short.createProject(intruder);
      const dir = short.workspaceOf(projectId);
      const park = async (marker: string) => {
        const res = await short.http
          .post(`/v1/projects/${projectId}/tools/shell_exec/invoke`)
          .set(owner.auth)
          .send({ arguments: { argv: ['sh', '-c', `echo ran > ${marker}`] } });
        expect(res.status).toBe(202);
        return res.body.invocationId as string;
      };
      const decide = (project: string, id: string, decision: string, auth = owner.deciderAuth) =>
        short.http.post(`/v1/projects/${project}/invocations/${id}/${decision}`).set(auth).send({});

      const approved = await park('approved');
      const denied = await park('denied');
      const expired = await park('expired');
      // It expires APPROVAL_TIMEOUT_MS after it parked: long enough for the decisions below on a loaded machine.
      const expiresAt = Date.now() + APPROVAL_TIMEOUT_MS;
      const stolen = await park('stolen');
      expect(await files(dir)).toEqual([]);

      for (const [project, auth] of [
        [projectId, intruder.deciderAuth],
        [intruderProject, intruder.deciderAuth],
      ] as const) {
        expect((await decide(project, stolen, 'approve', auth)).status).toBe(404);
        expect((await decide(project, stolen, 'deny', auth)).status).toBe(404);
      }
      await decide(projectId, approved, 'approve').expect(200);
      await decide(projectId, denied, 'deny').expect(200);
      await new Promise((r) => setTimeout(r, Math.max(0, expiresAt + 300 - Date.now())));
      expect((await decide(projectId, expired, 'approve')).status).toBe(409);
      expect((await decide(projectId, denied, 'approve')).status).toBe(409);
      expect(await files(dir)).toEqual(['approved']);
    });
  });

  it('[sec-61] answers each of 32 calls on its own, never runs the invalid ones, and refuses 33 calls before running any', async () => {
    const p = await project();
    const calls = Array.from({ length: 32 }, (_, i) =>
      i % 4 === 0
        ? { id: `c${i}`, tool: 'write_file', arguments: { path: `bad-${i}.txt`, content: { not: 'a string' } } }
        : { id: `c${i}`, tool: 'write_file', arguments: { path: `good-${i}.txt`, content: String(i) } },
    );
    const res = await t.http.post(`/v1/projects/${p.id}/tools/batch`).set(tenant.auth).send({ calls }).expect(200);
    expect(res.body.results).toHaveLength(32);
    res.body.results.forEach((r: { id: string; status: string }, i: number) => {
      expect(r.id).toBe(`c${i}`);
      expect(r.status).toBe(i % 4 === 0 ? 'invalid_arguments' : 'ok');
    });
    expect(await files(p.dir)).toEqual(
      calls
        .filter((_, i) => i % 4 !== 0)
        .map((c) => c.arguments.path)
        .sort(),
    );

    const q = await project();
    const tooMany = Array.from({ length: 33 }, (_, i) => ({
      id: `c${i}`,
      tool: 'write_file',
      arguments: { path: `f${i}.txt`, content: 'x' },
    }));
    const refused = await t.http.post(`/v1/projects/${q.id}/tools/batch`).set(tenant.auth).send({ calls: tooMany });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('batch_too_large');
    expect(await files(q.dir)).toEqual([]);
  });
});

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
    return { id, dir: path.join(t.config.workspace.root!, id) };
  };
  const files = (dir: string) => readdir(dir).then((names) => names.sort());

  it('[sec-59] refuses the same Idempotency-Key with a different body, and the tool does not run', async () => {
    const p = await project();
    const send = (content: string) =>
      t.http.post(`/v1/projects/${p.id}/tools/write_file/invoke`).set(tenant.auth).set('Idempotency-Key', 'one-key').send({ arguments: { path: 'f.txt', content } });
    await send('first').expect(200);
    const reused = await send('second');
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    expect(await readFile(path.join(p.dir, 'f.txt'), 'utf8')).toBe('first');
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
    expect(await files(p.dir)).toEqual(calls.filter((_, i) => i % 4 !== 0).map((c) => c.arguments.path).sort());

    const q = await project();
    const tooMany = Array.from({ length: 33 }, (_, i) => ({ id: `c${i}`, tool: 'write_file', arguments: { path: `f${i}.txt`, content: 'x' } }));
    const refused = await t.http.post(`/v1/projects/${q.id}/tools/batch`).set(tenant.auth).send({ calls: tooMany });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('batch_too_large');
    expect(await files(q.dir)).toEqual([]);
  });
});

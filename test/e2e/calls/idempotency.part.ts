import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { SHELL_PROJECT } from '../tools/tool-test-kit.js';

describe('idempotency keys', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const project = async (body: Record<string, unknown> = {}, owner = tenant) => {
    const { id } = await t.createProject(owner, body);
    return { id, dir: t.workspaceOf(id) };
  };
  const invoke = (projectId: string, tool: string, body: object, key?: string, owner = tenant) => {
    const req = t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(owner.auth);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const auditRows = async (projectId: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200)).body.items as Array<{
      id: string;
      status: string;
    }>;

  it('replays the stored answer of a write_file and does not write again, even after the file was changed by hand', async () => {
    const p = await project();
    const body = { arguments: { path: 'notes.txt', content: 'from the model' } };
    const first = await invoke(p.id, 'write_file', body, 'write-1').expect(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    await writeFile(path.join(p.dir, 'notes.txt'), 'edited by hand');

    const again = await invoke(p.id, 'write_file', body, 'write-1').expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await readFile(path.join(p.dir, 'notes.txt'), 'utf8')).toBe('edited by hand');
    expect((await auditRows(p.id)).map((r) => r.id)).toEqual([first.body.invocationId]);

    // The same call without a key is a new call.
    await invoke(p.id, 'write_file', body).expect(200);
    expect(await readFile(path.join(p.dir, 'notes.txt'), 'utf8')).toBe('from the model');
  });

  it('treats the arguments as the same call whatever their key order or spelling as a JSON string', async () => {
    const p = await project();
    const first = await invoke(p.id, 'write_file', { arguments: { path: 'a.txt', content: 'x' } }, 'order').expect(200);
    const again = await invoke(p.id, 'write_file', { arguments: { content: 'x', path: 'a.txt' } }, 'order').expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.invocationId).toBe(first.body.invocationId);
  });

  it('keeps each API key its own keys: another key of the tenant neither replays, nor pre-claims, nor sees a 422', async () => {
    const p = await project();
    const made = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ name: 'narrow', role: 'agent', projectIds: [p.id], tools: ['list_files'] })
      .expect(201);
    const narrow = { ...tenant, auth: { Authorization: `Bearer ${made.body.key as string}` } };
    const list = { arguments: { path: '.' } };
    const planted = await invoke(p.id, 'list_files', list, 'shared-42', narrow).expect(200);
    await writeFile(path.join(p.dir, 'later.txt'), 'x');
    // The admin key's call with the same key runs: it sees the new file, not the narrow key's answer.
    const own = await invoke(p.id, 'list_files', list, 'shared-42').expect(200);
    expect(own.headers['idempotent-replayed']).toBeUndefined();
    expect(own.body.invocationId).not.toBe(planted.body.invocationId);
    expect(JSON.stringify(own.body.result)).toContain('later.txt');
    // A different call under a key the other API key used is no reuse either.
    await invoke(p.id, 'write_file', { arguments: { path: 'b.txt', content: 'y' } }, 'shared-42', narrow).expect(404);
    const write = await invoke(p.id, 'write_file', { arguments: { path: 'b.txt', content: 'y' } }, 'shared-43').expect(200);
    const narrowReuse = await invoke(p.id, 'list_files', list, 'shared-43', narrow).expect(200);
    expect(narrowReuse.headers['idempotent-replayed']).toBeUndefined();
    expect(narrowReuse.body.invocationId).not.toBe(write.body.invocationId);
    // Each key still replays its own.
    const replay = await invoke(p.id, 'list_files', list, 'shared-42', narrow).expect(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.invocationId).toBe(planted.body.invocationId);
  });

  it('refuses the same key with another body (422 idempotency_key_reused) and does not run it', async () => {
    const p = await project();
    await invoke(p.id, 'write_file', { arguments: { path: 'a.txt', content: 'first' } }, 'k').expect(200);
    const reused = await invoke(p.id, 'write_file', { arguments: { path: 'a.txt', content: 'second' } }, 'k');
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    const otherTool = await invoke(p.id, 'delete_file', { arguments: { path: 'a.txt' } }, 'k');
    expect(otherTool.status).toBe(422);
    expect(await readFile(path.join(p.dir, 'a.txt'), 'utf8')).toBe('first');
  });

  it('[sec-109] replays a key only to the end user it was first sent for: another user with the same key gets 422 and nothing runs', async () => {
    const p = await project();
    const agent = (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'assistant', role: 'agent', projectIds: [p.id], actAsUsers: true })
        .expect(201)
    ).body.key as string;
    const asUser = (user: string, content: string) =>
      t.http
        .post(`/v1/projects/${p.id}/tools/write_file/invoke`)
        .set({ Authorization: `Bearer ${agent}`, 'Toolgate-User': user, 'Idempotency-Key': 'per-user' })
        .send({ arguments: { path: 'who.txt', content } });
    const alice = await asUser('alice', 'alice wrote this').expect(200);
    const bob = await asUser('bob', 'alice wrote this');
    expect(bob.status).toBe(422);
    expect(bob.body.error.code).toBe('idempotency_key_reused');
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    const again = await asUser('alice', 'alice wrote this').expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.invocationId).toBe(alice.body.invocationId);
    expect(await readFile(path.join(p.dir, 'who.txt'), 'utf8')).toBe('alice wrote this');
  });

  it('runs a call once when two requests with one key arrive together: the second waits and gets the same answer', async () => {
    const p = await project(SHELL_PROJECT);
    const body = { arguments: { argv: ['sh', '-c', 'echo ran >> count.txt; sleep 1'] } };
    const [a, b] = await Promise.all([invoke(p.id, 'shell_exec', body, 'together'), invoke(p.id, 'shell_exec', body, 'together')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.status).toBe('ok');
    expect(b.body).toEqual(a.body);
    expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].filter(Boolean)).toEqual(['true']);
    expect(await readFile(path.join(p.dir, 'count.txt'), 'utf8')).toBe('ran\n');
  });

  it('stores no answer for a refused call: the key is free for the corrected call', async () => {
    const p = await project();
    const refused = await invoke(p.id, 'write_file', { arguments: { path: 'a.txt', content: 7 } }, 'fix-me');
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('invalid_arguments');
    const fixed = await invoke(p.id, 'write_file', { arguments: { path: 'a.txt', content: 'seven' } }, 'fix-me').expect(200);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    expect(await readFile(path.join(p.dir, 'a.txt'), 'utf8')).toBe('seven');
  });

  it('keeps keys per call in a batch, and marks a replayed result', async () => {
    const p = await project();
    const calls = [
      { id: 'w', tool: 'write_file', arguments: { path: 'b.txt', content: 'batch' }, idempotencyKey: 'batch-w' },
      { id: 'plain', tool: 'write_file', arguments: { path: 'c.txt', content: 'plain' } },
    ];
    const first = await t.http.post(`/v1/projects/${p.id}/tools/batch`).set(tenant.auth).send({ calls }).expect(200);
    await writeFile(path.join(p.dir, 'b.txt'), 'by hand');
    await writeFile(path.join(p.dir, 'c.txt'), 'by hand');
    const again = await t.http.post(`/v1/projects/${p.id}/tools/batch`).set(tenant.auth).send({ calls }).expect(200);
    expect(again.body.results[0]).toEqual({ ...first.body.results[0], replayed: true });
    expect(again.body.results[1].replayed).toBeUndefined();
    expect(await readFile(path.join(p.dir, 'b.txt'), 'utf8')).toBe('by hand');
    expect(await readFile(path.join(p.dir, 'c.txt'), 'utf8')).toBe('plain');
  });

  it('refuses a key that is not 1-255 visible ASCII characters', async () => {
    const p = await project();
    for (const key of ['has space', 'x'.repeat(256), 'clé']) {
      const res = await invoke(p.id, 'write_file', { arguments: { path: 'a.txt', content: 'x' } }, key);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_idempotency_key');
    }
  });

  it("scopes keys to the tenant and project: another tenant's key of the same name is its own", async () => {
    const mine = await project();
    const other = await t.createTenant();
    const theirs = await project({}, other);
    const body = { arguments: { path: 'a.txt', content: 'x' } };
    const first = await invoke(mine.id, 'write_file', body, 'shared-name').expect(200);
    const foreign = await invoke(theirs.id, 'write_file', body, 'shared-name', other).expect(200);
    expect(foreign.headers['idempotent-replayed']).toBeUndefined();
    expect(foreign.body.invocationId).not.toBe(first.body.invocationId);
    // Another tenant naming my project with my key learns nothing: 404, as without a key.
    const probe = await invoke(mine.id, 'write_file', body, 'shared-name', other);
    expect(probe.status).toBe(404);
    expect(probe.body.error.code).toBe('project_not_found');
  });

  describe('with a short wait', () => {
    let short: TestApp;
    beforeAll(async () => {
      short = await createTestApp({ env: { IDEMPOTENCY_WAIT_MS: '100' } });
    });
    afterAll(() => short.close());

    it('answers 409 idempotency_in_progress with Retry-After while the first request still runs, then replays', async () => {
      const owner = await short.createTenant();
      const { id } = await short.createProject(owner, SHELL_PROJECT);
      const call = () =>
        short.http
          .post(`/v1/projects/${id}/tools/shell_exec/invoke`)
          .set(owner.auth)
          .set('Idempotency-Key', 'slow')
          .send({ arguments: { argv: ['sleep', '1'] } });
      const first = call().then((r) => r);
      await new Promise((r) => setTimeout(r, 300));
      const busy = await call();
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('idempotency_in_progress');
      expect(busy.headers['retry-after']).toBe('1');
      const done = await first;
      const replay = await call().expect(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(done.body);
    });
  });
});

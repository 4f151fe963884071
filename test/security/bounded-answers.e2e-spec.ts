import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { ADMIN_TOKEN } from '../support/test-app.js';
import { expectRefusal, invoke } from './security-helpers.js';

// docs/security-model.md, case 106: answers that would hold the service's memory. A batch's results together
// stop at RESPONSE_MAX_BYTES (each result past it says result_too_large, its id and invocation kept), and a
// client that reads its answer slower than RESPONSE_MIN_READ_BYTES_PER_S over RESPONSE_READ_WINDOW_S is
// closed, so the answer it held is freed.

const MiB = 1024 * 1024;

// A POST sent on a connection of its own whose answer is not read: the connection pauses at the first chunk
// of the answer (`head`: the status line's first bytes), so the rest waits in the kernel's buffers and the
// service's.
async function unreadRequest(
  port: number,
  request: { path: string; body: string; headers: Record<string, string> },
): Promise<{ socket: net.Socket; head: Promise<string> }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const head = new Promise<string>((resolve) =>
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve(chunk.toString('latin1', 0, 12));
    }),
  );
  await new Promise((resolve) => socket.once('connect', resolve));
  const headers = Object.entries({
    ...request.headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(request.body),
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST ${request.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}\r\n${request.body}`);
  return { socket, head };
}

describe('[sec-106] bounded answers', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        RESPONSE_MAX_BYTES: String(MiB),
        READ_FILE_MAX_BYTES: String(4 * MiB),
        RESPONSE_MIN_READ_BYTES_PER_S: '65536',
        RESPONSE_READ_WINDOW_S: '1',
      },
    });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.workspaceOf(projectId), 'quarter.txt'), 'q'.repeat(256 * 1024));
    await writeFile(path.join(t.workspaceOf(projectId), 'big.txt'), 'b'.repeat(4 * MiB));
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it("holds a batch's answers together to RESPONSE_MAX_BYTES: the results past it say result_too_large", async () => {
    const calls = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, tool: 'read_file', arguments: { path: 'quarter.txt' } }));
    const res = await t.http.post(`/v1/projects/${projectId}/tools/batch`).set(tenant.auth).send({ calls }).expect(200);
    expect(res.text.length).toBeLessThanOrEqual(MiB + 64 * 1024);
    const results = res.body.results as Array<{
      id: string;
      status: string;
      invocationId?: string;
      error?: { code: string; message: string };
    }>;
    const kept = results.filter((r) => r.status === 'ok');
    const dropped = results.filter((r) => r.error?.code === 'result_too_large');
    // Three of 256 KiB fit in 1 MiB with their envelopes, a fourth does not.
    expect(kept).toHaveLength(3);
    expect(dropped).toHaveLength(7);
    expect(dropped[0].error!.message).toMatch(/ran \(ok\).*RESPONSE_MAX_BYTES \(1 MiB\)/);
    // Each keeps its id and the audit row of what it did.
    expect(new Set(results.map((r) => r.id)).size).toBe(10);
    expect(dropped.every((r) => typeof r.invocationId === 'string')).toBe(true);
    // The audit says so: the rows of the dropped results carry result_too_large (their status stays what the
    // call did, since its effects happened), those that were delivered carry no error.
    const rows = (
      await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'read_file', limit: 100 }).set(tenant.auth).expect(200)
    ).body.items as Array<{
      id: string;
      status: string;
      errorCode: string | null;
      errorMessage: string | null;
    }>;
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const r of dropped) {
      expect(byId.get(r.invocationId!)).toMatchObject({
        status: 'ok',
        errorCode: 'result_too_large',
        errorMessage: expect.stringMatching(/not delivered.*RESPONSE_MAX_BYTES/),
      });
    }
    for (const r of kept) expect(byId.get(r.invocationId!)).toMatchObject({ status: 'ok', errorCode: null });
  });

  it('closes a client that reads a large answer slower than the floor, and keeps answering others', async () => {
    // 16 reads of 4 MiB: far more than the loopback's socket buffers take, so most of it waits in the service.
    const big = await createTestApp({
      env: {
        RESPONSE_MAX_BYTES: String(128 * MiB),
        READ_FILE_MAX_BYTES: String(4 * MiB),
        RESPONSE_MIN_READ_BYTES_PER_S: '65536',
        RESPONSE_READ_WINDOW_S: '1',
      },
    });
    try {
      const owner = await big.createTenant();
      const project = (await big.createProject(owner)).id;
      await writeFile(path.join(big.workspaceOf(project), 'big.txt'), 'b'.repeat(4 * MiB));
      const body = JSON.stringify({
        calls: Array.from({ length: 16 }, (_, i) => ({ id: `b${i}`, tool: 'read_file', arguments: { path: 'big.txt' } })),
      });
      // Reads nothing: its kernel buffers fill, and the rest of the answer waits in the service.
      const { socket } = await unreadRequest(big.port, { path: `/v1/projects/${project}/tools/batch`, body, headers: owner.auth });
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      const server = big.app.getHttpServer() as Server;
      const connections = () => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));
      const started = Date.now();
      // The service's side: the connection is gone once the floor has judged it.
      while ((await connections()) > 0) {
        if (Date.now() - started > 30_000) throw new Error('the slow reader is still connected after 30 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const heldMs = Date.now() - started;
      // The client's side: it was reset, and learns so as soon as it reads.
      socket.resume();
      await closed;
      const received = socket.bytesRead;
      process.stderr.write(
        `[sec-106] a client reading nothing was closed after ${heldMs} ms, having taken ${received} bytes of a 64 MiB answer\n`,
      );
      // Building the 64 MiB answer takes seconds on a busy machine; the floor judges it within two windows after.
      expect(heldMs).toBeLessThan(30_000);
      await big.http.get('/health/live').expect(200);
      expect((await invoke(big, owner, project, 'read_file', { path: 'big.txt', limit: 1 })).body).toMatchObject({ status: 'ok' });
    } finally {
      await big.close();
    }
  }, 60_000);

  it("holds a tenant's unread answers at unreadAnswerBytes: its next request is refused (429) until its clients read, another tenant's is answered", async () => {
    // The floor never closes these readers (1 B/s over 60 s): only the budget holds them.
    const app = await createTestApp({
      env: {
        RESPONSE_MAX_BYTES: String(128 * MiB),
        READ_FILE_MAX_BYTES: String(8 * MiB),
        RESPONSE_MIN_READ_BYTES_PER_S: '1',
        RESPONSE_READ_WINDOW_S: '60',
      },
    });
    const readers: net.Socket[] = [];
    try {
      const spender = await app.createTenant();
      const other = await app.createTenant();
      await app.setBudgets(spender, { unreadAnswerBytes: 20 * MiB });
      const project = (await app.createProject(spender)).id;
      const otherProject = (await app.createProject(other)).id;
      await writeFile(path.join(app.workspaceOf(project), 'big.txt'), 'b'.repeat(8 * MiB));
      await writeFile(path.join(app.workspaceOf(otherProject), 'small.txt'), 'small');
      const unread = async () =>
        (
          (await app.http.get(`/v1/admin/tenants/${spender.id}/usage`).set('Authorization', `Bearer ${ADMIN_TOKEN}`).expect(200)).body as {
            usage: { unreadAnswerBytes: number };
          }
        ).usage.unreadAnswerBytes;
      // An 8 MiB answer on a connection that reads nothing: the loopback's socket buffers take a little of it,
      // the rest waits in the service. In turn a single call (the answer in the connection's write buffer) and
      // a batch (its results handed over one at a time as the client reads, held by the route meanwhile).
      const single = { path: `/v1/projects/${project}/tools/read_file/invoke`, body: JSON.stringify({ arguments: { path: 'big.txt' } }) };
      const batch = {
        path: `/v1/projects/${project}/tools/batch`,
        body: JSON.stringify({ calls: [{ id: 'b', tool: 'read_file', arguments: { path: 'big.txt' } }] }),
      };
      const slowReader = async (request: { path: string; body: string }) => {
        readers.push((await unreadRequest(app.port, { ...request, headers: spender.auth })).socket);
      };
      const before = await unread();
      expect(before).toBe(0);
      let peak = 0;
      let refusedAfter = 0;
      for (let readerCount = 1; readerCount <= 6 && refusedAfter === 0; readerCount++) {
        const was = await unread();
        await slowReader(readerCount % 2 === 1 ? single : batch);
        // Its answer is written once the batch has run.
        const started = Date.now();
        let now = was;
        while (now <= was && Date.now() - started < 20_000) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          now = await unread();
        }
        peak = Math.max(peak, now);
        const probe = await invoke(app, spender, project, 'read_file', { path: 'big.txt', limit: 1 });
        if (probe.status === 429) {
          const refusal = expectRefusal(probe, 429, 'tenant_budget_exceeded');
          expect(probe.body.error.details).toMatchObject({ budget: 'unreadAnswerBytes', limit: 20 * MiB, asked: 0 });
          expect(refusal.message).toMatch(/unreadAnswerBytes budget is 20 MiB; .* is in use\. Read the answers/);
          expect(probe.headers['retry-after']).toBe('1');
          refusedAfter = readerCount;
        } else expect(probe.body).toMatchObject({ status: 'ok' });
      }
      process.stderr.write(
        `[sec-106] unread answers: refused after ${refusedAfter} connections left 8 MiB answers unread, holding ${(peak / MiB).toFixed(1)} MiB (budget 20 MiB)\n`,
      );
      // Answered while under the budget (8 and 16 MiB unread), refused at the third answer (24 MiB and the
      // answers' envelopes, less what the loopback's buffers took).
      expect(refusedAfter).toBe(3);
      expect(peak).toBeGreaterThanOrEqual(20 * MiB);
      expect(peak).toBeLessThanOrEqual(24 * MiB + 3 * 1024);
      // Whatever route: a listing is refused as well, and no reader was added meanwhile.
      expectRefusal(await app.http.get('/v1/projects').set(spender.auth), 429, 'tenant_budget_exceeded');
      // Another tenant is answered meanwhile.
      expect((await invoke(app, other, otherProject, 'read_file', { path: 'small.txt' })).body).toMatchObject({ status: 'ok' });
      // Its clients go away: the memory is given back and its calls are answered again.
      for (const socket of readers.splice(0)) socket.destroy();
      const closing = Date.now();
      while ((await unread()) > 0 && Date.now() - closing < 10_000) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await unread()).toBe(0);
      expect((await invoke(app, spender, project, 'read_file', { path: 'big.txt', limit: 1 })).body).toMatchObject({ status: 'ok' });
    } finally {
      for (const socket of readers) socket.destroy();
      await app.close();
    }
  }, 90_000);

  it("counts a batch's results held while its other calls run: past unreadAnswerBytes its later calls say rate_limited", async () => {
    const app = await createTestApp({
      env: { RESPONSE_MAX_BYTES: String(128 * MiB), READ_FILE_MAX_BYTES: String(MiB), BATCH_CONCURRENCY: '2' },
    });
    try {
      const spender = await app.createTenant();
      await app.setBudgets(spender, { unreadAnswerBytes: 8 * MiB });
      const project = (await app.createProject(spender)).id;
      await writeFile(path.join(app.workspaceOf(project), 'one.txt'), 'm'.repeat(MiB - 1024));
      const calls = Array.from({ length: 32 }, (_, i) => ({ id: `m${i}`, tool: 'read_file', arguments: { path: 'one.txt' } }));
      const res = await app.http.post(`/v1/projects/${project}/tools/batch`).set(spender.auth).send({ calls }).expect(200);
      const results = res.body.results as Array<{ status: string; error?: { code: string; details?: { budget: string } } }>;
      const kept = results.filter((r) => r.status === 'ok');
      const refused = results.filter((r) => r.status === 'rate_limited');
      process.stderr.write(
        `[sec-106] a batch of 32 reads of 1 MiB at unreadAnswerBytes 8 MiB: ${kept.length} answered, ${refused.length} refused\n`,
      );
      // Eight results fill the budget; the two calls running then (BATCH_CONCURRENCY) may still finish.
      expect(kept.length).toBeGreaterThanOrEqual(8);
      expect(kept.length).toBeLessThanOrEqual(10);
      expect(kept.length + refused.length).toBe(32);
      for (const r of refused) expect(r.error).toMatchObject({ code: 'tenant_budget_exceeded', details: { budget: 'unreadAnswerBytes' } });
      // Once answered, nothing is held: the next batch runs.
      expect((await invoke(app, spender, project, 'read_file', { path: 'one.txt', limit: 1 })).body).toMatchObject({ status: 'ok' });
    } finally {
      await app.close();
    }
  }, 60_000);

  it('holds a replay of a stored answer to concurrentCalls and unreadAnswerBytes, as a call that runs', async () => {
    const slow = http.createServer((_req, res) => setTimeout(() => res.end('late'), 3_000));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowPort = (slow.address() as AddressInfo).port;
    const app = await createTestApp({
      env: {
        RESPONSE_MAX_BYTES: String(128 * MiB),
        READ_FILE_MAX_BYTES: String(8 * MiB),
        RESPONSE_MIN_READ_BYTES_PER_S: '1',
        RESPONSE_READ_WINDOW_S: '60',
        FETCH_ALLOW_HOSTS: `127.0.0.1:${slowPort}`,
      },
    });
    const readers: net.Socket[] = [];
    try {
      const spender = await app.createTenant();
      await app.setBudgets(spender, { unreadAnswerBytes: 12 * MiB, concurrentCalls: 1 });
      const project = (await app.createProject(spender)).id;
      await writeFile(path.join(app.workspaceOf(project), 'big.txt'), 'b'.repeat(8 * MiB));
      const invokeKeyed = () =>
        app.http
          .post(`/v1/projects/${project}/tools/read_file/invoke`)
          .set(spender.auth)
          .set('Idempotency-Key', 'stored-once')
          .send({ arguments: { path: 'big.txt' } });
      const stored = await invokeKeyed();
      expect(stored.status).toBe(200);
      expect((await invokeKeyed()).headers['idempotent-replayed']).toBe('true');

      // While a slow call holds the tenant's one place, a replay waits for none: it is refused as a call would be.
      // then() sends it: a supertest request goes out only when awaited.
      const holding = invoke(app, spender, project, 'fetch_url', { url: `http://127.0.0.1:${slowPort}/` }).then((res) => res);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = await invokeKeyed();
      expectRefusal(refused, 429, 'tenant_budget_exceeded');
      expect(refused.body.error.details).toMatchObject({ budget: 'concurrentCalls' });
      expect((await holding).body).toMatchObject({ status: 'ok' });

      // Replays nobody reads: the second fills unreadAnswerBytes (16 MiB against 12), the third is refused.
      const body = JSON.stringify({ arguments: { path: 'big.txt' } });
      const statuses: string[] = [];
      for (let i = 0; i < 3; i++) {
        const { socket, head } = await unreadRequest(app.port, {
          path: `/v1/projects/${project}/tools/read_file/invoke`,
          body,
          headers: { ...spender.auth, 'Idempotency-Key': 'stored-once' },
        });
        readers.push(socket);
        statuses.push(await head);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      expect(statuses).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 429']);
    } finally {
      for (const socket of readers) socket.destroy();
      await app.close();
      slow.close();
    }
  }, 60_000);
});

import type { Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { invoke } from './security-helpers.js';

// docs/security-model.md, case 106: answers that would hold the service's memory. A batch's results together
// stop at RESPONSE_MAX_BYTES (each result past it says result_too_large, its id and invocation kept), and a
// client that reads its answer slower than RESPONSE_MIN_READ_BYTES_PER_S over RESPONSE_READ_WINDOW_S is
// closed, so the answer it held is freed.

const MiB = 1024 * 1024;

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
      const port = big.port;
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /v1/projects/${project}/tools/batch HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${owner.auth.Authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      // Reads nothing: its kernel buffers fill, and the rest of the answer waits in the service.
      socket.pause();
      socket.on('error', () => undefined);
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
});

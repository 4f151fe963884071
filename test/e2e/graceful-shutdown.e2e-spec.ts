import type { Server } from 'node:http';
import net from 'node:net';
import { InFlightCalls } from '../../src/tools/in-flight-calls.js';
import { eventually } from '../support/eventually.js';
import { processesWith } from '../support/processes.js';
import { createTestApp } from '../support/test-app.js';
import { createTestDatabase } from '../support/test-database.js';

describe('graceful shutdown', () => {
  it('lets short calls finish, cancels long ones and kills their processes, refuses new calls, and audits them all', async () => {
    const database = await createTestDatabase();
    const closeDatabase = database.driver.close.bind(database.driver);
    database.driver.close = () => Promise.resolve();
    const marker = `999.${process.pid}${Date.now() % 100000}`;
    try {
      const app = await createTestApp({ database, env: { SHUTDOWN_GRACE_MS: '1500' } });
      const tenant = await app.createTenant();
      const project = await app.createProject(tenant, { shellEnabled: true, shellAllowlist: ['sleep'] });
      const invoke = (argv: string[]) =>
        app.http
          .post(`/v1/projects/${project.id}/tools/shell_exec/invoke`)
          .set(tenant.auth)
          .send({ arguments: { argv, timeoutMs: 120000 } });

      const short = invoke(['sleep', '0.5']).then((r) => r);
      const long = invoke(['sleep', marker]).then((r) => r);
      while (processesWith(marker).length === 0) await new Promise((r) => setTimeout(r, 20));

      const inFlight = app.app.get(InFlightCalls);
      const closing = app.close();
      while (!inFlight.isDraining) await new Promise((r) => setImmediate(r));
      const refused = await invoke(['sleep', '0']);
      const [shortRes, longRes] = await Promise.all([short, long]);
      await closing;

      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('shutting_down');
      expect(refused.headers['retry-after']).toBeDefined();
      expect(shortRes.status).toBe(200);
      expect(shortRes.body.status).toBe('ok');
      expect(longRes.status).toBe(200);
      expect(longRes.body).toMatchObject({ status: 'error', error: { code: 'shutting_down' } });
      expect(processesWith(marker)).toEqual([]);

      const rows = await database.driver.withSession((s) =>
        s.query<{ id: string; status: string }>('SELECT id, status FROM invocations WHERE project_id = $1', [project.id]),
      );
      expect(rows.map((r) => r.id).sort()).toEqual([shortRes.body.invocationId, longRes.body.invocationId].sort());
      expect(rows.map((r) => r.status).sort()).toEqual(['error', 'ok']);
    } finally {
      await closeDatabase();
      await database.close();
    }
  });

  // Node counts a connection that has not sent a whole request yet as busy (so that headersTimeout applies to
  // it), and server.close() waited for it. Here that wait would be ten minutes, past the test's timeout.
  it('closes connections that never sent a request, and still answers a request whose body is still arriving', async () => {
    const app = await createTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: '600000', HTTP_REQUEST_TIMEOUT_MS: '600000' } });
    const server = app.app.getHttpServer() as Server;
    const port = app.port;
    const connect = () =>
      new Promise<{ socket: net.Socket; closed: Promise<string> }>((resolve, reject) => {
        let received = '';
        const socket = net.connect(port, '127.0.0.1', () =>
          resolve({ socket, closed: new Promise((done) => socket.once('close', () => done(received))) }),
        );
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
        socket.once('error', reject);
      });
    const silent = await connect();
    const halfway = await connect();
    halfway.socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // A request under way: its headers are in, half its body is not yet sent when the server stops listening.
    const uploading = await connect();
    const body = JSON.stringify({ name: `closing-${process.pid}` });
    const requested = new Promise((resolve) => server.once('request', resolve));
    uploading.socket.write(
      `POST /v1/admin/tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${app.admin.Authorization}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await requested;

    const closing = app.close();
    await eventually(() => expect(server.listening).toBe(false));
    uploading.socket.write(body.slice(5));
    await closing;

    expect(await silent.closed).toBe('');
    expect(await halfway.closed).toBe('');
    expect(await uploading.closed).toMatch(/^HTTP\/1\.1 201 /);
  });
});

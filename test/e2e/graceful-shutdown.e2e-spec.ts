import { InFlightCalls } from '../../src/tools/in-flight-calls.js';
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
        app.http.post(`/v1/projects/${project.id}/tools/shell_exec/invoke`).set(tenant.auth).send({ arguments: { argv, timeoutMs: 120000 } });

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
});

import { randomBytes } from 'node:crypto';
import { EmbeddedUpkeep } from '../../src/database/embedded-upkeep.js';
import { PrismaService } from '../../src/database/prisma.service.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// The embedded database has no autovacuum: a table that keeps a few rows but rewrites them grew on disk with
// every rewrite. The upkeep vacuums it, and the space of the old versions is used again.
(process.env.TEST_DATABASE_URL ? describe.skip : describe)('the embedded database (PGlite) upkeep', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let project: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    project = (await t.createProject(tenant)).id;
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  const toolsetsBytes = async () => {
    const [row] = await t.app.get(PrismaService).$queryRaw<Array<{ bytes: bigint }>>`SELECT pg_total_relation_size('toolsets') AS bytes`;
    return Number(row.bytes);
  };
  // One toolset written again and again, each time with 8 KB of descriptions the database cannot compress.
  const rewrite = async (times: number) => {
    for (let i = 0; i < times; i++) {
      const tools = ['read_file', 'write_file', 'list_files'].map((select) => ({
        select,
        description: randomBytes(2 * 1024).toString('base64'),
      }));
      await t.http
        .put(`/v1/projects/${project}/toolsets/churn`)
        .set(tenant.auth)
        .send({ slug: 'churn', name: 'Churn', mode: 'direct', tools })
        .expect(200);
    }
  };

  it('vacuums every table, so a table whose rows are rewritten stops growing', async () => {
    await t.http
      .post(`/v1/projects/${project}/toolsets`)
      .set(tenant.auth)
      .send({ slug: 'churn', name: 'Churn', mode: 'direct', tools: [{ select: 'read_file' }] })
      .expect(201);
    const start = await toolsetsBytes();
    await rewrite(150);
    const unvacuumed = await toolsetsBytes();
    // One row, written 150 times: without a vacuum, every old version still takes its space.
    expect(unvacuumed - start).toBeGreaterThan(150 * 6 * 1024);

    const vacuumed = await t.app.get(EmbeddedUpkeep).run();
    expect(vacuumed).toEqual(expect.arrayContaining(['toolsets', 'idempotency_keys', 'api_keys']));
    await rewrite(150);
    const after = await toolsetsBytes();
    // The next 150 versions go where the old ones were.
    expect(after - unvacuumed).toBeLessThan((unvacuumed - start) / 4);
  }, 120_000);
});

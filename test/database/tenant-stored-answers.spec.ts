import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyRepository, type IdempotencyScope } from '../../src/calls/idempotency.repository.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

// tenant_stored_answers holds what each tenant's stored answers come to, kept by triggers on
// idempotency_keys, so that the storedAnswerBytes budget reads one row instead of summing every row the
// tenant has. Each step below changes idempotency_keys as the service does (the repository's own
// statements, a project or a tenant deleted) and the kept figure must equal the sum over the rows.
describe('tenant_stored_answers', () => {
  let db: TestDatabase;
  let repository: IdempotencyRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    repository = new IdempotencyRepository(db.driver);
  });

  afterAll(() => db.close());

  const tenant = async () => {
    const id = randomUUID();
    await db.driver.query(`INSERT INTO tenants (id, name, updated_at) VALUES ($1, $2, now())`, [id, `t-${id}`]);
    return id;
  };
  const project = async (tenantId: string) => {
    const id = randomUUID();
    await db.driver.query(`INSERT INTO projects (id, tenant_id, name, slug, updated_at) VALUES ($1, $2, $3, $3, now())`, [
      id,
      tenantId,
      `p-${id}`,
    ]);
    return id;
  };
  const summed = async (tenantId: string) => {
    const [row] = await db.driver.query<{ bytes: string }>(
      `SELECT coalesce(sum(octet_length(outcome)), 0)::text AS bytes FROM idempotency_keys WHERE tenant_id = $1`,
      [tenantId],
    );
    return Number(row.bytes);
  };
  const kept = async (tenantId: string) => {
    const [row] = await db.driver.query<{ bytes: string }>(
      `SELECT coalesce((SELECT bytes FROM tenant_stored_answers WHERE tenant_id = $1), 0)::text AS bytes`,
      [tenantId],
    );
    return Number(row.bytes);
  };
  const expectKept = async (tenantId: string, bytes: number) => {
    expect(await summed(tenantId)).toBe(bytes);
    expect(await kept(tenantId)).toBe(bytes);
  };
  const store = async (scope: IdempotencyScope, outcome: string, ttlMs = 86_400_000) => {
    expect(await repository.claim(scope, 'fingerprint', ttlMs, 60_000)).toBe(true);
    await repository.complete(scope, outcome);
  };
  const scope = (tenantId: string, projectId: string, key = randomUUID()): IdempotencyScope => ({
    tenantId,
    projectId,
    apiKeyId: 'key',
    key,
  });

  it('follows answers as they are stored, taken over, released, swept, and deleted with their project or tenant', async () => {
    const t1 = await tenant();
    const t2 = await tenant();
    const p1 = await project(t1);
    const p2 = await project(t1);
    const p3 = await project(t2);

    // Stored: a claim adds nothing (no answer yet), the answer adds its UTF-8 bytes ('é' is two).
    const first = scope(t1, p1);
    expect(await repository.claim(first, 'fingerprint', 86_400_000, 60_000)).toBe(true);
    await expectKept(t1, 0);
    await repository.complete(first, '{"answer":"é"}');
    await expectKept(t1, 15);
    await store(scope(t1, p2), 'x'.repeat(1000));
    await store(scope(t2, p3), 'y'.repeat(500));
    await expectKept(t1, 1015);
    await expectKept(t2, 500);

    // Many at once, as concurrent keyed calls store them: none is lost.
    await Promise.all(Array.from({ length: 20 }, (_, i) => store(scope(t1, p1), 'z'.repeat(100 + i))));
    const many = 20 * 100 + (19 * 20) / 2;
    await expectKept(t1, 1015 + many);

    // A running claim released (the call was refused) changes nothing.
    const refused = scope(t1, p1);
    expect(await repository.claim(refused, 'fingerprint', 86_400_000, 60_000)).toBe(true);
    await repository.release(refused);
    await expectKept(t1, 1015 + many);

    // An expired answer counts until it goes: taken over by a new call with its key (its answer cleared),
    // or deleted by the sweep.
    const expiring = scope(t1, p1);
    await store(expiring, 'e'.repeat(300), 1);
    const swept = scope(t2, p3);
    await store(swept, 's'.repeat(200), 1);
    await expectKept(t1, 1015 + many + 300);
    await expectKept(t2, 700);
    await sleep(20);
    expect(await repository.claim(expiring, 'fingerprint', 86_400_000, 60_000)).toBe(true);
    await expectKept(t1, 1015 + many);
    expect(await repository.deleteExpired(1000)).toBeGreaterThanOrEqual(1);
    await expectKept(t2, 500);

    // A project deleted takes its rows, and a tenant deleted all of its projects' rows.
    await db.driver.query(`DELETE FROM projects WHERE id = $1`, [p2]);
    await expectKept(t1, 15 + many);
    await db.driver.query(`DELETE FROM tenants WHERE id = $1`, [t2]);
    await expectKept(t2, 0);
    await expectKept(t1, 15 + many);
  });
});

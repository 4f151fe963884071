import { randomUUID } from 'node:crypto';
import { AuditRepository, type InvocationRecord } from '../../src/audit/audit.repository.js';
import { AuditWriter } from '../../src/audit/audit-writer.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('batched audit writer', () => {
  let t: TestApp;
  let projectId: string;
  let tenantId: string;

  beforeAll(async () => {
    t = await createTestApp();
    const tenant = await t.createTenant();
    tenantId = tenant.id;
    projectId = (await t.createProject(tenant)).id;
  });
  afterAll(() => t.close());

  const row = (): InvocationRecord => {
    const now = new Date();
    return {
      id: randomUUID(),
      tenantId,
      projectId,
      tool: 'read_file',
      channel: 'rest',
      status: 'ok',
      event: null,
      errorCode: null,
      errorMessage: null,
      durationMs: 1,
      argumentsJson: '{"path":"x"}',
      argumentsTruncated: false,
      redactedPathsJson: null,
      startedAt: now,
      finishedAt: now,
      traceId: null,
      callerKeyId: randomUUID(),
      callerName: 'writer-test',
    };
  };
  const countRows = async (ids: string[]) =>
    Number(
      (
        await t.database.driver.withSession((s) =>
          s.query<{ n: string }>('SELECT count(*)::text AS n FROM invocations WHERE id = ANY($1::uuid[])', [ids]),
        )
      )[0].n,
    );

  it('writes a batch of rows field for field, whatever their text holds', async () => {
    const repository = t.app.get(AuditRepository);
    // An hour ago, at .123 of a second: inside the audit's partitions (made around today), whatever the day.
    const started = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000 + 123);
    const plain = { ...row(), startedAt: started, finishedAt: new Date(started.getTime() + 7), durationMs: 7 };
    // What PostgreSQL's text cannot hold, or that looks like an escape in the JSON the rows travel as.
    const odd: InvocationRecord = {
      ...row(),
      tool: 'weird "tool"\\',
      status: 'invalid_arguments',
      event: 'TOOL_ARG_VALIDATION_FAILURE',
      errorCode: 'invalid_arguments',
      errorMessage: 'lone \ud800 surrogate, a path C:\\udata and a quote "',
      argumentsJson: '{"path":"C:\\\\udata","n":"\\\\u0000 kept as text"}',
      argumentsTruncated: true,
      redactedPathsJson: '["/token"]',
      traceId: '0af7651916cd43dd8448eb211c80319c',
      toolset: 'reviewers',
      exposedTool: 'read',
      callerName: 'key with a NUL \u0000 and \udfff',
    };
    await repository.insertMany([plain, odd]);
    const rows = await t.database.driver.withSession((s) =>
      s.query<Record<string, unknown>>(
        `SELECT id, tool, status, event, error_code, error_message, duration_ms, arguments::text AS arguments, arguments_truncated,
           redacted_paths::text AS redacted_paths, started_at, finished_at, trace_id, toolset, exposed_tool, caller_key_id, caller_name
         FROM invocations WHERE id = ANY($1::uuid[])`,
        [[plain.id, odd.id]],
      ),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(plain.id)).toMatchObject({
      tool: 'read_file',
      status: 'ok',
      event: null,
      error_message: null,
      duration_ms: 7,
      arguments: '{"path": "x"}',
      arguments_truncated: false,
      redacted_paths: null,
      trace_id: null,
      toolset: null,
      caller_key_id: plain.callerKeyId,
      caller_name: 'writer-test',
    });
    expect(new Date(byId.get(plain.id)!.started_at as string).toISOString()).toBe(started.toISOString());
    expect(new Date(byId.get(plain.id)!.finished_at as string).toISOString()).toBe(new Date(started.getTime() + 7).toISOString());
    expect(byId.get(odd.id)).toMatchObject({
      tool: 'weird "tool"\\',
      status: 'invalid_arguments',
      event: 'TOOL_ARG_VALIDATION_FAILURE',
      error_code: 'invalid_arguments',
      // A lone surrogate becomes U+FFFD; a backslash before "udata" stays a backslash.
      error_message: 'lone \ufffd surrogate, a path C:\\udata and a quote "',
      arguments: '{"n": "\\\\u0000 kept as text", "path": "C:\\\\udata"}',
      arguments_truncated: true,
      redacted_paths: '["/token"]',
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      toolset: 'reviewers',
      exposed_tool: 'read',
      // U+0000 stays visible as the escape's text.
      caller_name: 'key with a NUL \\u0000 and \ufffd',
    });
  });

  it('writes every row of a burst bigger than its queue, holding callers back instead of dropping rows', async () => {
    const repository = t.app.get(AuditRepository);
    let batches = 0;
    let largestBatch = 0;
    const counting = Object.create(repository) as AuditRepository;
    counting.insertMany = async (records) => {
      batches++;
      largestBatch = Math.max(largestBatch, records.length);
      return repository.insertMany(records);
    };
    const writer = new AuditWriter(counting, { maxQueue: 100, batchSize: 40, flushIntervalMs: 5 });
    const rows = Array.from({ length: 2_000 }, row);
    let maxPending = 0;
    await Promise.all(
      rows.map(async (r) => {
        await writer.enqueue(r);
        maxPending = Math.max(maxPending, writer.pending);
      }),
    );
    await writer.close();
    expect(await countRows(rows.map((r) => r.id))).toBe(2_000);
    expect(maxPending).toBeLessThanOrEqual(100);
    expect(largestBatch).toBeLessThanOrEqual(40);
    // Multi-row inserts, not one statement per row.
    expect(batches).toBeLessThan(2_000 / 10);
  });

  it('keeps rows through a database failure and writes them when it recovers', async () => {
    const repository = t.app.get(AuditRepository);
    let failuresLeft = 3;
    const flaky = Object.create(repository) as AuditRepository;
    flaky.insertMany = async (records) => {
      if (failuresLeft-- > 0) throw new Error('connection refused');
      return repository.insertMany(records);
    };
    // What the metrics see of it (audit.module hands the writer this observer).
    const reported = { batches: [] as number[], failures: 0 };
    const writer = new AuditWriter(flaky, { maxQueue: 1_000, batchSize: 50, flushIntervalMs: 5 }, undefined, {
      batchWritten: (n) => reported.batches.push(n),
      writeFailed: () => reported.failures++,
    });
    const rows = Array.from({ length: 120 }, row);
    await Promise.all(rows.map((r) => writer.enqueue(r)));
    await writer.drain();
    expect(failuresLeft).toBeLessThan(0);
    expect(await countRows(rows.map((r) => r.id))).toBe(120);
    expect(reported.failures).toBe(3);
    expect(reported.batches.reduce((a, n) => a + n, 0)).toBe(120);
    expect(Math.max(...reported.batches)).toBeLessThanOrEqual(50);
  });

  it('answers the invocation list with every call already made (read-your-writes)', async () => {
    const tenant = await t.createTenant();
    const project = await t.createProject(tenant);
    const calls = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        t.http
          .post(`/v1/projects/${project.id}/tools/read_file/invoke`)
          .set(tenant.auth)
          .send({ arguments: { path: `missing-${i}.txt` } }),
      ),
    );
    expect(calls.every((c) => c.status === 200)).toBe(true);
    const list = await t.http.get(`/v1/projects/${project.id}/invocations?limit=100`).set(tenant.auth).expect(200);
    expect(list.body.items.map((i: { id: string }) => i.id).sort()).toEqual(calls.map((c) => c.body.invocationId).sort());
  });
});

describe('graceful shutdown', () => {
  it('flushes every audit row of answered calls before the database closes', async () => {
    const { createTestDatabase } = await import('../support/test-database.js');
    const database = await createTestDatabase();
    const close = database.driver.close.bind(database.driver);
    // The app closes its driver on shutdown; keep it open to count the rows afterwards.
    database.driver.close = () => Promise.resolve();
    try {
      // A flush interval far longer than the test: the rows can only reach the database through the shutdown flush.
      const app = await createTestApp({ database, env: { AUDIT_FLUSH_INTERVAL_MS: '600000', AUDIT_BATCH_SIZE: '10000' } });
      const tenant = await app.createTenant();
      const project = await app.createProject(tenant);
      const calls = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          app.http
            .post(`/v1/projects/${project.id}/tools/list_files/invoke`)
            .set(tenant.auth)
            .send({ arguments: { limit: 1 + (i % 5) } }),
        ),
      );
      expect(calls.filter((c) => c.status === 200)).toHaveLength(200);
      await app.close();
      const [{ n }] = await database.driver.withSession((s) =>
        s.query<{ n: string }>('SELECT count(*)::text AS n FROM invocations WHERE project_id = $1', [project.id]),
      );
      expect(Number(n)).toBe(200);
    } finally {
      await close();
      await database.close();
    }
  });
});

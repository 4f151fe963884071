import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DATABASE_DRIVER, type DatabaseDriver } from '../../../src/database/database-driver.js';
import { MetricsServer } from '../../../src/metrics/metrics-server.js';
import { BUDGET_NAMES } from '../../../src/budgets/tenant-usage.js';
import { BUILTIN_TOOL_NAMES } from '../../../src/execution/builtin-tool-names.js';
import { type MetricFamily, parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { mcpClientFor } from '../mcp/mcp-test-kit.js';
import { httpTool, installSkill, skillOf } from '../skills/skill-test-kit.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

type Families = Map<string, MetricFamily>;
const calls = (m: Families, tool: string, status: string, channel: string) =>
  sampleValue(m, 'toolgate_tool_calls_total', { tool, status, channel });

describe('GET /metrics with METRICS_TOKEN, after real calls', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  const scrape = async (): Promise<Families> => {
    const res = await t.http.get('/metrics').set(bearer(METRICS_TOKEN)).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(res.text);
  };

  beforeAll(async () => {
    // The skill tool below posts to 127.0.0.1:9, which registration refuses unless the operator opened it.
    t = await createTestApp({ env: { METRICS_TOKEN, FETCH_ALLOW_HOSTS: '127.0.0.1:9', METRICS_TENANTS: '3' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.workspaceOf(projectId), 'notes.txt'), 'one\ntwo\n');
  });
  afterAll(() => t.close());

  it('refuses a scrape without the token or with a wrong one (401), and never asks for an API key', async () => {
    const missing = await t.http.get('/metrics').expect(401);
    expect(missing.body.error).toEqual({ code: 'unauthorized', message: expect.stringContaining('METRICS_TOKEN') });
    const wrong = await t.http.get('/metrics').set(bearer('not-the-metrics-token-at-all')).expect(401);
    expect(wrong.body.error.code).toBe('unauthorized');
    // A tenant's API key is not the metrics token.
    await t.http.get('/metrics').set(tenant.auth).expect(401);
    await t.http.get('/metrics').set(bearer(METRICS_TOKEN)).expect(200);
  });

  it('counts each call by tool, status and channel, times it, and counts validation refusals by tool', async () => {
    const before = await scrape();
    const invoke = (tool: string, args: unknown) =>
      t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(tenant.auth).send({ arguments: args });
    for (let i = 0; i < 3; i++) expect((await invoke('read_file', { path: 'notes.txt' })).body.status).toBe('ok');
    expect((await invoke('read_file', { path: 'missing.txt' })).body.status).toBe('error');
    await invoke('read_file', { path: 5 }).expect(422);
    await invoke('read_file', { lines: 3 }).expect(422);
    expect((await invoke('write_file', { path: 'out.txt', content: 'x' })).body.status).toBe('ok');
    await invoke('no_such_tool_anywhere', {}).expect(404);
    const client = await mcpClientFor(t, tenant, projectId);
    try {
      const result = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const after = await scrape();

    const delta = (tool: string, status: string, channel: string) =>
      calls(after, tool, status, channel) - calls(before, tool, status, channel);
    expect({
      readOk: delta('read_file', 'ok', 'rest'),
      readError: delta('read_file', 'error', 'rest'),
      readInvalid: delta('read_file', 'invalid_arguments', 'rest'),
      writeOk: delta('write_file', 'ok', 'rest'),
      unknownDenied: delta('unknown', 'denied', 'rest'),
      readOkMcp: delta('read_file', 'ok', 'mcp'),
    }).toEqual({ readOk: 3, readError: 1, readInvalid: 2, writeOk: 1, unknownDenied: 1, readOkMcp: 1 });
    // The unknown tool's name never becomes a label value.
    expect(JSON.stringify([...after.values()])).not.toContain('no_such_tool_anywhere');

    const validation = (m: Families) => sampleValue(m, 'toolgate_validation_refusals_total', { tool: 'read_file' });
    expect(validation(after) - validation(before)).toBe(2);

    // Every REST read_file call (6) is in its duration histogram; the MCP one in its own series.
    const durations = (m: Families, channel: string) =>
      sampleValue(m, 'toolgate_tool_call_duration_seconds', { tool: 'read_file', channel }, 'toolgate_tool_call_duration_seconds_count');
    expect(durations(after, 'rest') - durations(before, 'rest')).toBe(6);
    expect(durations(after, 'mcp') - durations(before, 'mcp')).toBe(1);
    const histogram = after.get('toolgate_tool_call_duration_seconds')!;
    expect(histogram.type).toBe('histogram');
  });

  it('reports the audit writer, the pools, the caches, the change bus, the sandbox and the Node defaults', async () => {
    await t.http.get(`/v1/projects/${projectId}/invocations`).set(tenant.auth).expect(200); // waits for the audit rows
    const m = await scrape();
    expect(m.get('toolgate_audit_batch_rows')?.type).toBe('histogram');
    expect(sampleValue(m, 'toolgate_audit_batch_rows', {}, 'toolgate_audit_batch_rows_count')).toBeGreaterThan(0);
    // The 9 calls of the test above, each one audit row, in however many batches.
    expect(sampleValue(m, 'toolgate_audit_batch_rows', {}, 'toolgate_audit_batch_rows_sum')).toBe(9);
    expect(m.get('toolgate_audit_queue_rows')?.samples).toEqual([{ name: 'toolgate_audit_queue_rows', labels: {}, value: 0 }]);
    expect(m.get('toolgate_audit_write_failures_total')?.type).toBe('counter');
    expect(sampleValue(m, 'toolgate_read_threads', {})).toBe(t.config.workspace.readThreads);
    expect(sampleValue(m, 'toolgate_read_threads_running', {})).toBeGreaterThanOrEqual(1);
    for (const name of [
      'toolgate_worker_pool_threads',
      'toolgate_worker_pool_max_threads',
      'toolgate_worker_pool_queued_tasks',
      'toolgate_worker_pool_utilization',
    ]) {
      expect({ name, type: m.get(name)?.type }).toEqual({ name, type: 'gauge' });
    }
    expect(sampleValue(m, 'toolgate_worker_pool_max_threads', {})).toBeGreaterThanOrEqual(1);
    // The key was checked once against the database and then served from its cache.
    expect(sampleValue(m, 'toolgate_cache_hits_total', { cache: 'api_keys' })).toBeGreaterThan(5);
    expect(sampleValue(m, 'toolgate_cache_misses_total', { cache: 'api_keys' })).toBeGreaterThanOrEqual(1);
    const ratio = sampleValue(m, 'toolgate_cache_hit_ratio', { cache: 'workspaces' });
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThanOrEqual(1);
    expect(new Set(m.get('toolgate_cache_hit_ratio')!.samples.map((s) => s.labels.cache))).toEqual(
      new Set(['api_keys', 'projects', 'workspaces', 'skill_tools', 'toolsets', 'mcp_log_levels', 'mcp_client_capabilities', 'policies']),
    );
    // One app: the bus is in-process on PGlite, a fresh LISTEN connection on PostgreSQL; either way connected, never reconnected.
    expect(sampleValue(m, 'toolgate_change_bus_connected', {})).toBe(1);
    expect(m.get('toolgate_change_bus_reconnects_total')?.type).toBe('counter');
    expect(sampleValue(m, 'toolgate_change_bus_reconnects_total', {})).toBe(0);
    for (const name of ['toolgate_change_bus_pending_messages', 'toolgate_change_bus_dropped_messages_total']) {
      expect(m.get(name)?.samples).toEqual([{ name, labels: {}, value: 0 }]);
    }
    expect(m.get('toolgate_sandbox_ready')?.samples).toHaveLength(1);
    expect(m.get('toolgate_sandbox_setup_failures_total')?.type).toBe('counter');
    expect(m.get('nodejs_eventloop_lag_seconds')?.type).toBe('gauge');
    expect(m.get('nodejs_eventloop_lag_p99_seconds')?.type).toBe('gauge');
    expect(m.get('process_cpu_seconds_total')?.type).toBe('counter');
    expect(m.get('nodejs_heap_size_used_bytes')?.samples[0].value).toBeGreaterThan(0);
  });

  it('keeps label values bounded: 250 projects, 250 tool names and skill tools add no label values', async () => {
    const driver = t.app.get<DatabaseDriver>(DATABASE_DRIVER);
    // Enough projects and names that a label per project or per name would add six times the 40 series allowed
    // below; more only took longer (1,000 of each took 20 s of a loaded machine).
    const ids = Array.from({ length: 250 }, () => randomUUID());
    // Inserted with SQL: through the API 250 projects would take most of the test's time.
    await driver.query(
      `INSERT INTO projects (id, tenant_id, name, slug, created_at, updated_at)
       SELECT id, $1::uuid, 'Bulk ' || ord, 'bulk-' || ord, now(), now() FROM unnest($2::uuid[]) WITH ORDINALITY AS u(id, ord)`,
      [tenant.id, ids],
    );
    const skill = await installSkill(
      t,
      tenant,
      projectId,
      skillOf([httpTool(`tenant_named_tool_${process.pid}`, 'http://127.0.0.1:9/hook', { type: 'object' })]),
    );
    const before = await scrape();
    const seriesBefore = countSeries(before);
    for (let i = 0; i < ids.length; i += 25) {
      await Promise.all(
        ids.slice(i, i + 25).flatMap((id, j) => [
          t.http
            .post(`/v1/projects/${id}/tools/read_file/invoke`)
            .set(tenant.auth)
            .send({ arguments: { path: 7 } })
            .expect(422),
          t.http
            .post(`/v1/projects/${id}/tools/tool_number_${i + j}/invoke`)
            .set(tenant.auth)
            .send({ arguments: {} })
            .expect(404),
        ]),
      );
    }
    const skillCalls = 3;
    for (let i = 0; i < skillCalls; i++)
      await t.http.post(`/v1/projects/${projectId}/tools/${skill.tools[0].name}/invoke`).set(tenant.auth).send({ arguments: {} });
    const after = await scrape();

    expect(calls(after, 'read_file', 'invalid_arguments', 'rest') - calls(before, 'read_file', 'invalid_arguments', 'rest')).toBe(
      ids.length,
    );
    expect(calls(after, 'unknown', 'denied', 'rest') - calls(before, 'unknown', 'denied', 'rest')).toBe(ids.length);
    const skillDelta = ['ok', 'error', 'denied', 'timeout'].reduce(
      (sum, s) => sum + calls(after, 'skill', s, 'rest') - calls(before, 'skill', s, 'rest'),
      0,
    );
    expect(skillDelta).toBe(skillCalls);

    // 503 calls in 251 projects under 252 tool names: the skill tool's first call adds its counter
    // and its duration histogram (about 20 series), nothing grows with the projects or the names.
    expect(countSeries(after) - seriesBefore).toBeLessThan(40);
    const allowedTools = new Set([...BUILTIN_TOOL_NAMES, 'skill', 'unknown']);
    const values = labelValues(after);
    for (const tool of values.get('tool') ?? []) expect({ tool, allowed: allowedTools.has(tool) }).toEqual({ tool, allowed: true });
    const text = [...values.values()].flatMap((v) => [...v]).join('\n');
    for (const id of [ids[0], ids[ids.length - 1], projectId]) expect(text).not.toContain(id);
    // A tenant id is a label of the two tenant gauges only (bounded by METRICS_TENANTS, tested below).
    const tenantLabelled = [...after.values()].filter((family) =>
      family.samples.some((sample) => Object.values(sample.labels).includes(tenant.id)),
    );
    expect(tenantLabelled.map((family) => family.name).sort()).toEqual(['toolgate_tenant_budget', 'toolgate_tenant_usage']);
    expect(text).not.toContain('tool_number_');
    expect(text).not.toContain('tenant_named_tool');
    expect(text).not.toContain(t.tmpDir);
  }, 120_000);
  it("exports each recently active tenant's usage and budgets by tenant id, for at most METRICS_TENANTS tenants", async () => {
    const write = (who: TestTenant, project: string, name: string) =>
      t.http
        .post(`/v1/projects/${project}/tools/write_file/invoke`)
        .set(who.auth)
        .send({ arguments: { path: name, content: 'z'.repeat(10_000) } });
    const owner = await t.createTenant();
    expect((await write(owner, (await t.createProject(owner)).id, 'usage.txt')).body.status).toBe('ok');
    const m = await scrape();
    expect(m.get('toolgate_tenant_usage')?.type).toBe('gauge');
    const usage = (budget: string) => sampleValue(m, 'toolgate_tenant_usage', { tenant: owner.id, budget });
    expect(usage('maxProjects')).toBe(1);
    expect(usage('concurrentCommands')).toBe(0);
    expect(usage('commandMemoryBytes')).toBe(0);
    expect(usage('storedAnswerBytes')).toBe(0);
    expect(usage('storageBytes')).toBeGreaterThanOrEqual(10_000);
    // The one file written (the workspace directory itself is not counted).
    expect(usage('storageInodes')).toBe(1);
    expect(sampleValue(m, 'toolgate_tenant_budget', { tenant: owner.id, budget: 'maxProjects' })).toBe(100);
    expect(sampleValue(m, 'toolgate_tenant_budget', { tenant: owner.id, budget: 'storageBytes' })).toBe(10 * 1024 ** 3);
    // Four more tenants become active: only the three most recent are exported, every budget of each.
    const recent: string[] = [];
    for (let i = 0; i < 4; i++) {
      const other = await t.createTenant();
      expect((await write(other, (await t.createProject(other)).id, 'mine.txt')).body.status).toBe('ok');
      recent.push(other.id);
    }
    const after = (await scrape()).get('toolgate_tenant_usage')!.samples;
    expect(new Set(after.map((s) => s.labels.tenant))).toEqual(new Set(recent.slice(1)));
    expect(after).toHaveLength(3 * BUDGET_NAMES.length);
  });
});

describe('GET /metrics with METRICS_TOKEN and a tiny request limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_TOKEN, RATE_LIMIT_REQUESTS: '3' } });
  });
  afterAll(() => t.close());

  it('is not a tenant route: scrapes are never refused by the limit, and charge no tenant bucket', async () => {
    for (let i = 0; i < 6; i++) await t.http.get('/metrics').set(bearer(METRICS_TOKEN)).expect(200);
    const tenant = await t.createTenant();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.http.get('/v1/projects').set(tenant.auth)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const m = parsePrometheusText((await t.http.get('/metrics').set(bearer(METRICS_TOKEN)).expect(200)).text);
    expect(m.get('toolgate_rate_limit_refusals_total')?.samples).toContainEqual({
      name: 'toolgate_rate_limit_refusals_total',
      labels: { bucket: 'requests' },
      value: 1,
    });
  });
});

describe('GET /metrics on METRICS_PORT', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', RATE_LIMIT_REQUESTS: '3' } });
    port = t.app.get(MetricsServer).port!;
  });
  afterAll(() => t.close());

  it('serves the metrics on their own port without a token, and not on the service port', async () => {
    expect(port).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(parsePrometheusText(await res.text()).get('toolgate_tool_calls_total')?.type).toBe('counter');
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    const onService = await t.http.get('/metrics').expect(404);
    expect(onService.body.error.code).toBe('route_not_found');
  });

  it('counts rate-limit refusals by bucket', async () => {
    const tenant = await t.createTenant();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.http.get('/v1/projects').set(tenant.auth)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const m = parsePrometheusText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    expect(sampleValue(m, 'toolgate_rate_limit_refusals_total', { bucket: 'requests' })).toBe(2);
    expect(sampleValue(m, 'toolgate_rate_limit_refusals_total', { bucket: 'commands' })).toBe(0);
  });
});

describe('GET /metrics on METRICS_PORT with METRICS_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', METRICS_TOKEN } });
  });
  afterAll(() => t.close());

  it('asks for the token on the separate port too, and the service port answers 404 even with it', async () => {
    const url = `http://127.0.0.1:${t.app.get(MetricsServer).port}/metrics`;
    const missing = await fetch(url);
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
    expect((await fetch(url, { headers: bearer('wrong-token-wrong-token') })).status).toBe(401);
    expect((await fetch(url, { headers: bearer(METRICS_TOKEN) })).status).toBe(200);
    // With their own port, the service port does not serve them, not even with the token.
    await t.http.get('/metrics').set(bearer(METRICS_TOKEN)).expect(404);
  });
});

describe('GET /metrics by default (neither METRICS_TOKEN nor METRICS_PORT)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers 404 like an unknown route, whatever credentials come with it', async () => {
    const res = await t.http.get('/metrics').expect(404);
    expect(res.body.error.code).toBe('route_not_found');
    await t.http.get('/metrics').set(t.admin).expect(404);
  });
});

describe('the Prometheus text parser the tests rely on', () => {
  it('refuses what the format forbids', () => {
    expect(() => parsePrometheusText('a_total 1\n')).toThrow(/no TYPE/);
    expect(() => parsePrometheusText('# TYPE a counter\na{x="1"} 1\na{x="1"} 2\n')).toThrow(/repeated/);
    expect(() => parsePrometheusText('# TYPE a counter\na{x="\\q"} 1\n')).toThrow(/escape/);
    expect(() => parsePrometheusText('# TYPE a counter\na one\n')).toThrow(/bad value/);
    expect(() => parsePrometheusText('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 1\n')).toThrow(
      /cumulative/,
    );
    expect(() => parsePrometheusText('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 3\nh_sum 1\n')).toThrow(/differs/);
    expect(parsePrometheusText('# HELP a A \\\\ help\n# TYPE a gauge\na{x="q\\"u"} 1.5e3\n').get('a')).toEqual({
      name: 'a',
      type: 'gauge',
      help: 'A \\ help',
      samples: [{ name: 'a', labels: { x: 'q"u' }, value: 1500 }],
    });
  });
});

function countSeries(m: Families): number {
  let n = 0;
  for (const family of m.values()) if (family.name.startsWith('toolgate_')) n += family.samples.length;
  return n;
}

function labelValues(m: Families): Map<string, Set<string>> {
  const values = new Map<string, Set<string>>();
  for (const family of m.values()) {
    for (const sample of family.samples) {
      for (const [k, v] of Object.entries(sample.labels)) {
        if (!values.has(k)) values.set(k, new Set());
        values.get(k)!.add(v);
      }
    }
  }
  return values;
}

// npm run load: the compiled service on a scratch PostgreSQL database, driven by autocannon with a mix of
// calls (reads, writes, listings, invalid arguments, unknown tools, another tenant's ids) for LOAD_DURATION
// seconds on LOAD_CONNECTIONS connections. It checks that nothing answers 5xx or unexpectedly, the p99
// latency, that open file descriptors and child processes do not grow, and that the audit log holds exactly
// one row per invocation the service answered. Exits 1 when a check fails.
//
//   LOAD_DURATION      measured seconds (default 60)
//   LOAD_CONNECTIONS   concurrent connections (default 200)
//   LOAD_WARMUP        seconds of the same mix before the "before" figures are taken (default 5)
//   LOAD_P99_MS        the p99 latency that fails the run (default 1000)
//   LOAD_DATABASE_URL  PostgreSQL server for the scratch database (default postgresql://postgres@127.0.0.1:5432/postgres)
//   HTTP_ADAPTER       express (default) or fastify
//   LOAD_SCENARIO      noisy-neighbour: instead of the mix, bench/noisy-neighbour.mjs (tenant B measured
//                      alone and beside tenant A's attacks on shared capacity; see there)
//   LOAD_INSTANCES     1 (default), or 2: the same load twice, on one instance and then on two instances of
//                      the service on one database (the connections split between them, an event stream
//                      open on the second instance so the change bus carries every call's events), each on a
//                      scratch database of its own; the report puts 5xx, audit rows against answers and CPU
//                      per answer side by side
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withClient } from './lib/database.mjs';
import { cleanupAll, defer, trackTempDir } from './lib/cleanup.mjs';
import { BENCH_FILE, BENCH_FILE_CONTENT, TREE_DIR, createTree, writeBenchFile } from './lib/fixtures.mjs';
import { envInt, postgresCpuSpentMs, readPostgresCpuMs, readProcessCpuMs, tail } from './lib/processes.mjs';
import { fmt, table, verdict } from './lib/report.mjs';
import { percentile } from './lib/stats.mjs';
import { api, assertBuilt, provisionTenant, startToolgate } from './lib/toolgate.mjs';

const FD_TOLERANCE = 5;
const SETTLE_MS = 2_000;
// A leak stays; a socket that is slow to close does not: past the tolerance, look again for this long. The
// database pool grows with the load and closes a connection idle for 10 s (pg's idleTimeoutMillis), so the
// look lasts past that: a pooled connection is not a leak, one that outlives its idle timeout would be.
const RESETTLE_MS = 12_000;
const REQUEST_TIMEOUT_S = 30;
const WRITE_PATHS = 5;

const config = readConfig();
const started = performance.now();
const progress = (message) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

function readConfig() {
  const adapter = process.env.HTTP_ADAPTER?.trim() || 'express';
  if (!['express', 'fastify'].includes(adapter)) throw new Error(`HTTP_ADAPTER must be express or fastify, got '${adapter}'`);
  const serverUrl = process.env.LOAD_DATABASE_URL?.trim() || 'postgresql://postgres@127.0.0.1:5432/postgres';
  if (!/^postgres(ql)?:\/\//.test(serverUrl)) throw new Error(`LOAD_DATABASE_URL must be a postgresql:// URL, got '${serverUrl}'`);
  return {
    durationS: envInt('LOAD_DURATION', 60, 1),
    connections: envInt('LOAD_CONNECTIONS', 200, 1),
    warmupS: envInt('LOAD_WARMUP', 5, 0),
    p99LimitMs: envInt('LOAD_P99_MS', 1000, 1),
    // BENCH_ENV_AUDIT_RETENTION_DAYS (passed to the service) turns on the retention check: rows then expire
    // during the run, so instead of "every answer has its row" the run shows the table staying bounded.
    retentionS: process.env.BENCH_ENV_AUDIT_RETENTION_DAYS ? Number(process.env.BENCH_ENV_AUDIT_RETENTION_DAYS) * 86_400 : 0,
    instances: envInt('LOAD_INSTANCES', 1, 1),
    serverUrl,
    adapter,
  };
}

// --- the scratch database ----------------------------------------------------------------------------------

async function createDatabase() {
  const name = `toolgate_load_${randomBytes(4).toString('hex')}`;
  await withClient(config.serverUrl, (c) => c.query(`CREATE DATABASE "${name}"`));
  defer(`drop database ${name}`, () => withClient(config.serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));
  const url = new URL(config.serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

// --- the service ---------------------------------------------------------------------------------------------

function openFds(pid) {
  return readdirSync(`/proc/${pid}/fd`).length;
}

// What each open descriptor is (for LOAD_DEBUG_FDS): file paths, socket:[…], pipe:[…], anon_inode:[…].
function fdTargets(pid) {
  const targets = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/\[\d+\]$/, '[]');
      targets[target] = (targets[target] ?? 0) + 1;
    } catch {
      // closed meanwhile
    }
  }
  return targets;
}

function childPids(pid) {
  const pids = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      pids.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean));
    } catch {
      // the thread ended meanwhile
    }
  }
  return pids;
}

async function settledResources(pid, baseline) {
  await sleep(SETTLE_MS);
  const read = () => ({ fds: openFds(pid), children: childPids(pid).length });
  let now = read();
  const deadline = Date.now() + RESETTLE_MS;
  while (baseline && (now.fds > baseline.fds + FD_TOLERANCE || now.children > baseline.children) && Date.now() < deadline) {
    await sleep(500);
    now = read();
  }
  return now;
}

// --- the mix -----------------------------------------------------------------------------------------------

// Which invoke answers leave an audit row: every call that reached a project of the caller's tenant, whether
// the tool ran (200) or was refused (400 body, 403 policy, 404 unknown tool, 422 arguments). Another
// tenant's (or a missing) project, throttling and outages are answered before there is anything to audit.
function auditedAs(status, json) {
  if (status === 200) return json?.status ?? 'unknown';
  if (status === 422) return 'invalid_arguments';
  if (status === 400 || status === 403) return 'denied';
  if (status === 404 && json?.error?.code === 'tool_not_found') return 'denied';
  return null;
}

function parse(body) {
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

// A small tree for list_files: 5 directories of 10 files.
const TREE_SHAPE = { dirs: 5, filesPerDir: 10 };
const TREE_ENTRIES = TREE_SHAPE.dirs * (TREE_SHAPE.filesPerDir + 1);

function buildMix(a, b) {
  const invoke = (projectId, tool) => `/v1/projects/${projectId}/tools/${tool}/invoke`;
  const ranOk = (json) => json?.status === 'ok';
  let writes = 0;
  return [
    {
      key: 'read_file',
      method: 'POST',
      path: invoke(a.projectId, 'read_file'),
      token: a.key,
      body: { arguments: { path: BENCH_FILE } },
      expect: 200,
      check: (json) => ranOk(json) && json.result?.content === BENCH_FILE_CONTENT,
    },
    {
      key: 'write_file',
      method: 'POST',
      path: invoke(a.projectId, 'write_file'),
      token: a.key,
      // A handful of paths, so concurrent writes replace the same files.
      setupRequest(req) {
        const n = writes++ % WRITE_PATHS;
        req.body = JSON.stringify({ arguments: { path: `out/w${n}.txt`, content: `write ${writes}\n`.repeat(8) } });
        return req;
      },
      expect: 200,
      check: ranOk,
    },
    {
      key: 'list_files',
      method: 'POST',
      path: invoke(a.projectId, 'list_files'),
      token: a.key,
      body: { arguments: { path: TREE_DIR, recursive: true } },
      expect: 200,
      check: (json) => ranOk(json) && json.result?.entries?.length === TREE_ENTRIES,
    },
    {
      key: 'invalid_args',
      method: 'POST',
      path: invoke(a.projectId, 'read_file'),
      token: a.key,
      body: { arguments: { path: 5 } },
      expect: 422,
      check: (json) => json?.error?.code === 'invalid_arguments',
    },
    {
      key: 'unknown_tool',
      method: 'POST',
      path: invoke(a.projectId, 'no_such_tool'),
      token: a.key,
      body: { arguments: {} },
      expect: 404,
      check: (json) => json?.error?.code === 'tool_not_found',
    },
    {
      key: 'cross_tenant',
      method: 'POST',
      path: invoke(a.projectId, 'read_file'),
      token: b.key,
      body: { arguments: { path: BENCH_FILE } },
      expect: 404,
      check: (json) => json?.error?.code === 'project_not_found',
    },
    {
      key: 'projects_list',
      method: 'GET',
      path: '/v1/projects?limit=20',
      token: a.key,
      expect: 200,
      check: (json) => Array.isArray(json?.items) && json.items.some((p) => p.id === a.projectId),
    },
  ];
}

// Counts shared by every run (warm-up included): what the audit log must hold at the end.
const expectedRows = new Map();
const unexpectedSamples = [];

// One autocannon run over the mix. At the end of `seconds` no client sends again, but every request already
// sent is answered and counted (autocannon's own stop would drop the answers in flight, whose calls the
// service still audits). autocannon's `duration` is only a backstop.
async function drive(baseUrls, mix, seconds, { measured }) {
  const stats = new Map(mix.map((m) => [m.key, { statuses: new Map(), unexpected: 0, latencies: [] }]));
  const clients = [];
  let lastAnswerAt = 0;
  const t0 = performance.now();
  // One autocannon per instance, the connections split between them (as a load balancer would).
  const runs = baseUrls.map((baseUrl) => {
    const share = Math.max(1, Math.round(config.connections / baseUrls.length));
    return load(baseUrl, share);
  });
  const instances = runs.map((r) => r.instance);
  // Interrupted: the load stops first, so the service is not shutting down under it.
  const undefer = defer('stop the load', () => {
    for (const instance of instances) instance.stop();
    for (const client of clients) client.destroy();
  });
  // A client stops once it has as many answers as requests sent (it checks before each next request).
  const stopSending = setTimeout(() => {
    for (const client of clients) client.responseMax = client.reqsMade;
  }, seconds * 1000);
  const results = await Promise.all(instances);
  clearTimeout(stopSending);
  undefer();
  const elapsedS = (lastAnswerAt - t0) / 1000;
  const sorted = Float64Array.from([...stats.values()].flatMap((s) => s.latencies)).sort();
  for (const s of stats.values()) {
    const own = Float64Array.from(s.latencies).sort();
    s.p50 = percentile(own, 50);
    s.p99 = percentile(own, 99);
  }
  const count = [...stats.values()].reduce((n, s) => n + [...s.statuses.values()].reduce((a, b) => a + b, 0), 0);
  return {
    stats,
    count,
    rps: elapsedS > 0 ? count / elapsedS : 0,
    elapsedS,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : null,
    errors: results.reduce((n, r) => n + r.errors, 0),
    timeouts: results.reduce((n, r) => n + r.timeouts, 0),
  };

  function load(baseUrl, connections) {
    // A client calls the request's onResponse and then, synchronously, emits 'response' with the latency.
    let answered = null;
    const requests = mix.map((m) => ({
      method: m.method,
      path: m.path,
      headers: { authorization: `Bearer ${m.token}`, ...(m.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
      ...(m.body === undefined ? {} : { body: JSON.stringify(m.body) }),
      ...(m.setupRequest ? { setupRequest: m.setupRequest } : {}),
      onResponse(status, body) {
        const s = stats.get(m.key);
        answered = s;
        s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
        const json = parse(body);
        if (m.path.includes('/invoke')) {
          const row = auditedAs(status, json);
          if (row) expectedRows.set(row, (expectedRows.get(row) ?? 0) + 1);
        }
        if (status !== m.expect || !m.check(json)) {
          s.unexpected++;
          if (unexpectedSamples.length < 5) unexpectedSamples.push(`${m.key}: ${status} ${String(body).slice(0, 300)}`);
        }
      },
    }));
    const instance = autocannon({
      url: baseUrl,
      connections,
      duration: seconds + 2 * REQUEST_TIMEOUT_S,
      timeout: REQUEST_TIMEOUT_S,
      requests,
      setupClient: (client) => clients.push(client),
    });
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      lastAnswerAt = performance.now();
      if (measured && answered) answered.latencies.push(responseTime);
      answered = null;
    });
    return { instance };
  }
}

// --- the run -----------------------------------------------------------------------------------------------

async function main() {
  assertBuilt();
  if (config.instances === 1) return report(await runPhase(1));
  if (config.instances !== 2) throw new Error('LOAD_INSTANCES must be 1 or 2');
  // The same load on one instance, then on two: what the second instance and the change bus cost.
  const one = await runPhase(1, { stream: true });
  const oneOk = report(one, 'one instance');
  expectedRows.clear();
  unexpectedSamples.length = 0;
  const two = await runPhase(2, { stream: true });
  const twoOk = report(two, 'two instances');
  return compare(one, two) && oneOk && twoOk;
}

// One scratch database, `count` instances of the service on it (one workspace root, as a shared volume),
// the warm-up and the measured load spread over them. `stream`: an event stream on project a stays open on
// the last instance, so (with two) every call's events cross the change bus.
async function runPhase(count, { stream = false } = {}) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-load-'));
  trackTempDir(tmp);
  // Sandboxed commands run as another uid, which must be able to pass through to the workspaces.
  chmodSync(tmp, 0o711);
  const workspaceRoot = path.join(tmp, 'workspaces');
  mkdirSync(workspaceRoot);

  const database = await createDatabase();
  progress(`database ${database.name} on ${new URL(config.serverUrl).host}`);
  const adminToken = randomBytes(24).toString('hex');
  const logFiles = Array.from({ length: count }, (_, i) => path.join(tmp, count === 1 ? 'service.log' : `service-${i + 1}.log`));
  const services = [];
  for (let i = 0; i < count; i++) {
    const service = await startToolgate({
      label: count === 1 ? 'toolgate' : `toolgate-${i + 1}`,
      adapter: config.adapter,
      databaseUrl: database.url,
      adminToken,
      workspaceRoot,
      logFile: logFiles[i],
      // Shell calls are part of the mix: their tighter per-tenant limit would answer 429 and hide what the
      // service does under load (the limiter still runs); 10,000,000 a minute is the highest value accepted.
      env: { RATE_LIMIT_COMMAND_CALLS: '10000000' },
    });
    services.push(service);
    progress(`${service.label} (${config.adapter}, pid ${service.pid}) ready at ${service.baseUrl}`);
  }

  const a = await provisionTenant(services[0], adminToken, 'load-a');
  const b = await provisionTenant(services[0], adminToken, 'load-b');
  const workspace = path.join(workspaceRoot, a.projectId);
  writeBenchFile(workspace);
  createTree(workspace, TREE_SHAPE);
  mkdirSync(path.join(workspace, 'out'));
  const mix = buildMix(a, b);
  const urls = services.map((service) => service.baseUrl);
  const events = stream ? await openEventStream(services.at(-1).baseUrl, a) : null;

  const startup = services.map((service) => ({ fds: openFds(service.pid), children: childPids(service.pid).length }));
  if (config.warmupS > 0) {
    progress(`warm-up: ${config.warmupS} s, ${config.connections} connections over ${count} instance(s)`);
    await drive(urls, mix, config.warmupS, { measured: false });
  }
  const before = await Promise.all(services.map((service) => settledResources(service.pid, null)));
  if (process.env.LOAD_DEBUG_FDS)
    for (const service of services) progress(`fds of ${service.label} before: ${JSON.stringify(fdTargets(service.pid))}`);
  progress(`measuring: ${config.durationS} s, ${config.connections} connections over ${count} instance(s), ${mix.length} kinds of request`);
  const sampler = config.retentionS > 0 ? sampleAuditTable(database.url) : null;
  const cpuBefore = services.map((service) => readProcessCpuMs(service.pid));
  const postgresBefore = readPostgresCpuMs();
  const eventsBefore = events?.count() ?? 0;
  const run = await drive(urls, mix, config.durationS, { measured: true });
  const cpuMs = services.reduce((sum, service, i) => sum + (readProcessCpuMs(service.pid) - cpuBefore[i]), 0);
  const postgresMs = postgresCpuSpentMs(postgresBefore, readPostgresCpuMs());
  const tableSamples = sampler ? await sampler.stop() : [];
  for (const service of services)
    if (!service.proc.isAlive()) throw new Error(`${service.label} exited during the load:\n${service.proc.logTail()}`);
  const after = await Promise.all(services.map((service, i) => settledResources(service.pid, before[i])));
  if (process.env.LOAD_DEBUG_FDS)
    for (const service of services) progress(`fds of ${service.label}: ${JSON.stringify(fdTargets(service.pid))}`);
  // Tool events of the measured window as the stream on the last instance received them.
  const eventsSeen = events ? events.count() - eventsBefore : null;
  events?.close();

  // Reading a project's invocations waits for the rows queued before it to be written (on each instance).
  for (const service of services)
    for (const t of [a, b]) await api(service.baseUrl, 'GET', `/v1/projects/${t.projectId}/invocations?limit=1`, { token: t.key });
  const countSql = 'SELECT status, count(*)::int AS n FROM invocations WHERE project_id = ANY($1::uuid[]) GROUP BY status';
  const rows = await withClient(database.url, async (c) => (await c.query(countSql, [[a.projectId, b.projectId]])).rows);
  const auditRows = new Map(rows.map((r) => [r.status, r.n]));
  const sum = (m) => [...m.values()].reduce((x, y) => x + y, 0);
  const serviceLog = logFiles
    .map((file) => readFileSync(file, 'utf8').trimEnd())
    .filter(Boolean)
    .join('\n');
  for (const service of services) await service.stop();
  return {
    instances: count,
    run,
    startup: sumResources(startup),
    before: sumResources(before),
    after: sumResources(after),
    auditRows,
    rowsTotal: sum(auditRows),
    answeredTotal: sum(expectedRows),
    serviceLog,
    logFile: logFiles.at(-1),
    tableSamples,
    cpuMs,
    postgresMs,
    eventsSeen,
  };
}

const sumResources = (list) => list.reduce((x, y) => ({ fds: x.fds + y.fds, children: x.children + y.children }), { fds: 0, children: 0 });

// An SSE client on project a, counting the tool events it receives.
async function openEventStream(baseUrl, tenant) {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/v1/projects/${tenant.projectId}/events`, {
    headers: { authorization: `Bearer ${tenant.key}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (response.status !== 200) throw new Error(`the event stream answered ${response.status}`);
  let count = 0;
  let rest = '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const text = rest + decoder.decode(value, { stream: true });
        const cut = text.lastIndexOf('\n');
        count += (text.slice(0, cut + 1).match(/^event: tool\./gm) ?? []).length;
        rest = text.slice(cut + 1);
      }
    } catch {
      // closed
    }
  })();
  // The stream's interest reaches the other instance through the bus a moment after it opens.
  await sleep(500);
  return { count: () => count, close: () => controller.abort() };
}

// One instance against two, side by side: the figures the two-instance mode is for.
function compare(one, two) {
  const n = (v) => v.toLocaleString('en-US');
  const fiveXx = (phase) =>
    [...phase.run.stats.values()].reduce((x, s) => x + [...s.statuses].filter(([code]) => code >= 500).reduce((y, [, c]) => y + c, 0), 0);
  const perAnswer = (ms, phase) => (phase.run.count > 0 ? (ms * 1000) / phase.run.count : null);
  const row = (label, f) => [label, f(one), f(two)];
  const cpuOne = perAnswer(one.cpuMs, one);
  const cpuTwo = perAnswer(two.cpuMs, two);
  const change = cpuOne && cpuTwo ? (cpuTwo / cpuOne - 1) * 100 : null;
  const lost = (phase) => phase.answeredTotal - phase.rowsTotal;
  const lines = [
    '',
    `Side by side: ${config.connections} connections, ${config.durationS} s measured, ${os.availableParallelism()} CPUs`,
    '',
    table(
      ['', 'one instance', 'two instances'],
      [
        row('answers (measured)', (p) => n(p.run.count)),
        row('req/s', (p) => fmt.rps(p.run.rps)),
        row('p99 ms', (p) => fmt.ms(p.run.p99)),
        row('5xx', (p) => n(fiveXx(p))),
        row('audit rows lost (answered - rows)', (p) => n(lost(p))),
        row('service CPU s (all instances)', (p) => (p.cpuMs / 1000).toFixed(1)),
        row('service CPU µs / answer', (p) => fmt.rps(perAnswer(p.cpuMs, p))),
        row('PostgreSQL CPU µs / answer', (p) => fmt.rps(perAnswer(p.postgresMs, p))),
        row('SSE tool events received', (p) => (p.eventsSeen == null ? '—' : n(p.eventsSeen))),
      ],
      ['l', 'r', 'r'],
    ),
    '',
    `service CPU per answer, two instances against one: ${change == null ? '—' : `${change >= 0 ? '+' : ''}${change.toFixed(1)}%`}`,
  ];
  const checks = [
    ['no 5xx on either', fiveXx(one) + fiveXx(two) === 0, `${fiveXx(one)} / ${fiveXx(two)}`],
    ['no audit row lost on either', lost(one) === 0 && lost(two) === 0, `${lost(one)} / ${lost(two)}`],
    ['service CPU per answer within 10% on two instances', change != null && change < 10, change == null ? 'n/a' : `${change.toFixed(1)}%`],
  ];
  for (const [name, pass, detail] of checks) lines.push(`${verdict(pass)}  ${name} (${detail})`);
  const ok = checks.every(([, pass]) => pass);
  lines.push('', `load (one against two instances): ${ok ? 'PASS' : 'FAIL'}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return ok;
}

// Rows and partitions of the audit table every 10 s while the load runs.
function sampleAuditTable(url) {
  const samples = [];
  const t0 = performance.now();
  const take = () =>
    withClient(url, async (c) => {
      const rows = (await c.query('SELECT count(*)::int AS n FROM invocations')).rows[0].n;
      const partitions = (await c.query("SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'invocations'::regclass")).rows[0].n;
      samples.push({ atS: (performance.now() - t0) / 1000, rows, partitions });
    }).catch(() => undefined);
  const timer = setInterval(() => void take(), 10_000);
  return {
    async stop() {
      clearInterval(timer);
      await take();
      return samples;
    },
  };
}

function report(
  { run, startup, before, after, auditRows, rowsTotal, answeredTotal, serviceLog, logFile, tableSamples, instances },
  title = null,
) {
  const n = (v) => v.toLocaleString('en-US');
  const byStatus = new Map();
  for (const s of run.stats.values()) for (const [code, count] of s.statuses) byStatus.set(code, (byStatus.get(code) ?? 0) + count);
  const statusList = (m) =>
    [...m.entries()]
      .sort(([x], [y]) => x - y)
      .map(([code, count]) => `${code}: ${n(count)}`)
      .join(', ');
  const fiveXx = [...byStatus.entries()].filter(([code]) => code >= 500).reduce((x, [, c]) => x + c, 0);
  const unexpected = [...run.stats.values()].reduce((x, s) => x + s.unexpected, 0);
  const rowStatuses = [...new Set([...auditRows.keys(), ...expectedRows.keys()])].sort();
  const logLines = serviceLog ? serviceLog.split('\n').length : 0;

  const lines = [
    `Toolgate load${title ? ` (${title})` : ''}: ${config.adapter}, PostgreSQL, ${instances} instance(s), ${config.connections} connections, ${config.durationS} s ` +
      `(after ${config.warmupS} s warm-up), ${os.availableParallelism()} CPUs`,
    '',
    `requests   ${n(run.count)} in ${run.elapsedS.toFixed(1)} s = ${fmt.rps(run.rps)} req/s`,
    `statuses   ${statusList(byStatus)}`,
    `latency    p50 ${fmt.ms(run.p50)} ms, p90 ${fmt.ms(run.p90)} ms, p99 ${fmt.ms(run.p99)} ms, max ${fmt.ms(run.max)} ms`,
    `errors     ${run.errors} connection errors, ${run.timeouts} timeouts (> ${REQUEST_TIMEOUT_S} s), ${n(unexpected)} unexpected answers`,
    ...[...run.stats.entries()].map(
      ([key, s]) =>
        `  ${key.padEnd(14)} p50 ${fmt.ms(s.p50).padStart(5)} ms, p99 ${fmt.ms(s.p99).padStart(5)} ms  ${statusList(s.statuses)}` +
        (s.unexpected ? `  (${n(s.unexpected)} unexpected)` : ''),
    ),
    ...unexpectedSamples.map((sample) => `  unexpected: ${sample}`),
    `fds        ${startup.fds} at start, ${before.fds} before, ${after.fds} after (tolerance +${FD_TOLERANCE})`,
    `children   ${startup.children} at start, ${before.children} before, ${after.children} after`,
    `audit      ${n(rowsTotal)} rows, ${n(answeredTotal)} invocations answered (warm-up included)`,
    ...rowStatuses.map((s) => `  ${s.padEnd(18)} ${n(auditRows.get(s) ?? 0)} rows, ${n(expectedRows.get(s) ?? 0)} answered`),
    ...(config.retentionS > 0
      ? [
          `retention  ${config.retentionS.toFixed(0)} s: rows / partitions every 10 s: ` +
            tableSamples.map((s) => `${s.atS.toFixed(0)}s ${n(s.rows)}/${s.partitions}`).join(', '),
        ]
      : []),
    `service    ${logLines} log lines at warn or above`,
    ...(logLines
      ? tail(logFile, 10)
          .split('\n')
          .map((l) => `  | ${l.slice(0, 400)}`)
      : []),
    '',
  ];
  const checks = [
    ['no 5xx', fiveXx === 0, `${n(fiveXx)} answers 5xx`],
    [
      'every request answered as expected',
      unexpected === 0 && run.errors === 0 && run.timeouts === 0,
      `${n(unexpected)} unexpected, ${run.errors} errors, ${run.timeouts} timeouts`,
    ],
    [`p99 latency <= ${config.p99LimitMs} ms`, run.p99 != null && run.p99 <= config.p99LimitMs, `p99 ${fmt.ms(run.p99)} ms`],
    ['open fds do not grow', after.fds <= before.fds + FD_TOLERANCE, `${before.fds} -> ${after.fds}`],
    ['child processes do not grow', after.children <= before.children, `${before.children} -> ${after.children}`],
    config.retentionS > 0
      ? boundedCheck(tableSamples, run)
      : ['audit rows = invocations answered', rowsTotal === answeredTotal, `${n(rowsTotal)} rows, ${n(answeredTotal)} answered`],
  ];
  for (const [name, pass, detail] of checks) lines.push(`${verdict(pass)}  ${name} (${detail})`);
  const ok = checks.every(([, pass]) => pass);
  lines.push('', `load${title ? ` (${title})` : ''}: ${ok ? 'PASS' : 'FAIL'}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return ok;
}

// With retention R the table holds at most the rows of R plus the partition being filled and one sweep's
// delay (partitions are a quarter of R wide, sweeps come every sixteenth): R × 1.5 of calls at the run's rate,
// checked on every sample taken after two windows.
function boundedCheck(samples, run) {
  const limit = Math.ceil(run.rps * config.retentionS * 1.5);
  const late = samples.filter((s) => s.atS >= 2 * config.retentionS);
  const peak = Math.max(0, ...late.map((s) => s.rows));
  const detail = late.length
    ? `peak ${peak.toLocaleString('en-US')} rows after ${2 * config.retentionS} s, limit ${limit.toLocaleString('en-US')}`
    : 'the run was shorter than two retention windows';
  return ['audit table bounded by the retention', late.length > 0 && peak <= limit, detail];
}

let ok = false;
try {
  // `npm run load -- noisy-neighbour` (or LOAD_SCENARIO=noisy-neighbour): one tenant measured beside another's attacks.
  if (process.argv.includes('noisy-neighbour') || process.env.LOAD_SCENARIO === 'noisy-neighbour') {
    await import('./noisy-neighbour.mjs');
    await new Promise(() => {}); // it exits with its own verdict
  }
  ok = await main();
} catch (error) {
  process.stderr.write(`load failed: ${error instanceof Error ? error.stack : String(error)}\n`);
} finally {
  await cleanupAll();
}
process.exit(ok ? 0 : 1);

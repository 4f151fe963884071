// npm run load -- noisy-neighbour (or LOAD_SCENARIO=noisy-neighbour): one tenant (B) works while another (A)
// runs every attack on shared capacity that Toolgate bounds: commands filling /dev/shm past their memory
// limit, as many commands as its budget lets it hold, search_files patterns that cost seconds of CPU per
// MiB, large answers stored under Idempotency-Keys, batches of large answers, and (as an outsider would,
// from the same address as B) small requests with made-up keys of new prefixes. B's calls (read_file,
// write_file, search_files, list_files) are measured alone, then beside A (whose client is a process of its
// own, bench/noisy-attacker.mjs), in the same run. B is measured two ways: as fast as its callers are
// answered (all the event loop it can use: beside a busy A, its fair share is half, so its calls take about
// twice as long at best), and at a steady rate well below that half, as a tenant's ordinary traffic comes
// (there, a call beside A would ideally take as long as alone; the figure shows what A still costs it).
// The report gives B's p50 and p99 each way. Exits 1 when B's p99 as fast as answered beside A is 3x its
// p99 alone or more (the target), or when one of B's calls failed.
//
//   NOISY_DURATION     seconds of each measured phase (default 20)
//   NOISY_B_CALLERS    B's concurrent callers when as fast as answered (default 4)
//   NOISY_B_RATE_SHARE B's steady rate, as a share of the calls per second those callers got alone (default
//                      0.25; near its share of one half, a steady B falls behind beside A and its queue grows)
//   NOISY_A_CALLERS    A's concurrent callers per attack (default 2)
//   NOISY_ATTACKS      which attacks to run, numbered from 1 (default all)
//   LOAD_DATABASE_URL  PostgreSQL server for a scratch database (default: embedded PGlite)
//   HTTP_ADAPTER       express (default) or fastify
//   NOISY_CPU_PROF     a directory: the service runs with --cpu-prof and writes its CPU profile there
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { cleanupAll, defer, trackTempDir } from './lib/cleanup.mjs';
import { databaseFactory } from './lib/database.mjs';
import { closedLoop, openLoop } from './lib/load.mjs';
import { LatencyRecorder } from './lib/stats.mjs';
import { envFraction, envInt } from './lib/processes.mjs';
import { fmt, table, verdict } from './lib/report.mjs';
import { api, assertBuilt, createProject, provisionTenant, startToolgate } from './lib/toolgate.mjs';

const ADMIN_TOKEN = `noisy-${randomUUID()}`;
const METRICS_TOKEN = `metrics-${randomUUID()}`;
const durationS = envInt('NOISY_DURATION', 20, 1);
const bCallers = envInt('NOISY_B_CALLERS', 4, 1);
const aCallers = envInt('NOISY_A_CALLERS', 2, 1);
// B's steady rate, as a share of what its callers got alone: below half, the share of the event loop it
// is owed beside one busy tenant, as a tenant with ordinary traffic is.
const rateShare = envFraction('NOISY_B_RATE_SHARE', 0.25);
const RATIO_LIMIT = 3;

async function main() {
  assertBuilt();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-noisy-'));
  trackTempDir(tmp);
  // Sandboxes run as an unprivileged uid, which must pass through to the workspaces.
  chmodSync(tmp, 0o711);
  const workspaces = path.join(tmp, 'workspaces');
  const database = await databaseFactory(process.env.LOAD_DATABASE_URL?.trim() || '', tmp);
  const service = await startToolgate({
    label: 'toolgate',
    adapter: process.env.HTTP_ADAPTER?.trim() || 'express',
    databaseUrl: (await database.create('noisy')).url,
    adminToken: ADMIN_TOKEN,
    workspaceRoot: workspaces,
    logFile: path.join(tmp, 'service.log'),
    env: { SHELL_MAX_MEMORY_BYTES: String(256 * 1024 * 1024), RATE_LIMIT_COMMAND_CALLS: '100000', METRICS_TOKEN },
    nodeArgs: process.env.NOISY_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.NOISY_CPU_PROF}`] : [],
  });
  defer('stop toolgate', () => service.stop?.());

  const a = await provisionTenant(service, ADMIN_TOKEN, 'attacker');
  const b = await provisionTenant(service, ADMIN_TOKEN, 'neighbour');
  const attackProject = (await createProject(service, a.key, 'attacks')).id;
  await api(service.baseUrl, 'PATCH', `/v1/projects/${attackProject}`, {
    token: a.key,
    body: { shellEnabled: true, shellAllowlist: ['sh', 'head', 'sleep', 'seq'] },
  });
  // A's costly search corpus: 200 KiB (search_files reads files up to WORKSPACE_FILE_MAX_BYTES) of text the
  // pattern below backtracks over, seconds of CPU each time; and a large file for answers.
  const line = 'abcdefghij '.repeat(9) + '\n';
  writeFileSync(path.join(workspaces, attackProject, 'corpus.txt'), line.repeat(Math.floor((200 * 1024) / line.length)));
  writeFileSync(path.join(workspaces, attackProject, 'large.txt'), 'L'.repeat(256 * 1024));
  writeFileSync(
    path.join(workspaces, b.projectId, 'notes.md'),
    Array.from({ length: 200 }, (_, i) => `note ${i}: the neighbour's text\n`).join(''),
  );

  const call = (tenant, project, tool, args) =>
    fetch(`${service.baseUrl}/v1/projects/${project}/tools/${tool}/invoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: args }),
    }).then(async (res) => ({ status: res.status, body: await res.json() }));

  let writes = 0;
  // Each of B's calls is timed by tool too, into the phase's recorders: which of them A's attacks slow down.
  let byTool = {};
  const timed = (tool, args) => async () => {
    const started = performance.now();
    try {
      return await call(b, b.projectId, tool, args());
    } finally {
      (byTool[tool] ??= new LatencyRecorder()).record(performance.now() - started);
    }
  };
  const neighbourCalls = [
    timed('read_file', () => ({ path: 'notes.md', limit: 20 })),
    timed('write_file', () => ({ path: `out/${writes++ % 20}.txt`, content: 'written by the neighbour', createDirs: true })),
    timed('search_files', () => ({ pattern: 'neighbour', path: '.' })),
    timed('list_files', () => ({ path: '.' })),
  ];
  // The event loop's delay over a phase: the service's lag histogram starts again at each scrape of /metrics.
  const loopDelay = async () => {
    const text = await (await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const seconds = (name) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
    return {
      p99: seconds('nodejs_eventloop_lag_p99_seconds') * 1000,
      max: seconds('nodejs_eventloop_lag_max_seconds') * 1000,
    };
  };
  let turn = 0;
  // A phase of B's calls: at a steady `rate` per second (open loop), or as fast as its callers get answers.
  const neighbour = async (rate) => {
    byTool = {};
    await loopDelay();
    const load = {
      durationS,
      call: () => neighbourCalls[turn++ % neighbourCalls.length](),
      isExpected: (res) => res?.status === 200 && res.body.status === 'ok',
    };
    const phase = rate === undefined ? await closedLoop({ ...load, concurrency: bCallers }) : await openLoop({ ...load, rate });
    return {
      ...phase,
      loop: await loopDelay(),
      byTool: Object.fromEntries(Object.entries(byTool).map(([tool, recorder]) => [tool, recorder.summary()])),
    };
  };

  // Each of B's calls once (and each attack once, by the attacker) must answer as expected before anything is measured.
  for (const fn of neighbourCalls) {
    const res = await fn();
    if (res.status !== 200 || res.body.status !== 'ok')
      throw new Error(`tenant B's call answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  }
  // Alone, B's callers as fast as answers come: all the event loop B can use, and the rate its steady
  // traffic takes a share of.
  process.stderr.write(`measuring tenant B alone, as fast as it is answered, for ${durationS} s\n`);
  const aloneFlat = await neighbour();
  const rate = Math.max(1, Math.round(aloneFlat.rps * rateShare));
  process.stderr.write(`measuring tenant B alone at ${rate} calls/s for ${durationS} s\n`);
  const alone = await neighbour(rate);

  // A's attacks, in a process of their own (bench/noisy-attacker.mjs), for as long as B is measured again.
  const only = process.env.NOISY_ATTACKS?.split(',').map(Number);
  const attacker = spawn(process.execPath, [path.join(import.meta.dirname, 'noisy-attacker.mjs')], {
    env: {
      ...process.env,
      NOISY_ATTACKER: JSON.stringify({ baseUrl: service.baseUrl, key: a.key, project: attackProject, callers: aCallers, only }),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  defer('stop the attacker', () => attacker.kill());
  const attackerLines = createInterface({ input: attacker.stdout })[Symbol.asyncIterator]();
  const attackerLine = async () => {
    const { value, done } = await attackerLines.next();
    if (done) throw new Error(`the attacker's process ended (exit code ${attacker.exitCode})`);
    return value;
  };
  if ((await attackerLine()) !== 'ready') throw new Error("the attacker's process did not start its attacks");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  process.stderr.write(`measuring tenant B beside tenant A's attacks at ${rate} calls/s for ${durationS} s\n`);
  const beside = await neighbour(rate);
  process.stderr.write(`measuring tenant B beside tenant A's attacks, as fast as it is answered, for ${durationS} s\n`);
  const besideFlat = await neighbour();
  attacker.stdin.write('stop\n');
  const counts = JSON.parse(await attackerLine());
  const usage = (await api(service.baseUrl, 'GET', `/v1/admin/tenants/${a.tenantId}/usage`, { token: ADMIN_TOKEN })).json;

  const ratio = besideFlat.p99 / aloneFlat.p99;
  const steadyRatio = beside.p99 / alone.p99;
  const failed = alone.errors + beside.errors + aloneFlat.errors + besideFlat.errors;
  console.log(
    `\nNoisy neighbour: tenant B (read_file, write_file, search_files, list_files in turn) alone and beside tenant A's attacks (${aCallers} callers each), ${durationS} s each; B's steady rate is ${Math.round(rateShare * 100)}% of what its ${bCallers} callers got alone\n`,
  );
  console.log(
    table(
      ['Tenant B', 'calls', 'failed', 'p50', 'p99'],
      [
        [`alone, ${rate} calls/s`, String(alone.requests), String(alone.errors), fmt.ms(alone.p50), fmt.ms(alone.p99)],
        [`beside A, ${rate} calls/s`, String(beside.requests), String(beside.errors), fmt.ms(beside.p50), fmt.ms(beside.p99)],
        [`alone, ${bCallers} callers`, String(aloneFlat.requests), String(aloneFlat.errors), fmt.ms(aloneFlat.p50), fmt.ms(aloneFlat.p99)],
        [
          `beside A, ${bCallers} callers`,
          String(besideFlat.requests),
          String(besideFlat.errors),
          fmt.ms(besideFlat.p50),
          fmt.ms(besideFlat.p99),
        ],
      ],
      ['left', 'right', 'right', 'right', 'right'],
    ),
  );
  console.log(
    `\n${table(
      ['B by tool, p99', 'as fast: alone', 'beside A', 'ratio', 'steady: alone', 'beside A', 'ratio'],
      Object.keys(aloneFlat.byTool).map((tool) => {
        const pair = (one, two) => [
          fmt.ms(one.byTool[tool]?.p99),
          fmt.ms(two.byTool[tool]?.p99),
          one.byTool[tool] && two.byTool[tool] ? `${(two.byTool[tool].p99 / one.byTool[tool].p99).toFixed(2)}x` : '-',
        ];
        return [tool, ...pair(aloneFlat, besideFlat), ...pair(alone, beside)];
      }),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
    )}`,
  );
  console.log(
    `\nThe event loop's delay (the service's own histogram): alone p99 ${fmt.ms(alone.loop.p99)}, max ${fmt.ms(alone.loop.max)}; beside A p99 ${fmt.ms(beside.loop.p99)}, max ${fmt.ms(beside.loop.max)}`,
  );
  console.log(
    `\nB's p99 as fast as answered, beside A / alone: ${ratio.toFixed(2)}x (target < ${RATIO_LIMIT}x): ${verdict(ratio < RATIO_LIMIT)}; B's calls beside A: ${Math.round((100 * besideFlat.requests) / aloneFlat.requests)}% of alone (its fair share beside one busy tenant: half the event loop)`,
  );
  console.log(`B's p99 at a steady ${rate} calls/s, beside A / alone: ${steadyRatio.toFixed(2)}x (not a target yet)`);
  console.log(`B's calls that failed: ${failed}: ${verdict(failed === 0)}\n`);
  console.log(
    table(
      ['Attack by A', 'calls', 'answers'],
      Object.entries(counts).map(([name, c]) => [
        name,
        String(c.sent),
        Object.entries(c.answered)
          .map(([k, n]) => `${k} ×${n}`)
          .join(', '),
      ]),
    ),
  );
  console.log(`\nA's budgets after the run: ${JSON.stringify(usage.budgets)}; in use: ${JSON.stringify(usage.usage)}`);
  return ratio < RATIO_LIMIT && failed === 0;
}

main()
  .then(async (ok) => {
    await cleanupAll();
    process.exit(ok ? 0 : 1);
  })
  .catch(async (error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    await cleanupAll();
    process.exit(1);
  });

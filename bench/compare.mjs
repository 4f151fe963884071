// Two builds of Toolgate measured against each other in one run, for a change whose effect is smaller than
// what a shared machine does from one minute to the next (the same build's CPU per answer moved by a fifth
// between consecutive `npm run bench` runs on a 2-vCPU machine, and by a third between neighbouring 2 s
// slices). Both services run side by side under the same load at the same time (25 connections each), in
// slices, and each slice gives one ratio of their CPU per answer: the machine's drift falls on both sides.
//   npm run build                                         (this checkout)
//   git worktree add /tmp/before <commit> && (cd /tmp/before && npm ci && npm run build)
//   BENCH_COMPARE_WITH=/tmp/before DATABASE_URL=postgresql://... node bench/compare.mjs
// BENCH_SCENARIO: invalid_args (default) or read_file; BENCH_ADAPTER: fastify (default) or express;
// BENCH_ROUNDS (slices, 12), BENCH_SLICE_S (2). CPU is the service process's, all threads, from /proc (PostgreSQL is
// shared by both and not counted). Prints each side's median and the median, spread and count of the
// paired ratios (this checkout / the other).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanupAll, trackTempDir } from './lib/cleanup.mjs';
import { databaseFactory } from './lib/database.mjs';
import { BENCH_FILE, writeBenchFile } from './lib/fixtures.mjs';
import { httpLoad } from './lib/load.mjs';
import { percentile } from './lib/stats.mjs';
import { REPO_ROOT, assertBuilt, provisionTenant, startToolgate } from './lib/toolgate.mjs';

const SCENARIOS = {
  invalid_args: { body: { arguments: { path: 5 } }, expectStatus: 422 },
  read_file: { body: { arguments: { path: BENCH_FILE } }, expectStatus: 200 },
};
const CLOCK_TICKS_PER_S = 100;

// utime + stime of every thread of the process, in ms (/proc/<pid>/stat counts clock ticks).
function processCpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

const median = (values) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

async function compare() {
  const other = process.env.BENCH_COMPARE_WITH?.trim();
  if (!other) throw new Error('BENCH_COMPARE_WITH must name another checkout, built (npm run build there)');
  const scenarioKey = process.env.BENCH_SCENARIO ?? 'invalid_args';
  const scenario = SCENARIOS[scenarioKey];
  if (!scenario) throw new Error(`BENCH_SCENARIO must be one of ${Object.keys(SCENARIOS).join(', ')}, got '${scenarioKey}'`);
  const adapter = process.env.BENCH_ADAPTER ?? 'fastify';
  const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
  const sliceS = Number(process.env.BENCH_SLICE_S ?? 2);
  const sides = [
    { name: 'this checkout', root: REPO_ROOT },
    { name: path.resolve(other), root: path.resolve(other) },
  ];
  for (const side of sides) assertBuilt(side.root);

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolgate-compare-'));
  trackTempDir(tmp);
  const databaseUrl = process.env.DATABASE_URL?.trim();
  const databases = await databaseFactory(databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl) ? databaseUrl : null, tmp);
  const adminToken = randomBytes(24).toString('hex');
  for (const [i, side] of sides.entries()) {
    const workspaces = path.join(tmp, `workspaces-${i}`);
    mkdirSync(workspaces);
    const database = await databases.create(`compare_${i}`);
    side.service = await startToolgate({
      label: `Toolgate ${adapter} (${side.name})`,
      adapter,
      databaseUrl: database.url,
      adminToken,
      workspaceRoot: workspaces,
      logFile: path.join(tmp, `toolgate-${i}.log`),
      root: side.root,
    });
    const tenant = await provisionTenant(side.service, adminToken, `compare-${i}`);
    writeBenchFile(path.join(workspaces, tenant.projectId));
    side.load = (durationS) =>
      httpLoad({
        url: `${side.service.baseUrl}/v1/projects/${tenant.projectId}/tools/read_file/invoke`,
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.key}` },
        body: scenario.body,
        expectStatus: scenario.expectStatus,
        connections: 25,
        durationS,
      });
    side.slices = [];
  }
  // One slice: both services under the same load at the same time, so whatever the machine does during the
  // slice (another tenant of the host, frequency changes) it does to both.
  const slice = async () => {
    const before = sides.map((side) => processCpuMs(side.service.pid));
    const runs = await Promise.all(sides.map((side) => side.load(sliceS)));
    sides.forEach((side, i) => {
      if (runs[i].errors > 0) throw new Error(`${side.name}: ${runs[i].errors} unexpected answers in a ${scenarioKey} slice`);
      side.slices.push((processCpuMs(side.service.pid) - before[i]) / runs[i].requests);
    });
    return sides[0].slices.at(-1) / sides[1].slices.at(-1);
  };
  process.stderr.write(`${scenarioKey} on ${adapter}, ${rounds} slices of ${sliceS} s; warming up\n`);
  await Promise.all(sides.map((side) => side.load(3)));
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    ratios.push(await slice());
    process.stderr.write(`slice ${round + 1}: ${ratios.at(-1).toFixed(3)}\n`);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const lines = [
    `${scenarioKey}, Toolgate ${adapter}: service CPU ms per answer (all threads), ${rounds} slices of ${sliceS} s, 25 connections to each at once`,
    ...sides.map((side) => `  ${side.name}: median ${median(side.slices).toFixed(3)} ms (${side.slices.length} slices)`),
    `  this / other, per slice: median ${median(ratios).toFixed(3)}, middle half ${percentile(sorted, 25).toFixed(3)}-${percentile(sorted, 75).toFixed(3)}, ` +
      `range ${sorted[0].toFixed(3)}-${sorted.at(-1).toFixed(3)}; below 1 in ${ratios.filter((r) => r < 1).length} of ${ratios.length} slices`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  for (const side of sides) await side.service.stop();
}

let failed = false;
try {
  await compare();
} catch (error) {
  failed = true;
  process.stderr.write(`compare failed: ${error instanceof Error ? error.stack : String(error)}\n`);
} finally {
  await cleanupAll();
}
process.exitCode = failed ? 1 : 0;

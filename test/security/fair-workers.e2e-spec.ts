import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { httpTool, installSkill, skillOf, STRING_ARG } from '../e2e/skills/skill-test-kit.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { AuditTrail, invoke } from './security-helpers.js';
import { WorkspaceQuota } from '../../src/workspace/workspace-quota.js';

// docs/security-model.md 104 and 107, over HTTP against the real service: one tenant holding the shared worker
// pool (sync skills at an endpoint that never answers, costly search patterns) must not slow another's
// file tools past 3x, and a file tool call audited `timeout` must never have its write land afterwards.

const MiB = 1024 * 1024;
const COSTLY_PATTERN = '[a-j ]{1,400}[ab]{40}';
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Text RE2 scans at tens of µs a character with COSTLY_PATTERN: lines of 1,000 characters of [a-j ].
function costlyText(bytes: number): string {
  const alphabet = 'abcdefghij ';
  const chars: string[] = [];
  for (let i = 1; i <= bytes; i++) chars.push(i % 1000 === 0 ? '\n' : alphabet[(i * 7919) % alphabet.length]);
  return chars.join('');
}

// An HTTP endpoint that reads requests and never answers them.
async function silentEndpoint(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = http.createServer(() => undefined);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/never`,
    close: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('[sec-104] one tenant cannot hold the worker pool', () => {
  let t: TestApp;
  let endpoint: Awaited<ReturnType<typeof silentEndpoint>>;
  let a: TestTenant;
  let b: TestTenant;
  let aProject: string;
  let bProject: string;
  // Fresh projects of B: the first write in each measures its workspace against the quota (in the pool).
  const bWriteProjects: string[] = [];
  let nextWriteProject = 0;

  beforeAll(async () => {
    endpoint = await silentEndpoint();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: new URL(endpoint.url).host } });
    a = await t.createTenant();
    b = await t.createTenant();
    aProject = (await t.createProject(a)).id;
    bProject = (await t.createProject(b)).id;
    for (let i = 0; i < 12; i++) bWriteProjects.push((await t.createProject(b)).id);
    await installSkill(
      t,
      a,
      aProject,
      skillOf([httpTool('wait_forever', endpoint.url, STRING_ARG('q'), { mode: 'sync', timeoutMs: 120_000 })]),
    );
    const aws = t.workspaceOf(aProject);
    const costly = costlyText(MiB - 1);
    for (let i = 0; i < 2; i++) await writeFile(path.join(aws, `costly-${i}.txt`), costly);
    const bws = t.workspaceOf(bProject);
    await mkdir(path.join(bws, 'src'), { recursive: true });
    for (let i = 0; i < 40; i++)
      await writeFile(path.join(bws, 'src', `f${i}.ts`), `export const v${i} = ${i};\n// needle ${i}\n`.repeat(20));
  }, 120_000);

  afterAll(async () => {
    await endpoint?.close();
    await t?.close();
  });

  // Each of B's calls, timed: a search, a write that measures a workspace, a read.
  async function sampleB(rounds: number): Promise<Record<'search' | 'write' | 'read', number[]>> {
    const times = { search: [] as number[], write: [] as number[], read: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      let started = Date.now();
      const search = await invoke(t, b, bProject, 'search_files', { pattern: 'needle 3[7]', path: 'src' });
      times.search.push(Date.now() - started);
      expect(search.body).toMatchObject({ status: 'ok', result: { truncated: false } });
      started = Date.now();
      const project = bWriteProjects[nextWriteProject++];
      const write = await invoke(t, b, project, 'write_file', { path: 'out.txt', content: `round ${i}` });
      times.write.push(Date.now() - started);
      expect(write.body).toMatchObject({ status: 'ok' });
      started = Date.now();
      const read = await invoke(t, b, bProject, 'read_file', { path: 'src/f1.ts' });
      times.read.push(Date.now() - started);
      expect(read.body).toMatchObject({ status: 'ok' });
    }
    return times;
  }

  it("[sec-104] keeps another tenant's search_files, write_file (quota measured) and read_file within 3x while one tenant holds the pool; the costly search answers a partial result with its reason", async () => {
    // Warm: threads started, code paths compiled.
    await sampleB(1);
    const before = await sampleB(5);

    // Each sent at once (`.then`): a supertest request starts only when it is first awaited.
    const held = [
      invoke(t, a, aProject, 'wait_forever', { q: 'one' }, { timeoutMs: 120_000 }).then((res) => res),
      invoke(t, a, aProject, 'wait_forever', { q: 'two' }, { timeoutMs: 120_000 }).then((res) => res),
    ];
    const costly = [0, 1, 2, 3].map((i) =>
      invoke(t, a, aProject, 'search_files', { pattern: COSTLY_PATTERN, path: `costly-${i % 2}.txt` }).then((res) => res),
    );
    let costlyDone = 0;
    costly.forEach((c) => void c.then(() => costlyDone++));
    await sleep(500);
    const during = await sampleB(5);
    // B was measured while A's load ran, not after it.
    expect(costlyDone).toBeLessThan(4);

    const ratios: Record<string, number> = {};
    for (const tool of ['search', 'write', 'read'] as const) {
      // A floor of 50 ms under the unloaded median: a 3 ms read is not judged on scheduler noise (other suites
      // share the two cores); the attack it guards against costs seconds (a held pool waits 15-30 s). A search
      // runs in its tenant's idle cpu group, which gets only the CPU the rest of the machine leaves: beside
      // CI's other suites B's searches took a median of 317 ms once (16 ms before A started), so it is judged
      // against 200 ms, still a twentieth of what a held pool costs.
      ratios[tool] = median(during[tool]) / Math.max(median(before[tool]), tool === 'search' ? 200 : 50);
      process.stderr.write(
        `[sec-104] ${tool}: before ${JSON.stringify(before[tool])} (median ${median(before[tool])} ms), during ${JSON.stringify(during[tool])} (median ${median(during[tool])} ms), ratio ${ratios[tool].toFixed(2)}\n`,
      );
    }
    expect(ratios.search).toBeLessThanOrEqual(3);
    expect(ratios.write).toBeLessThanOrEqual(3);
    expect(ratios.read).toBeLessThanOrEqual(3);

    for (const answer of await Promise.all(costly)) {
      expect(answer.body).toMatchObject({ status: 'ok', result: { truncated: true, stoppedBy: 'budget' } });
      expect((answer.body as { result: { hint: string } }).result.hint).toMatch(/stopped after 5 s.*narrow the pattern/i);
    }
    // The sync skills still wait on their endpoint; closing it ends them.
    await endpoint.close();
    for (const answer of await Promise.all(held)) expect(answer.body).toMatchObject({ status: 'error' });
  }, 120_000);
});

// Answers within every cap, at the rate limit: list_files of one directory of 60,000 long names, 10,000 entries
// with details each (4 MB of JSON). Read, sorted and written out on the event loop, eight such calls at a time
// held it enough to make another tenant's write_file 90x slower.
describe('[sec-104] one tenant listing a huge directory does not hold the event loop', () => {
  const FILES = 60_000;
  let t: TestApp;
  let a: TestTenant;
  let b: TestTenant;
  let aProject: string;
  let bProject: string;

  beforeAll(async () => {
    t = await createTestApp();
    a = await t.createTenant();
    b = await t.createTenant();
    aProject = (await t.createProject(a)).id;
    bProject = (await t.createProject(b)).id;
    const big = path.join(t.workspaceOf(aProject), 'big');
    await mkdir(big);
    const { closeSync, openSync } = await import('node:fs');
    for (let i = 0; i < FILES; i++) closeSync(openSync(path.join(big, `${String(i).padStart(6, '0')}-${'n'.repeat(120)}.txt`), 'w'));
    await writeFile(path.join(t.workspaceOf(bProject), 'notes.md'), 'note\n'.repeat(100));
  }, 120_000);

  afterAll(async () => {
    await t?.close();
  });

  async function sampleB(rounds: number): Promise<Record<'write' | 'read', number[]>> {
    const times = { write: [] as number[], read: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      let started = Date.now();
      expect((await invoke(t, b, bProject, 'write_file', { path: `out-${i}.txt`, content: `round ${i}` })).body).toMatchObject({
        status: 'ok',
      });
      times.write.push(Date.now() - started);
      started = Date.now();
      expect((await invoke(t, b, bProject, 'read_file', { path: 'notes.md' })).body).toMatchObject({ status: 'ok' });
      times.read.push(Date.now() - started);
    }
    return times;
  }

  it("[sec-104] keeps another tenant's write_file and read_file within 3x while eight such listings run at a time", async () => {
    const first = await invoke(t, a, aProject, 'list_files', { path: 'big', details: true, limit: 10_000 });
    expect(first.body).toMatchObject({ status: 'ok', result: { truncated: true } });
    expect(first.body.result.entries).toHaveLength(10_000);
    expect(first.body.result.entries[0]).toMatchObject({ name: `000000-${'n'.repeat(120)}.txt`, type: 'file', size: 0 });
    await sampleB(2);
    const before = await sampleB(8);

    let listing = true;
    let listed = 0;
    const lister = async () => {
      while (listing) {
        const res = await invoke(t, a, aProject, 'list_files', { path: 'big', details: true, limit: 10_000 });
        expect(res.status).toBe(200);
        listed++;
      }
    };
    const listers = Array.from({ length: 8 }, lister);
    await sleep(300);
    // Twelve rounds: a median of eight was once 3.4x on a loaded CI machine, when the same build measured
    // 0.1-0.6x in every other run.
    const during = await sampleB(12);
    listing = false;
    await Promise.all(listers);
    // A's listings ran all along.
    expect(listed).toBeGreaterThanOrEqual(4);

    for (const tool of ['write', 'read'] as const) {
      // A floor of 20 ms under the unloaded median: a 6 ms read is not judged on scheduler noise.
      const ratio = median(during[tool]) / Math.max(median(before[tool]), 20);
      process.stderr.write(
        `[sec-104] ${tool} beside ${listed} listings of ${FILES} names: before ${JSON.stringify(before[tool])}, during ${JSON.stringify(during[tool])}, ratio ${ratio.toFixed(2)}\n`,
      );
      expect(ratio).toBeLessThanOrEqual(3);
    }
  }, 180_000);
});

describe('[sec-107] a file tool call audited timeout never writes afterwards', () => {
  let t: TestApp;
  let a: TestTenant;
  let b: TestTenant;
  let aProject: string;
  let bigProject: string;

  beforeAll(async () => {
    // One shared thread and the reserved one: a costly search and one slow quota measurement fill the pool.
    t = await createTestApp({ env: { WORKER_POOL_THREADS: '1', WORKER_POOL_TENANT_THREADS: '1' } });
    a = await t.createTenant();
    b = await t.createTenant();
    aProject = (await t.createProject(a)).id;
    bigProject = (await t.createProject(a)).id;
    await writeFile(path.join(t.workspaceOf(aProject), 'costly.txt'), costlyText(MiB - 1));
    // Enough entries that measuring the workspace takes a while.
    const big = t.workspaceOf(bigProject);
    for (let d = 0; d < 60; d++) {
      const dir = path.join(big, `d${d}`);
      await mkdir(dir);
      await Promise.all(Array.from({ length: 1000 }, (_, f) => writeFile(path.join(dir, `f${f}`), '')));
    }
  }, 300_000);

  afterAll(async () => {
    await t?.close();
  });

  it('[sec-107] a write that times out while its quota measurement is queued behind the pool is not written, and its row says timeout', async () => {
    // Sent at once: a supertest request starts only when it is first awaited.
    const search = invoke(t, a, aProject, 'search_files', { pattern: COSTLY_PATTERN }).then((res) => res);
    await sleep(300);
    const outcomes: Array<{ project: string; path: string; status: string }> = [];
    const project = (await t.createProject(b)).id;
    // The big workspace's first write: its measurement takes the reserved thread. (Both workspaces may have
    // been measured already, in the background, when their projects were made: forgotten, each is measured
    // at its first write.)
    const quota = t.app.get(WorkspaceQuota);
    quota.forget(t.workspaceOf(bigProject));
    quota.forget(t.workspaceOf(project));
    const bigWrite = invoke(t, a, bigProject, 'write_file', { path: 'big.txt', content: 'x' }).then((res) => res);
    await sleep(30);
    const res = await invoke(t, b, project, 'write_file', { path: 'late.txt', content: 'should not land late' }, { timeoutMs: 50 });
    outcomes.push({ project, path: 'late.txt', status: (res.body as { status: string }).status });
    expect((await bigWrite).body).toMatchObject({ status: 'ok' });
    expect((await search).body).toMatchObject({ status: 'ok', result: { stoppedBy: 'budget' } });
    // Whatever was still going on has had time to land.
    await sleep(2000);

    let timedOut = 0;
    for (const outcome of outcomes) {
      const rows = await new AuditTrail(t, b, outcome.project).rows();
      const row = rows.find((r) => r.tool === 'write_file') as unknown as {
        status: string;
        finishedAt: string;
        errorMessage: string | null;
      };
      expect(row.status).toBe(outcome.status);
      const file = path.join(t.workspaceOf(outcome.project), outcome.path);
      process.stderr.write(`[sec-107] ${outcome.path}: audited ${row.status}, file ${existsSync(file) ? 'present' : 'absent'}\n`);
      if (row.status === 'timeout') {
        timedOut++;
        expect(existsSync(file)).toBe(false);
        expect(row.errorMessage).toMatch(/before it changed anything/);
      } else {
        expect(row.status).toBe('ok');
        expect(await readFile(file, 'utf8')).toBe('should not land late');
        // Written before the row was closed.
        expect((await stat(file)).mtimeMs).toBeLessThanOrEqual(Date.parse(row.finishedAt) + 1);
      }
    }
    // The case this test is about happened at least once: a write stopped while it waited.
    expect(timedOut).toBeGreaterThan(0);
  }, 120_000);

  it('[sec-107] short deadlines at every point of a write: the audit row and the file always agree', async () => {
    const names: Array<{ project: string; status: string }> = [];
    for (let i = 0; i < 20; i++) {
      // A fresh project for each: its first write measures the workspace in the pool.
      const project = (await t.createProject(b)).id;
      const res = await invoke(t, b, project, 'write_file', { path: 'w.txt', content: `content ${i}` }, { timeoutMs: 1 + (i % 10) });
      names.push({ project, status: (res.body as { status: string }).status });
    }
    await sleep(1000);
    for (const { project, status } of names) {
      const rows = (await new AuditTrail(t, b, project).rows()).filter((r) => r.tool === 'write_file');
      const present = existsSync(path.join(t.workspaceOf(project), 'w.txt'));
      expect({ answered: status, audited: rows.map((r) => r.status), present }).toEqual({
        answered: status,
        audited: [status],
        present: status === 'ok',
      });
    }
    process.stderr.write(
      `[sec-107] short deadlines: ${names.filter((n) => n.status === 'ok').length} ok, ${names.filter((n) => n.status === 'timeout').length} timeout\n`,
    );
  }, 120_000);
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TenantCpuShares } from '../../src/common/cpu-shares/tenant-cpu-shares.js';
import { describeSandboxed } from '../support/sandbox.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { invoke } from './security-helpers.js';

// docs/security-model.md, cases 103 and 104: the CPU, shared by tenant. One tenant running four busy commands
// once had four times the CPU of a neighbour running one: the kernel shares the CPU between processes, not
// tenants. Each tenant's commands and worker-pool tasks now run in a cpu cgroup of its own (cgroup v1
// here), and the groups weigh alike. Measured in one run: the same busy loop, four of A's beside one of B's.

// A loop of the shell's own arithmetic: CPU and nothing else, no process started per turn.
const BUSY = 'i=0; while [ $i -lt 2500000 ]; do i=$((i+1)); done; echo done';

type Answer = { status: string; result?: { exitCode: number | null; stdout: string } };

const cpuGroupsHere = existsSync('/sys/fs/cgroup/cpu/cpu.shares') && process.getuid?.() === 0;

describeSandboxed("[sec-104] a tenant's commands and pool tasks share the CPU as one tenant", () => {
  let t: TestApp;
  let a: TestTenant;
  let b: TestTenant;
  let aProject: string;
  let bProject: string;
  let groups: string | undefined;

  const busy = async (tenant: TestTenant, project: string) => {
    // The tenant's mark as the shell's $0: the loop's process can be found by its command line.
    const res = await invoke(t, tenant, project, 'shell_exec', { argv: ['sh', '-c', BUSY, `tenant-${tenant.id}`], timeoutMs: 120_000 });
    expect(res.status).toBe(200);
    expect(res.body as Answer).toMatchObject({ status: 'ok', result: { exitCode: 0, stdout: 'done\n' } });
  };

  beforeAll(async () => {
    t = await createTestApp();
    const shares = t.app.get(TenantCpuShares);
    groups = shares.enabled ? /^cgroup v1 (.+)$/.exec(shares.detail)?.[1] : undefined;
    if (!groups) process.stderr.write(`No cpu cgroups for tenants here (${shares.detail}): the CPU is shared by process\n`);
    a = await t.createTenant();
    b = await t.createTenant();
    aProject = (await t.createProject(a, { shellEnabled: true, shellAllowlist: ['sh'] })).id;
    bProject = (await t.createProject(b, { shellEnabled: true, shellAllowlist: ['sh'] })).id;
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('finds the tenant cpu cgroups wherever the host offers a writable v1 cpu hierarchy', () => {
    // This host kind (and CI's) offers one; a host without it says why above and shares by process.
    expect(groups !== undefined).toBe(cpuGroupsHere);
  });

  it("makes the tenants' groups yield the CPU to the service's own threads", () => {
    if (!groups) return;
    // An idle group (cpu.idle 1) where the kernel has it, else the least weight (cpu.shares 2): the event
    // loop, which answers every tenant, preempts a tenant's commands and pool tasks, not the other way round.
    const idle = path.join(groups, 'cpu.idle');
    if (existsSync(idle)) expect(readFileSync(idle, 'utf8').trim()).toBe('1');
    else expect(readFileSync(path.join(groups, 'cpu.shares'), 'utf8').trim()).toBe('2');
    // The tenants' own groups inside weigh alike, as before: the CPU they get is shared by tenant.
    const aGroup = t.app.get(TenantCpuShares).commandGroup(a.id)!;
    expect(readFileSync(path.join(aGroup, 'cpu.shares'), 'utf8').trim()).toBe('1024');
    expect(readFileSync(path.join(aGroup, 'cpu.idle'), 'utf8').trim()).toBe('0');
  });

  it("runs a tenant's commands in its own group, whatever they start", async () => {
    if (!groups) return;
    // Sent now (a supertest request starts when it is first awaited).
    const held = invoke(t, a, aProject, 'shell_exec', { argv: ['sh', '-c', 'sleep 3 & sleep 3; wait'], timeoutMs: 30_000 }).then(
      (res) => res,
    );
    const procs = path.join(groups, `tenant-${a.id}`, 'cgroup.procs');
    let seen: string[] = [];
    for (let i = 0; i < 100 && seen.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = existsSync(procs) ? readFileSync(procs, 'utf8').split('\n').filter(Boolean) : [];
    }
    // bubblewrap, the shell and its two sleeps at least: the sandbox was born in the group.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const pid of seen) expect(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).toMatch(new RegExp(`:cpu:.*/tenant-${a.id}$`, 'm'));
    expect((await held).status).toBe(200);
    // Nothing of B's ran there.
    const bProcs = path.join(groups, `tenant-${b.id}`, 'cgroup.procs');
    expect(existsSync(bProcs) ? readFileSync(bProcs, 'utf8').trim() : '').toBe('');
  }, 60_000);

  it("runs a pool task on a thread in its tenant's group", async () => {
    if (!groups) return;
    await invoke(t, b, bProject, 'write_file', { path: 'notes.md', content: 'needle\n' }).expect(200);
    const res = await invoke(t, b, bProject, 'search_files', { pattern: 'needle', path: '.' });
    expect(res.body).toMatchObject({ status: 'ok' });
    // The thread stays where its last task put it: one of this process's threads is in B's group.
    const tasks = readFileSync(path.join(groups, `tenant-${b.id}`, 'tasks'), 'utf8')
      .split('\n')
      .filter(Boolean);
    const ours = new Set(readdirSync(`/proc/${process.pid}/task`));
    expect(tasks.some((tid) => ours.has(tid))).toBe(true);
  }, 60_000);

  it("gives one busy command of B its tenant's share beside four of A's: B's loop has as much CPU as A's four together", async () => {
    if (!groups) return;
    // CPU time, not wall time: read from each sandboxed process's own clock (/proc/<pid>/stat) while all five
    // run. Wall time also counts what the rest of the machine takes (CI runs suites side by side, and the
    // tenants' group yields to all of it), which made a ratio of end times drift from 2.4 down to 1.4.
    const aClock = new CpuClock(`tenant-${a.id}`);
    const bClock = new CpuClock(`tenant-${b.id}`);
    const aRuns = Array.from({ length: 4 }, () => busy(a, aProject));
    // A's four are running before B's starts.
    await new Promise((resolve) => setTimeout(resolve, 500));
    let bDone = false;
    const bRun = busy(b, bProject).finally(() => (bDone = true));
    // From B's first process on, A's group and B's compete; A's head start is left out.
    let aAtStart: number | undefined;
    let aSpent = 0;
    let bSpent = 0;
    while (!bDone) {
      const aNow = aClock.sample();
      const bNow = bClock.sample();
      if (aAtStart === undefined && bClock.running > 0) aAtStart = aNow;
      if (aAtStart !== undefined && bClock.running > 0) {
        aSpent = aNow - aAtStart;
        bSpent = bNow;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await bRun;
    await Promise.all(aRuns);
    const ratio = aSpent / bSpent;
    process.stderr.write(
      `[sec-104] while B's loop ran: CPU of B's one command ${bSpent} ms, of A's four together ${aSpent} ms (A's / B's: ${ratio.toFixed(2)})\n`,
    );
    // Shared by process, A's four have about four times B's one (3.4 measured with TENANT_CPU_GROUPS=off).
    // By tenant, the groups weigh alike: 1x in theory, 1.9-2.1 measured, with or without two busy processes
    // beside (the kernel balances a group's weight per core only roughly, and B's one thread can use one core).
    expect(bSpent).toBeGreaterThan(1000);
    expect(ratio).toBeLessThan(2.7);
  }, 180_000);
});

// The CPU time (user and system, in ms) of the running processes whose command line holds a mark, each
// counted at the last value seen: a process that has ended keeps what it had spent.
class CpuClock {
  private readonly spent = new Map<string, number>();
  private readonly tick = 1000 / 100; // USER_HZ is 100 on Linux

  running = 0;

  constructor(private readonly mark: string) {}

  sample(): number {
    this.running = 0;
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      let stat: string;
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(this.mark)) continue;
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue; // ended between the reads
      }
      // Fields after the command name, which may hold spaces and parentheses: utime and stime are 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = (Number(fields[11]) + Number(fields[12])) * this.tick;
      this.spent.set(pid, Math.max(ms, this.spent.get(pid) ?? 0));
      this.running++;
    }
    let total = 0;
    for (const ms of this.spent.values()) total += ms;
    return total;
  }
}

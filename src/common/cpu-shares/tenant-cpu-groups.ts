import { mkdirSync, readdirSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ownV1Directory, type CgroupSources } from '../cgroups/own-cgroup.js';

// The CPU shared by tenant, not by process. Every tenant has a cgroup of its own in the v1 cpu hierarchy,
// below one parent beside the service:
//
//   <the service's cpu cgroup>/toolgate-tenants/tenant-<id>
//
// A tenant's commands are placed in its group when they start, and a worker-pool thread moves into the
// group of the tenant whose task it runs. The kernel then shares the CPU between groups by their equal
// cpu.shares, whatever number of processes and threads each holds: a tenant running four busy commands and
// a costly search gets the same share as one running a single listing.
//
// The parent is an idle group (cpu.idle, SCHED_IDLE for the group as a whole): tenants' commands and pool
// tasks run on the CPU the service's own threads and the rest of the host leave, and a thread of the
// service that wakes preempts them at once. Weighed as one more thread (cpu.shares 1024), they held the
// event loop, which answers every tenant, on the run queue for as long as it ran (45% waiting against 48%
// running, beside a tenant's costly searches and commands on two cores). Kernels without cpu.idle (before
// 5.15) get the least weight there is instead (cpu.shares 2).
//
// cgroup v1 only: v2 moves single threads only between threaded cgroups, which its memory controller
// (each command's cgroup, call-cgroup.ts) cannot be. Elsewhere tenants share the CPU as processes do.

const TENANTS = 'toolgate-tenants';
const TENANT_PREFIX = 'tenant-';
// What a cgroup's name may hold: a tenant ID is a UUID; anything else (a workspace path) gets no group.
const GROUP_KEY = /^[A-Za-z0-9_-]{1,100}$/;

export class TenantCpuGroups {
  private readonly made = new Set<string>();

  private constructor(
    // The service's own cpu cgroup: where a pool thread goes back to for work of no tenant.
    readonly home: string,
    readonly parent: string,
    // How the parent yields to the service: 'idle' (cpu.idle) or 'least weight' (cpu.shares 2).
    readonly yielding: 'idle' | 'least weight',
  ) {}

  // Makes the parent and checks, with a group made and removed as a tenant's will be, that this process
  // may place its threads. Answers why not otherwise; nothing is left behind then.
  static prepare(sources: CgroupSources): TenantCpuGroups | { reason: string } {
    const own = ownV1Directory(sources, 'cpu');
    if ('reason' in own) return own;
    const parent = path.join(own.dir, TENANTS);
    try {
      mkdirSync(parent, { recursive: true });
      const yielding = yieldToService(parent);
      removeIdleGroups(parent);
      const check = path.join(parent, `${TENANT_PREFIX}check-${process.pid}`);
      mkdirSync(check, { recursive: true });
      try {
        writeFileSync(path.join(check, 'tasks'), threadId());
      } finally {
        writeFileSync(path.join(own.dir, 'tasks'), threadId());
        rmdirSync(check);
      }
      return new TenantCpuGroups(own.dir, parent, yielding);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      return { reason: `the service cannot make and use cpu cgroups under ${own.dir} (${code})` };
    }
  }

  // The tenant's group, made on first use; undefined for a key that names no tenant.
  groupOf(tenantId: string): string | undefined {
    if (!GROUP_KEY.test(tenantId)) return undefined;
    const dir = path.join(this.parent, TENANT_PREFIX + tenantId);
    if (!this.made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.made.add(dir);
    }
    return dir;
  }
}

// Places a command in its tenant's group (from groupOf) before it can fork: what it starts is born there.
export function attachToCpuGroup(dir: string, pid: number): void {
  moveInto(dir, 'cgroup.procs', String(pid));
}

// Writes an ID into a group's tasks or cgroup.procs. Another instance on this host may have removed the
// group while it was empty (removeIdleGroups at its start): it is made again.
function moveInto(dir: string, file: 'tasks' | 'cgroup.procs', id: string): void {
  try {
    writeFileSync(path.join(dir, file), id);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, file), id);
  }
}

// Makes the tenants' parent yield the CPU to every thread outside it (see the top of this file). Written at
// each start, whatever an earlier version or another instance left there.
function yieldToService(parent: string): 'idle' | 'least weight' {
  try {
    writeFileSync(path.join(parent, 'cpu.idle'), '1');
    return 'idle';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeFileSync(path.join(parent, 'cpu.shares'), '2');
  return 'least weight';
}

// Groups of tenants with nothing running: rmdir removes only an empty group, so a busy one (this host's
// other instances) stays.
function removeIdleGroups(parent: string): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(TENANT_PREFIX)) continue;
    try {
      rmdirSync(path.join(parent, name));
    } catch {
      // busy: kept
    }
  }
}

// The calling thread's own ID (a pool thread's differs from the process's): /proc/thread-self names
// "<pid>/task/<tid>".
let ownThreadId: string | undefined;
function threadId(): string {
  ownThreadId ??= readlinkSync('/proc/thread-self').split('/').pop()!;
  return ownThreadId;
}

// A pool thread's side: moves the calling thread into `dir` (a tenant's group, or the service's own) unless
// it is there already. A move that fails leaves the thread where it was: the task runs all the same.
let placedIn: string | undefined;
export function placeThisThread(dir: string): void {
  if (dir === placedIn) return;
  try {
    moveInto(dir, 'tasks', threadId());
    placedIn = dir;
  } catch {
    placedIn = undefined;
  }
}

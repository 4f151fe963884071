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
// a costly search gets the same share as one running a single listing. The parent group as a whole weighs
// as much as one of the service's own threads, so the event loop (which answers every tenant) and the
// database keep their CPU however much work tenants start.
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
  ) {}

  // Makes the parent and checks, with a group made and removed as a tenant's will be, that this process
  // may place its threads. Answers why not otherwise; nothing is left behind then.
  static prepare(sources: CgroupSources): TenantCpuGroups | { reason: string } {
    const own = ownV1Directory(sources, 'cpu');
    if ('reason' in own) return own;
    const parent = path.join(own.dir, TENANTS);
    try {
      mkdirSync(parent, { recursive: true });
      removeIdleGroups(parent);
      const check = path.join(parent, `${TENANT_PREFIX}check-${process.pid}`);
      mkdirSync(check, { recursive: true });
      try {
        writeFileSync(path.join(check, 'tasks'), threadId());
      } finally {
        writeFileSync(path.join(own.dir, 'tasks'), threadId());
        rmdirSync(check);
      }
      return new TenantCpuGroups(own.dir, parent);
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

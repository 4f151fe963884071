import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { CallCgroupParent } from './sandbox-spec.js';
import { ownCgroupDirectory, ownV1Directory, type CgroupSources } from '../../../common/cgroups/own-cgroup.js';

// A memory cgroup for each command: the sandbox goes into a cgroup of its own whose limit holds all of its
// processes together, tmpfs pages (its /tmp, its /dev/shm) included. cgroup v2 where the service's own
// cgroup offers the memory controller (memory.max; the OOM killer then ends the whole group), else the v1
// memory hierarchy (memory.limit_in_bytes; the OOM killer takes one process and the runner the rest).

const SERVICE_LEAF = 'toolgate-service';
const CALLS = 'toolgate-calls';
const CALL_PREFIX = 'call-';

// v2's memory.events and v1's memory.oom_control both count the OOM killer's work as `oom_kill N`.
export function parseMemoryEvents(text: string): { oomKills: number } {
  const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { oomKills: count('oom_kill') + count('oom_group_kill') };
}

// A cgroup per command under v2 when the service's cgroup can hand the memory controller down, else under
// v1's memory hierarchy (hosts that mount cgroup v1, where v2 holds no memory controller).
export async function prepareCallCgroups(sources: CgroupSources, pid = process.pid): Promise<CallCgroupParent | { reason: string }> {
  const v2 = await prepareV2CallCgroups(sources, pid);
  if ('parent' in v2) return { parent: v2.parent, version: 2 };
  const v1 = await prepareV1CallCgroups(sources);
  if ('parent' in v1) return { parent: v1.parent, version: 1 };
  return { reason: `${v2.reason}; and ${v1.reason}` };
}

// v1 needs no controller handed down: every directory of the memory hierarchy has its own limit files.
async function prepareV1CallCgroups(sources: CgroupSources): Promise<{ parent: string } | { reason: string }> {
  const own = ownV1Directory(sources, 'memory');
  if ('reason' in own) return own;
  const parent = path.join(own.dir, CALLS);
  try {
    await mkdir(parent, { recursive: true });
    await removeStaleCalls(parent);
    const check = await CallCgroup.create({ parent, version: 1 }, 64 * 1024 * 1024);
    await check.remove();
    return { parent };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return { reason: `the service cannot make cgroups under ${own.dir} (${code})` };
  }
}

// Makes `<own cgroup>/toolgate-calls` a parent whose children get the memory controller. The kernel hands
// controllers only to cgroups whose parent holds no process, so when the service's own cgroup holds it
// (a container's, a systemd unit's with Delegate=yes), the service first moves into a leaf of its own
// beside the calls. Answers why not when the memory controller is not there to have, or not ours to use.
async function prepareV2CallCgroups(sources: CgroupSources, pid: number): Promise<{ parent: string } | { reason: string }> {
  const own = ownCgroupDirectory(sources);
  if ('reason' in own) return own;
  const { dir } = own;
  let controllers: string[];
  try {
    controllers = (await readFile(path.join(dir, 'cgroup.controllers'), 'utf8')).trim().split(/\s+/).filter(Boolean);
  } catch (err) {
    return { reason: `${dir} cannot be read (${(err as NodeJS.ErrnoException).code})` };
  }
  if (!controllers.includes('memory')) {
    return {
      reason: `the memory controller is not available in the service's cgroup v2 ${dir} (it offers ${controllers.join(', ') || 'none'}; on a host that mounts cgroup v1, memory belongs to v1)`,
    };
  }
  try {
    if (!(await enableMemory(dir))) {
      await mkdir(path.join(dir, SERVICE_LEAF), { recursive: true });
      await writeFile(path.join(dir, SERVICE_LEAF, 'cgroup.procs'), String(pid));
      if (!(await enableMemory(dir))) {
        // Back where it was: the move bought nothing.
        await writeFile(path.join(dir, 'cgroup.procs'), String(pid)).catch(() => undefined);
        return {
          reason: `other processes share the service's cgroup ${dir}, so it cannot hand the memory controller down; give the service a cgroup of its own (systemd: Delegate=yes)`,
        };
      }
    }
    const parent = path.join(dir, CALLS);
    await mkdir(parent, { recursive: true });
    if (!(await enableMemory(parent))) return { reason: `${parent} would not take the memory controller` };
    await removeStaleCalls(parent);
    // One cgroup made and removed as every call will: the limit is writable here.
    const check = await CallCgroup.create({ parent, version: 2 }, 64 * 1024 * 1024);
    await check.remove();
    return { parent };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return { reason: `the service cannot make cgroups under ${dir} (${code})` };
  }
}

// False when the kernel refuses because processes sit in the cgroup itself (EBUSY).
async function enableMemory(dir: string): Promise<boolean> {
  const control = path.join(dir, 'cgroup.subtree_control');
  if ((await readFile(control, 'utf8')).split(/\s+/).includes('memory')) return true;
  try {
    await writeFile(control, '+memory');
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EBUSY') return false;
    throw err;
  }
}

// Left by a service that died mid-call. Each call's cgroup carries the pid of the service that made it:
// another instance sharing the parent (on one host, in one cgroup) makes calls there too, and their
// cgroups are empty for a moment before their sandbox is moved in, so only those of services no longer
// alive are removed (rmdir: an empty one goes, a busy one stays).
async function removeStaleCalls(parent: string): Promise<void> {
  for (const name of await readdir(parent)) {
    if (!name.startsWith(CALL_PREFIX)) continue;
    // Without a pid: named by an earlier version, whose calls a restart has ended.
    const owner = new RegExp(`^${CALL_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (owner !== undefined && isAlive(Number(owner))) continue;
    await rmdir(path.join(parent, name)).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// A process moved into a call's cgroup (`dir`, a CallCgroup's) before it can fork: what it starts is born
// there. Called by the thread that started it (child-start.ts).
export function attachToCallCgroup(dir: string, pid: number): void {
  writeFileSync(path.join(dir, 'cgroup.procs'), String(pid));
}

const REMOVE_ATTEMPTS = 20;
const REMOVE_RETRY_MS = 50;

export class CallCgroup {
  private constructor(
    readonly dir: string,
    private readonly version: 1 | 2,
  ) {}

  static async create({ parent, version }: CallCgroupParent, memoryBytes: number): Promise<CallCgroup> {
    const dir = path.join(parent, `${CALL_PREFIX}${process.pid}-${randomBytes(8).toString('hex')}`);
    await mkdir(dir);
    try {
      if (version === 2) {
        await writeFile(path.join(dir, 'memory.max'), String(memoryBytes));
        // No swap to spill into, and an OOM kill takes every process of the sandbox, not just the largest.
        await writeOptional(path.join(dir, 'memory.swap.max'), '0');
        await writeOptional(path.join(dir, 'memory.oom.group'), '1');
      } else {
        await writeFile(path.join(dir, 'memory.limit_in_bytes'), String(memoryBytes));
        // Memory and swap together (only where the kernel accounts swap): tmpfs pages cannot spill to swap.
        await writeOptional(path.join(dir, 'memory.memsw.limit_in_bytes'), String(memoryBytes));
      }
    } catch (err) {
      await rmdir(dir).catch(() => undefined);
      throw err;
    }
    return new CallCgroup(dir, version);
  }

  oomKilled(): boolean {
    try {
      const file = this.version === 2 ? 'memory.events' : 'memory.oom_control';
      return parseMemoryEvents(readFileSync(path.join(this.dir, file), 'utf8')).oomKills > 0;
    } catch {
      return false;
    }
  }

  // The last processes may still be on their way out when the run is answered.
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < REMOVE_ATTEMPTS; attempt++) {
      try {
        await rmdir(this.dir);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code !== 'EBUSY') throw err;
        await delay(REMOVE_RETRY_MS);
      }
    }
  }
}

// Files a kernel may not have (memory.swap.max without swap accounting, memory.oom.group before 4.19).
async function writeOptional(file: string, value: string): Promise<void> {
  try {
    await writeFile(file, value);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

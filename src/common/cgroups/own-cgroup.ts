import { readFileSync } from 'node:fs';
import path from 'node:path';

// Where the service itself sits in the host's cgroups, read from /proc/self/cgroup and /proc/self/mountinfo:
// the commands' memory cgroups (execution/process/sandbox/call-cgroup.ts) and the tenants' cpu groups
// (common/cpu-shares) are made below it.

export interface CgroupSources {
  procSelfCgroup: string;
  mountinfo: string;
}

// The service's own cgroup v2 directory: its path from /proc/self/cgroup ("0::/path") below the mount
// point of the cgroup2 file system (from /proc/self/mountinfo).
export function ownCgroupDirectory({ procSelfCgroup, mountinfo }: CgroupSources): { dir: string } | { reason: string } {
  const own = /^0::(\/.*)$/m.exec(procSelfCgroup)?.[1];
  if (own === undefined) return { reason: 'the service is in no cgroup v2 hierarchy' };
  const dir = dirBelowMount(mountinfo, own, (fsType) => fsType === 'cgroup2');
  if (dir !== undefined) return { dir };
  return { reason: 'no cgroup2 file system is mounted where the service can see its own cgroup' };
}

// The service's own directory in a cgroup v1 hierarchy: its path from the "N:controllers:/path" line of
// /proc/self/cgroup that names the controller, below the mount of a v1 `cgroup` file system with it.
export function ownV1Directory(
  { procSelfCgroup, mountinfo }: CgroupSources,
  controller: 'memory' | 'cpu',
): { dir: string } | { reason: string } {
  const own = /^\d+:([^:\n]*):(\/[^\n]*)$/gm;
  let ownPath: string | undefined;
  for (let m = own.exec(procSelfCgroup); m; m = own.exec(procSelfCgroup)) if (m[1].split(',').includes(controller)) ownPath = m[2];
  if (ownPath === undefined) return { reason: `the service is in no cgroup v1 ${controller} hierarchy` };
  const dir = dirBelowMount(
    mountinfo,
    ownPath,
    (fsType, superOptions) => fsType === 'cgroup' && superOptions.split(',').includes(controller),
  );
  if (dir !== undefined) return { dir };
  return { reason: `no cgroup v1 ${controller} hierarchy is mounted where the service can see its own cgroup` };
}

// Where `own` (a cgroup's path in its hierarchy) appears in the file system: below the first mount of a
// file system `mounts` accepts whose root holds it.
function dirBelowMount(mountinfo: string, own: string, mounts: (fsType: string, superOptions: string) => boolean): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [before, after] = line.split(' - ');
    const [fsType, , superOptions = ''] = after?.split(' ') ?? [];
    if (!fsType || !mounts(fsType, superOptions)) continue;
    const fields = before.split(' ');
    const [mountRoot, mountPoint] = [unescapeMountField(fields[3] ?? ''), unescapeMountField(fields[4] ?? '')];
    const relative = path.posix.relative(mountRoot, own);
    if (relative.startsWith('..') || path.posix.isAbsolute(relative)) continue;
    return path.posix.join(mountPoint, relative);
  }
  return undefined;
}

// Read once, at start-up.
export function readCgroupSources(): CgroupSources {
  return { procSelfCgroup: readFileSync('/proc/self/cgroup', 'utf8'), mountinfo: readFileSync('/proc/self/mountinfo', 'utf8') };
}

// mountinfo writes a space, tab, newline or backslash in a path as \040, \011, \012, \134.
const unescapeMountField = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

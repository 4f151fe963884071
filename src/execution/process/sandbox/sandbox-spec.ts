// How one command is confined, as plain data: it travels with the call into worker-pool threads.
// The service works it out once at start-up (src/sandbox) and hands the same object to every call.

export interface RunAs {
  uid: number;
  gid: number;
}

// Where the commands' cgroups are made, and under which version's files.
export interface CallCgroupParent {
  parent: string;
  version: 1 | 2;
}

export interface BwrapSandbox {
  kind: 'bwrap';
  bwrapPath: string;
  // Set when the service runs as root: bubblewrap then starts as this unprivileged uid, so nothing
  // inside holds a capability on the host and the kernel's per-namespace process limit applies.
  runAs?: RunAs;
  // The most each of the sandbox's tmpfs mounts (/tmp, /dev/shm) may hold; a command's memory limit,
  // where lower, caps them too, and their pages count in it.
  tmpSizeBytes: number;
  // bwrap arguments for the read-only system directories, the merged-/usr symlinks and the few /etc
  // files commands need, worked out from the host once (see systemMountArgs).
  systemMounts: string[];
  // The sandbox's own small /etc files (passwd, group, hosts, nsswitch.conf), by name: handed to
  // bubblewrap through pipes, so nothing on the host's disk has to outlive the call.
  etcFiles: Record<string, string>;
  // bubblewrap 0.8 and later can forbid new user namespaces inside the sandbox.
  disableUserns: boolean;
  // Where each command gets a memory cgroup of its own, tmpfs pages included (see call-cgroup.ts); unset,
  // memory (resident and in the sandbox's tmpfs mounts) is held by RLIMIT_AS and the runner's watchdog.
  cgroup?: CallCgroupParent;
  // The cpu cgroup of the command's tenant (TenantCpuGroups), which the sandbox starts in: a tenant's
  // commands share the CPU as one. Unset where tenants have no groups.
  cpuGroup?: string;
}

// Unsandboxed: the command runs in its own process group with rlimits, as `runAs` when given. Only
// when the operator asked for it (COMMAND_SANDBOX=none), never in production.
export interface NoSandbox {
  kind: 'none';
  runAs?: RunAs;
}

export type SandboxSpec = BwrapSandbox | NoSandbox;

// The sandbox's own /tmp.
export const SANDBOX_TMP = '/tmp';
// Where the workspace appears inside the sandbox: a fixed name, so that a command (pwd, $HOME, mountinfo)
// never learns where the workspace lives on the host. The file tools print paths relative to the
// workspace, which mean the same from here.
export const SANDBOX_WORKSPACE = '/workspace';

// The command's working directory as the sandbox sees it: `cwd` is the workspace or a directory inside it.
export function cwdInSandbox(workspace: string, cwd: string): string {
  const relative = cwd === workspace ? '' : cwd.startsWith(`${workspace}/`) ? cwd.slice(workspace.length + 1) : null;
  if (relative === null) throw new Error('The working directory is not inside the workspace');
  return relative === '' ? SANDBOX_WORKSPACE : `${SANDBOX_WORKSPACE}/${relative}`;
}

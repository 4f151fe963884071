import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { BwrapSandbox } from './sandbox-spec.js';
import { SANDBOX_TMP } from './sandbox-spec.js';

// bubblewrap writes `{"child-pid": n}` when the sandbox starts and `{"exit-code": n}` when the command
// ends to this descriptor; the runner reads it to tell a command's failure from the sandbox's.
export const STATUS_FD = 3;
// bubblewrap reads its options from this pipe (`--args`): the profile (mounts, host paths) then stays
// out of its command line, which the command could read as /proc/1/cmdline; only the command is there.
export const ARGS_FD = STATUS_FD + 1;
// The sandbox's own /etc files arrive on the descriptors after it, in the order of `etcFiles`.
export const FIRST_ETC_FD = ARGS_FD + 1;

// Top-level directories that merged-/usr systems make symlinks into /usr and older ones keep as directories.
const USR_ALIASES = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
// What of the host's /etc a command needs: the dynamic loader's cache, the alternatives symlinks (awk,
// editor...), time zones and CA certificates. Nothing else of /etc is visible.
const HOST_ETC = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/localtime', '/etc/ssl/certs'];

export interface SandboxPlacement {
  // Where the workspace appears inside the sandbox (SANDBOX_WORKSPACE, not its host path), and the
  // command's working directory there.
  workspace: string;
  cwd: string;
  // The descriptor (in bubblewrap's table) of the workspace directory the runner opened and checked.
  workspaceFd: number;
  // The size of each of the sandbox's tmpfs mounts (/tmp and /dev/shm).
  tmpfsBytes: number;
  // The descriptor bubblewrap reads the seccomp filter from (seccomp-filter.ts), where there is one.
  seccompFd?: number;
  // The command's environment, all of it: bubblewrap's own is cleared for the command and this set.
  env: Record<string, string>;
}

// One sandbox per command: fresh user, pid, network, ipc, uts (and cgroup) namespaces; no capabilities;
// the host's system directories read-only, size-capped private /tmp and /dev/shm, the workspace the only
// writable bind, and a read-only root. `--dev` mounts /dev as a tmpfs with no size limit: it is made
// read-only once /dev/shm is mounted on it, so every writable byte of memory is in a capped mount.
// A seccomp filter refuses what takes disk without writing (fallocate, io_uring).
// Killing bubblewrap's init (or bubblewrap, or the service) ends every process inside, whatever
// session or group it moved to.
// The smallest tmpfs (one page): what stands in for a mount the sandbox must not have, read-only.
const EMPTY_TMPFS_BYTES = 4096;

export function bwrapArgs(spec: BwrapSandbox, { workspace, cwd, workspaceFd, tmpfsBytes, seccompFd, env }: SandboxPlacement): string[] {
  return [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(spec.disableUserns ? ['--disable-userns'] : []),
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    ...spec.systemMounts,
    ...Object.keys(spec.etcFiles).flatMap((name, i) => ['--ro-bind-data', String(FIRST_ETC_FD + i), path.join('/etc', name)]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(tmpfsBytes),
    '--tmpfs',
    '/dev/shm',
    // No terminals: every sandbox's own devpts draws on the host's one kernel.pty.max, and one tenant holding
    // ptys in its four commands took every pty of the host from the others. Commands are argv-only and
    // never need one; /dev/ptmx (a link into /dev/pts) then names nothing.
    '--size',
    String(EMPTY_TMPFS_BYTES),
    '--tmpfs',
    '/dev/pts',
    '--remount-ro',
    '/dev/pts',
    '--remount-ro',
    '/dev',
    '--size',
    String(tmpfsBytes),
    '--tmpfs',
    SANDBOX_TMP,
    // After /tmp: a workspace under the host's /tmp is then mounted inside the sandbox's own.
    '--bind-fd',
    String(workspaceFd),
    workspace,
    '--chdir',
    cwd,
    '--remount-ro',
    '/',
    '--json-status-fd',
    String(STATUS_FD),
    ...(seccompFd !== undefined ? ['--seccomp', String(seccompFd)] : []),
    '--clearenv',
    ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
  ];
}

// Read once at start-up: which of the host's system paths exist and how.
export function systemMountArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of USR_ALIASES) {
    const stat = lstatOrUndefined(dir);
    if (stat?.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (stat?.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  for (const entry of HOST_ETC) if (existsSync(entry)) args.push('--ro-bind', entry, entry);
  return args;
}

// Names for the sandbox's user and the loopback host, so tools that look them up (id, git, ssh) work.
export function sandboxEtcFiles(uid: number, gid: number, home: string): Record<string, string> {
  return {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\n${uid === 0 ? '' : `sandbox:x:${uid}:${gid}:sandbox:${home}:/bin/sh\n`}`,
    group: `root:x:0:\n${gid === 0 ? '' : `sandbox:x:${gid}:\n`}`,
    hosts: '127.0.0.1 localhost\n::1 localhost\n',
    'nsswitch.conf': 'passwd: files\ngroup: files\nhosts: files\n',
  };
}

function lstatOrUndefined(target: string) {
  try {
    return lstatSync(target);
  } catch {
    return undefined;
  }
}

// bubblewrap's status documents, one JSON object per line.
export class SandboxStatus {
  childPid: number | undefined;
  exitCode: number | undefined;
  private pending = '';

  push(chunk: Buffer): void {
    const lines = (this.pending + chunk.toString('utf8')).split('\n');
    this.pending = lines.pop() ?? '';
    for (const line of lines) this.read(line);
  }

  end(): void {
    this.read(this.pending);
    this.pending = '';
  }

  private read(line: string): void {
    if (!line.trim()) return;
    try {
      const doc = JSON.parse(line) as Record<string, unknown>;
      if (typeof doc['child-pid'] === 'number') this.childPid = doc['child-pid'];
      if (typeof doc['exit-code'] === 'number') this.exitCode = doc['exit-code'];
    } catch {
      // Not ours to interpret; the exit code alone then decides.
    }
  }
}

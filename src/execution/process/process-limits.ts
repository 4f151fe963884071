import { RunRefused } from './run-refused.js';
import { countTasksOfUid } from './process-group.js';

export const PRLIMIT = '/usr/bin/prlimit';

export interface ProcessLimits {
  maxProcesses?: number;
  maxFileSizeBytes?: number;
  cpuSeconds?: number;
  // RLIMIT_AS of each process: the kernel's backstop where no cgroup holds the command's memory.
  addressSpaceBytes?: number;
}

// RLIMIT_CPU counts per process. A command that uses one core meets its timeout first (the second
// added covers rounding); one that burns several cores in one process is stopped once it has used
// as much CPU as one core could in the call's time, or `maxCpuSeconds`, whichever is less.
export function cpuSecondsFor(timeoutMs: number, maxCpuSeconds: number): number {
  return Math.max(1, Math.min(maxCpuSeconds, Math.ceil(timeoutMs / 1000) + 1));
}

// Room in the address space beyond the memory limit: runtimes reserve far more than they use (Node's
// V8 reserves about 800 MiB before running a line), and the resident memory is held by the watchdog.
export const ADDRESS_SPACE_HEADROOM_BYTES = 1024 ** 3;

// Options for prlimit(1), which sets the limits on itself and then execs the command. `uid` is the one
// the command will run as; `freshUserNamespace` says it runs in a user namespace of its own (a sandbox),
// where the kernel counts RLIMIT_NPROC for that namespace alone.
export async function prlimitArgs(
  limits: ProcessLimits = {},
  where: { uid?: number; freshUserNamespace?: boolean } = {},
): Promise<string[]> {
  const uid = where.uid ?? process.getuid?.() ?? 0;
  const { maxProcesses, maxFileSizeBytes, cpuSeconds, addressSpaceBytes } = limits;
  for (const [name, value] of Object.entries(limits)) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
      throw new RunRefused('invalid_limits', `Process limit ${name} must be a positive integer.`, { name });
    }
  }
  // No core files: SIGXFSZ and SIGXCPU would otherwise dump one into the workspace.
  const args = ['--core=0'];
  if (maxFileSizeBytes !== undefined) args.push(`--fsize=${maxFileSizeBytes}`);
  // SIGXCPU at the soft limit tells the command why; SIGKILL a second later if it ignores it.
  if (cpuSeconds !== undefined) args.push(`--cpu=${cpuSeconds}:${cpuSeconds + 1}`);
  // An allocation past it fails (ENOMEM, MemoryError) instead of growing the process.
  if (addressSpaceBytes !== undefined) args.push(`--as=${addressSpaceBytes}`);
  // A sandbox's own user namespace starts with no tasks: the limit is exactly this run's.
  if (maxProcesses !== undefined && where.freshUserNamespace) args.push(`--nproc=${maxProcesses}`);
  // The kernel ignores RLIMIT_NPROC for root, and for anyone else it counts every task of the uid,
  // so it is only a coarse backstop on top of this run's headroom; the watchdog is the per-run limit.
  else if (maxProcesses !== undefined && uid !== 0) {
    args.push(`--nproc=${(await countTasksOfUid(uid)) + maxProcesses}`);
  }
  return args;
}

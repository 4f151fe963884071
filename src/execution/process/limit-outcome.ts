import { describeBytes } from '../../common/format/describe-bytes.js';
import { ADDRESS_SPACE_HEADROOM_BYTES } from './process-limits.js';
import type { RunProcessResult } from './run-process-types.js';

export const COMMAND_LIMITS = ['output_limit', 'process_limit', 'memory_limit', 'cpu_limit', 'write_limit', 'workspace_quota'] as const;
export type CommandLimit = (typeof COMMAND_LIMITS)[number];

// The limits one command ran under, as the messages name them.
export interface CommandLimits {
  maxOutputBytes: number;
  maxProcesses?: number;
  memoryBytes?: number;
  cpuSeconds?: number;
  maxWriteBytes?: number;
  quotaBytes?: number;
  quotaInodes?: number;
}

export interface LimitOutcome {
  // The limit that stopped the command, if one did.
  killed: CommandLimit | null;
  // For the model: which limit, its value, and what to do about it. Also set when the command ended by
  // itself because an allocation failed against the address-space limit.
  note: string | null;
}

// bubblewrap reports a command ended by a signal as 128 + its number; SIGXCPU is 24.
const SIGXCPU_EXIT = 128 + 24;
// What runtimes and libc print when an allocation fails.
const ALLOCATION_FAILED =
  /MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|ENOMEM|memory exhausted|allocation failed|failed to reserve virtual memory/i;

export function limitOutcome(result: RunProcessResult, limits: CommandLimits): LimitOutcome {
  const memory = limits.memoryBytes === undefined ? 'the memory limit' : `the memory limit of ${describeBytes(limits.memoryBytes)}`;
  if (result.killedForOutput) {
    return {
      killed: 'output_limit',
      note: `The command was stopped once its output passed ${describeBytes(limits.maxOutputBytes)} (SHELL_MAX_OUTPUT_BYTES); ask for less output, e.g. with head or a narrower command.`,
    };
  }
  if (result.killedForProcessLimit) {
    return {
      killed: 'process_limit',
      note: `The command was stopped for starting more than ${limits.maxProcesses ?? 'the allowed number of'} processes (SHELL_MAX_PROCESSES).`,
    };
  }
  if (result.killedForMemory) {
    return {
      killed: 'memory_limit',
      note: `The command was stopped: its processes together, with the files they kept in /tmp and /dev/shm, used more than ${memory} (SHELL_MAX_MEMORY_BYTES); process less data at a time, or keep files in the workspace.`,
    };
  }
  if (result.killedForWriteLimit) {
    const limit = limits.maxWriteBytes === undefined ? 'the limit' : `the limit of ${describeBytes(limits.maxWriteBytes)}`;
    return {
      killed: 'write_limit',
      note: `The command was stopped after writing ${describeBytes(result.writtenBytes)} to files, past ${limit} one command may write (SHELL_MAX_WRITE_BYTES); what it wrote before is kept.`,
    };
  }
  if (result.killedForWorkspaceQuota) {
    if (result.workspaceQuotaPassed === 'inodes') {
      const inodes = limits.quotaInodes === undefined ? '' : ` of ${limits.quotaInodes.toLocaleString('en-US')}`;
      return {
        killed: 'workspace_quota',
        note: `The command was stopped: it made more files, directories and links in the workspace than its quota${inodes} (WORKSPACE_QUOTA_INODES); delete files that are no longer needed.`,
      };
    }
    const quota = limits.quotaBytes === undefined ? 'its quota' : `its quota of ${describeBytes(limits.quotaBytes)}`;
    return {
      killed: 'workspace_quota',
      note: `The command was stopped: it grew the workspace past ${quota} (WORKSPACE_QUOTA_BYTES); delete files that are no longer needed.`,
    };
  }
  if (result.exitCode === SIGXCPU_EXIT || result.signal === 'SIGXCPU') {
    const seconds = limits.cpuSeconds === undefined ? 'its CPU time' : `${limits.cpuSeconds} s of CPU time`;
    return {
      killed: 'cpu_limit',
      note: `The command was stopped (SIGXCPU) after using ${seconds}, the most one of its processes may use in this call.`,
    };
  }
  const failed = result.exitCode !== 0;
  if (
    failed &&
    result.memoryLimitBy === 'rlimit' &&
    limits.memoryBytes !== undefined &&
    ALLOCATION_FAILED.test(result.stderr.slice(-4096))
  ) {
    return {
      killed: null,
      note: `An allocation seems to have failed: each process may reserve at most ${describeBytes(limits.memoryBytes + ADDRESS_SPACE_HEADROOM_BYTES)} of address space, and all of them together may hold ${describeBytes(limits.memoryBytes)} of memory (SHELL_MAX_MEMORY_BYTES); process less data at a time.`,
    };
  }
  return { killed: null, note: null };
}

import type { ProcessLimits } from './process-limits.js';
import type { WriteLimits } from './resource-watchdog.js';
import type { SandboxSpec } from './sandbox/sandbox-spec.js';

// What runProcess is asked and what it answers: plain data, which crosses into pool threads (a sync skill).

export interface RunProcessOptions {
  argv: string[];
  executable: string;
  // The project's workspace (the sandbox's one writable directory) and the directory inside it to run in.
  workspace: string;
  cwd: string;
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  limits?: ProcessLimits;
  // Memory of all the command's processes together: the memory.max of a cgroup of its own where the
  // sandbox has cgroups, else RLIMIT_AS on each process (with headroom) and the watchdog on their sum.
  memoryBytes?: number;
  // Bytes the command may write to files, and the workspace quota it may not push the workspace past.
  writes?: WriteLimits;
  // Required, so that no caller runs a command unconfined by omission.
  sandbox: SandboxSpec;
}

export interface RunProcessResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  timedOut: boolean;
  aborted: boolean;
  killedForOutput: boolean;
  killedForProcessLimit: boolean;
  killedForMemory: boolean;
  killedForWriteLimit: boolean;
  killedForWorkspaceQuota: boolean;
  // Which quota of the workspace it passed, when it was stopped for one: its bytes or its inodes.
  workspaceQuotaPassed: 'bytes' | 'inodes' | null;
  // How the memory limit was held (null: none was asked for).
  memoryLimitBy: 'cgroup' | 'rlimit' | null;
  // What the command's processes were last seen to have written to files (0 when writes were not watched).
  writtenBytes: number;
  // What the run added to the workspace at most, in bytes and in files, directories and links (null when
  // the quota was not watched): the watchdog's last walk of the workspace, plus what was written or how far
  // the file system filled since (see ResourceWatchdog.growthAtMost).
  workspaceGrowthAtMost: { bytes: number; entries: number } | null;
  durationMs: number;
}

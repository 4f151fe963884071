import { limitOutcome } from './limit-outcome.js';
import type { RunProcessResult } from './run-process-types.js';

const MiB = 1024 * 1024;
const ran = (extra: Partial<RunProcessResult> = {}): RunProcessResult => ({
  exitCode: 0,
  signal: null,
  stdout: '',
  stderr: '',
  stdoutTruncated: false,
  stderrTruncated: false,
  timedOut: false,
  aborted: false,
  killedForOutput: false,
  killedForProcessLimit: false,
  killedForMemory: false,
  killedForWriteLimit: false,
  killedForWorkspaceQuota: false,
  memoryLimitBy: 'rlimit',
  writtenBytes: 0,
  workspaceGrowthAtMost: null,
  workspaceQuotaPassed: null,
  durationMs: 5,
  ...extra,
});
const limits = {
  maxOutputBytes: 64 * 1024,
  maxProcesses: 32,
  memoryBytes: 64 * MiB,
  cpuSeconds: 31,
  maxWriteBytes: 4 * MiB,
  quotaBytes: 1024 * MiB,
};

describe('limitOutcome', () => {
  it('says nothing about a command that ended by itself', () => {
    expect(limitOutcome(ran(), limits)).toEqual({ killed: null, note: null });
    expect(limitOutcome(ran({ exitCode: 2, stderr: 'No such file' }), limits)).toEqual({ killed: null, note: null });
  });

  it.each([
    [
      { killedForMemory: true, exitCode: null, signal: 'SIGKILL' },
      'memory_limit',
      /more than the memory limit of 64 MiB \(SHELL_MAX_MEMORY_BYTES\)/,
    ],
    [
      { killedForWriteLimit: true, writtenBytes: 5 * MiB },
      'write_limit',
      /after writing 5 MiB to files, past the limit of 4 MiB .*SHELL_MAX_WRITE_BYTES/,
    ],
    [{ killedForWorkspaceQuota: true }, 'workspace_quota', /past its quota of 1 GiB \(WORKSPACE_QUOTA_BYTES\)/],
    [{ exitCode: 152 }, 'cpu_limit', /SIGXCPU\) after using 31 s of CPU time/],
    [{ killedForOutput: true }, 'output_limit', /64 KiB \(SHELL_MAX_OUTPUT_BYTES\)/],
    [{ killedForProcessLimit: true }, 'process_limit', /more than 32 processes/],
  ] as const)('names the limit that stopped it: %j', (result, killed, note) => {
    const outcome = limitOutcome(ran(result), limits);
    expect(outcome.killed).toBe(killed);
    expect(outcome.note).toMatch(note);
  });

  it('explains an allocation that failed against the address-space limit, without calling it a kill', () => {
    const outcome = limitOutcome(
      ran({ exitCode: 1, stderr: 'Traceback (most recent call last):\n  File "<string>", line 1\nMemoryError\n' }),
      limits,
    );
    expect(outcome).toEqual({
      killed: null,
      note: expect.stringMatching(/allocation .* 1\.1 GiB of address space.* hold 64 MiB of memory \(SHELL_MAX_MEMORY_BYTES\)/),
    });
  });

  it('leaves such an error alone where a cgroup holds the memory, or the command succeeded', () => {
    expect(limitOutcome(ran({ exitCode: 1, stderr: 'MemoryError', memoryLimitBy: 'cgroup' }), limits).note).toBeNull();
    expect(limitOutcome(ran({ exitCode: 0, stderr: 'MemoryError' }), limits).note).toBeNull();
  });
});

import { statfsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { ToolError } from '../tool-error.js';
import { OutputCapture } from './output-capture.js';
import { groupExceeds, killGroup, waitForGroupExit } from './process-group.js';
import { ResourceWatchdog, type ResourceExcess } from './resource-watchdog.js';
import type { RunProcessOptions, RunProcessResult } from './run-process-types.js';
import { type SandboxStatus, STATUS_FD } from './sandbox/bwrap-profile.js';
import type { CallCgroup } from './sandbox/call-cgroup.js';
import type { StartedChild } from './command-launcher.js';
import { SANDBOX_TMP } from './sandbox/sandbox-spec.js';

// A started run watched to its end (process-runner.ts starts it): its output captured up to the cap, its
// limits held (the timeout, the caller's abort, the process count, memory, writes, the workspace quota), a
// run past one killed whole, and its result read once nothing of it is left. A run that failed to start
// after all (the sandbox could not be set up, the command vanished) is thrown as a ToolError.

type KillReason = 'timeout' | 'abort' | 'output' | 'processes' | ResourceExcess;

// A process stuck in the kernel can outlive SIGKILL for a while; the caller is answered anyway.
const KILL_SETTLE_MS = 1000;
// The answer waits this long at most for the killed group to be gone, so nothing outlives the call.
const GROUP_EXIT_WAIT_MS = 500;
const WATCHDOG_INTERVAL_MS = 20;

export interface Confinement {
  sandbox: SandboxStatus | undefined;
  cgroup: CallCgroup | undefined;
  memoryBy: RunProcessResult['memoryLimitBy'];
  // The workspace's file system before the command was started (the quota's starting point).
  fileSystemBefore?: { usedBytes: number; usedInodes: number };
}

export function supervise(
  child: StartedChild,
  opts: RunProcessOptions,
  { sandbox, cgroup, memoryBy, fileSystemBefore }: Confinement,
): Promise<RunProcessResult> {
  const started = performance.now();
  // It leads a process group of its own: one kill reaches everything it started.
  const pgid = child.pid;
  // Memory held by a cgroup needs no watching; writes are watched either way.
  const watchMemory = memoryBy === 'rlimit';
  const watchdog =
    watchMemory || opts.writes
      ? new ResourceWatchdog({
          rootPid: pgid,
          workspace: opts.workspace,
          memoryBytes: watchMemory ? opts.memoryBytes : undefined,
          // What the sandbox's tmpfs mounts hold is memory too, held by nobody's RSS.
          tmpfsBytes: watchMemory && sandbox ? () => sandboxTmpfsBytes(sandbox) : undefined,
          writes: opts.writes,
          fileSystemBefore,
        })
      : undefined;
  return new Promise((resolve, reject) => {
    let settled = false;
    let killReason: KillReason | undefined;
    let exit: { code: number | null; signal: string | null } | undefined;
    const timers: NodeJS.Timeout[] = [];

    const kill = (reason: KillReason) => {
      if (settled) return;
      // Once it has exited, a late timer or abort only sweeps up leftovers; it did not stop the command.
      if (!exit) killReason ??= reason;
      killRun(pgid, sandbox);
      if (!exit) timers.push(setTimeout(settle, KILL_SETTLE_MS));
    };
    const onAbort = () => kill('abort');
    const stdout = new OutputCapture(opts.maxOutputBytes, () => kill('output'));
    const stderr = new OutputCapture(opts.maxOutputBytes, () => kill('output'));

    const settle = () => {
      if (settled) return;
      settled = true;
      watchdog?.stop();
      timers.forEach(clearTimeout);
      // The kernel's OOM killer ended the sandbox: that, not bubblewrap's failure, is why it stopped.
      if (cgroup?.oomKilled()) killReason ??= 'memory';
      opts.signal?.removeEventListener('abort', onAbort);
      child.release();
      sandbox?.end();
      const status = sandbox ? commandExit(sandbox, exit, killReason !== undefined) : exit;
      const result: RunProcessResult = {
        exitCode: status?.code ?? null,
        signal: status?.signal ?? null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut: killReason === 'timeout',
        aborted: killReason === 'abort',
        killedForOutput: killReason === 'output',
        killedForProcessLimit: killReason === 'processes',
        killedForMemory: killReason === 'memory',
        killedForWriteLimit: killReason === 'writes',
        killedForWorkspaceQuota: killReason === 'quota',
        workspaceQuotaPassed: killReason === 'quota' ? (watchdog?.quotaPassed ?? 'bytes') : null,
        memoryLimitBy: memoryBy,
        writtenBytes: watchdog?.writtenBytes ?? 0,
        workspaceGrowthAtMost: watchdog?.growthAtMost() ?? null,
        durationMs: Math.round(performance.now() - started),
      };
      // prlimit exits 126 or 127 with this message when the command vanished after the check (or, in
      // a sandbox, when the sandbox's uid may not execute it).
      const execFailed = (result.exitCode === 126 || result.exitCode === 127) && result.stderr.startsWith('prlimit: failed to execute');
      // bubblewrap exited without ever reporting the command's exit: the sandbox could not be set up.
      const setupFailed = sandbox !== undefined && sandbox.exitCode === undefined && killReason === undefined;
      void waitForGroupExit(pgid, GROUP_EXIT_WAIT_MS)
        .catch(() => false)
        .then(() => {
          void cgroup?.remove().catch(() => undefined);
          if (child.lost) return reject(new ToolError('spawn_failed', `${opts.argv[0]} was stopped: ${child.lost}.`));
          if (setupFailed) return reject(sandboxSetupFailed(result.stderr));
          if (!execFailed) return resolve(result);
          reject(new ToolError('spawn_failed', `Cannot start ${opts.argv[0]}: ${result.stderr.trim()}`));
        });
    };

    child.listen({
      output: (fd, chunk) => {
        if (fd === 1) stdout.push(chunk);
        else if (fd === 2) stderr.push(chunk);
        else if (fd === STATUS_FD) sandbox?.push(chunk);
      },
      exit: (code, signal) => {
        exit = { code, signal };
        killGroup(pgid); // whatever it left running in the background goes with it
      },
      // Once its pipes are read to their end, or drained for a moment after its exit (child-start.ts).
      close: settle,
    });

    timers.push(setTimeout(() => kill('timeout'), opts.timeoutMs));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted while the command was being started: the listener above would never hear of it.
    if (opts.signal?.aborted) onAbort();
    // In a sandbox the kernel holds the process count (RLIMIT_NPROC in its own user namespace).
    const maxProcesses = opts.limits?.maxProcesses;
    if (maxProcesses !== undefined && !sandbox) {
      const done = () => settled || killReason !== undefined;
      void watchProcessCount(pgid, maxProcesses, done, () => kill('processes'));
    }
    watchdog?.start((excess) => kill(excess));
    // cgroup v1's OOM killer ends one process (the one writing to /dev/shm, say) and lets the rest go on:
    // once it has struck, the whole sandbox goes, and its tmpfs pages with its mount namespace.
    if (cgroup)
      void watchOomKills(
        cgroup,
        () => settled || killReason !== undefined,
        () => kill('memory'),
      );
  });
}

async function watchOomKills(cgroup: CallCgroup, done: () => boolean, onKilled: () => void) {
  while (!done()) {
    if (cgroup.oomKilled()) return onKilled();
    await delay(WATCHDOG_INTERVAL_MS);
  }
}

const TMPFS_MAGIC = 0x01021994;

// The sandbox's own /tmp and /dev/shm, seen through its init's root (the service may look there: it
// started the sandbox). Before the init is known, nothing can have been written yet; until the init has
// moved into its new root, the path is the host's own /tmp, which is not the sandbox's tmpfs and is not
// counted.
function sandboxTmpfsBytes(sandbox: SandboxStatus): number {
  if (sandbox.childPid === undefined) return 0;
  let bytes = 0;
  for (const mount of [SANDBOX_TMP, '/dev/shm']) {
    try {
      const fs = statfsSync(`/proc/${sandbox.childPid}/root${mount}`);
      if (fs.type === TMPFS_MAGIC) bytes += (fs.blocks - fs.bfree) * fs.bsize;
    } catch {
      // The sandbox has ended: its tmpfs mounts with it.
    }
  }
  return bytes;
}

// A sandbox ends with its init: SIGKILL to it makes the kernel kill everything in its pid namespace, and
// bubblewrap exits only once that is done, so its exit means nothing is left. Before the init is known
// (the first instants), bubblewrap itself is killed and takes the init with it (--die-with-parent).
function killRun(pgid: number, sandbox: SandboxStatus | undefined): void {
  if (sandbox?.childPid !== undefined && sandbox.exitCode === undefined) {
    try {
      process.kill(sandbox.childPid, 'SIGKILL');
      return;
    } catch {
      // Already gone: fall through to the group.
    }
  }
  killGroup(pgid);
}

// bubblewrap reports a command that a signal ended as 128 + its number, as a shell does, so a signal is
// named only when this runner sent it (the sandbox was killed).
function commandExit(sandbox: SandboxStatus, exit: { code: number | null; signal: string | null } | undefined, killed: boolean) {
  if (killed) return { code: null, signal: 'SIGKILL' };
  if (sandbox.exitCode !== undefined) return { code: sandbox.exitCode, signal: null };
  return exit;
}

function sandboxSetupFailed(stderr: string): ToolError {
  const why =
    stderr
      .trim()
      .split('\n')
      .find((line) => line.startsWith('bwrap:')) ?? stderr.trim().slice(0, 500);
  return new ToolError(
    'sandbox_failed',
    `The command's sandbox could not be set up (${why || 'bubblewrap exited without a reason'}); the command did not run. Every directory above the workspace must be searchable by the sandbox's user.`,
  );
}

// RLIMIT_NPROC does nothing for root and is per uid for everyone else, so the run's own group is
// counted from /proc. It ends a fork bomb soon after it starts but cannot cap how far it gets first.
async function watchProcessCount(pgid: number, max: number, done: () => boolean, onExceeded: () => void) {
  while (!done()) {
    const exceeded = await groupExceeds(pgid, max).catch(() => false);
    if (done()) return;
    if (exceeded) return onExceeded();
    await delay(WATCHDOG_INTERVAL_MS);
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync, readlinkSync, statfsSync } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { badRequest } from '../../common/errors/app-error.js';
import { ToolError } from '../tool-error.js';
import { OutputCapture } from './output-capture.js';
import { buildChildEnv } from './process-env.js';
import { groupExceeds, killGroup, waitForGroupExit } from './process-group.js';
import { ADDRESS_SPACE_HEADROOM_BYTES, PRLIMIT, prlimitArgs, type ProcessLimits } from './process-limits.js';
import { ResourceWatchdog, type ResourceExcess, type WriteLimits } from './resource-watchdog.js';
import { ARGS_FD, bwrapArgs, FIRST_ETC_FD, SandboxStatus, STATUS_FD } from './sandbox/bwrap-profile.js';
import { CallCgroup } from './sandbox/call-cgroup.js';
import { SANDBOX_TMP, type BwrapSandbox, type RunAs, type SandboxSpec, SANDBOX_WORKSPACE, cwdInSandbox } from './sandbox/sandbox-spec.js';

export { validateEnv } from './process-env.js';
export type { ProcessLimits } from './process-limits.js';
export type { WriteLimits } from './resource-watchdog.js';

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
  // How the memory limit was held (null: none was asked for).
  memoryLimitBy: 'cgroup' | 'rlimit' | null;
  // What the command's processes were last seen to have written to files (0 when writes were not watched).
  writtenBytes: number;
  // How far the workspace's file system filled during the run (null when writes were not watched): with
  // writtenBytes, a bound on what the run added to the workspace.
  fileSystemGrowthBytes: number | null;
  // How many inodes the workspace's file system took meanwhile (null when writes were not watched).
  fileSystemInodeGrowth: number | null;
  durationMs: number;
}

type KillReason = 'timeout' | 'abort' | 'output' | 'processes' | ResourceExcess;

// A grandchild that escaped the group may hold the pipes open; wait this long for them after 'exit'.
const DRAIN_MS = 100;
// A process stuck in the kernel can outlive SIGKILL for a while; the caller is answered anyway.
const KILL_SETTLE_MS = 1000;
// The answer waits this long at most for the killed group to be gone, so nothing outlives the call.
const GROUP_EXIT_WAIT_MS = 500;
const WATCHDOG_INTERVAL_MS = 20;

export async function runProcess(opts: RunProcessOptions): Promise<RunProcessResult> {
  if (opts.argv.length === 0 || opts.argv.some((arg) => typeof arg !== 'string' || arg.includes('\0'))) {
    throw badRequest('invalid_argv', 'The command must be a non-empty list of strings without NUL bytes.');
  }
  // setTimeout turns anything past 2^31-1 ms into 1 ms.
  if (!(Number.isSafeInteger(opts.timeoutMs) && opts.timeoutMs > 0 && opts.timeoutMs <= 2 ** 31 - 1)) {
    throw badRequest('invalid_timeout', 'timeoutMs must be a positive integer of at most 2147483647.');
  }
  if (!(Number.isSafeInteger(opts.maxOutputBytes) && opts.maxOutputBytes >= 0)) {
    throw badRequest('invalid_output_cap', 'maxOutputBytes must be a non-negative integer.');
  }
  if (opts.memoryBytes !== undefined && !(Number.isSafeInteger(opts.memoryBytes) && opts.memoryBytes > 0)) {
    throw badRequest('invalid_limits', 'memoryBytes must be a positive integer.');
  }
  const { sandbox } = opts;
  const runAs = sandbox.runAs;
  if (runAs && ![runAs.uid, runAs.gid].every((id) => Number.isSafeInteger(id) && id >= 0)) {
    throw badRequest('invalid_run_as', 'runAs needs a numeric uid and gid.');
  }
  const sandboxed = sandbox.kind === 'bwrap';
  const env = sandboxed
    ? buildChildEnv({ home: SANDBOX_WORKSPACE, tmp: SANDBOX_TMP }, opts.env)
    : buildChildEnv({ home: opts.cwd, tmp: tmpdir() }, opts.env);
  // In a sandbox the process limit is counted in its own user namespace, not across the uid.
  const limitWhere = sandboxed ? { freshUserNamespace: true } : { uid: runAs?.uid };
  await assertRunnable(opts);
  if (opts.signal?.aborted) return notStarted();

  // A cgroup that cannot be made for this call leaves its memory to the rlimit and the watchdog.
  const cgroup =
    opts.memoryBytes !== undefined && sandbox.kind === 'bwrap' && sandbox.cgroup
      ? await CallCgroup.create(sandbox.cgroup, opts.memoryBytes).catch(() => undefined)
      : undefined;
  const memoryBy = opts.memoryBytes === undefined ? null : cgroup ? 'cgroup' : 'rlimit';
  const limits = memoryBy === 'rlimit' ? { ...opts.limits, addressSpaceBytes: opts.memoryBytes! + ADDRESS_SPACE_HEADROOM_BYTES } : opts.limits;
  let child: ChildProcess;
  try {
    // No shell: every argv element reaches the command as one literal argument.
    const command = [PRLIMIT, ...(await prlimitArgs(limits, limitWhere)), '--', opts.executable, ...opts.argv.slice(1)];
    child = spawnChecked(opts, () =>
      sandbox.kind === 'bwrap' ? spawnSandboxed(sandbox, command, opts, env, cgroup) : spawnUnsandboxed(command, opts.cwd, env, runAs),
    );
  } catch (err) {
    void cgroup?.remove().catch(() => undefined);
    throw err;
  }
  const pgid = child.pid;
  if (pgid === undefined) {
    void cgroup?.remove().catch(() => undefined);
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw spawnFailed(opts.argv[0], err);
  }
  return supervise(child, pgid, opts, { sandbox: sandboxed ? new SandboxStatus() : undefined, cgroup, memoryBy });
}

function spawnChecked(opts: RunProcessOptions, start: () => ChildProcess): ChildProcess {
  try {
    return start();
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw spawnFailed(opts.argv[0], err);
  }
}

function spawnUnsandboxed(command: string[], cwd: string, env: Record<string, string>, runAs: RunAs | undefined): ChildProcess {
  return spawn(command[0], command.slice(1), {
    cwd,
    env,
    detached: true, // its own process group, so one kill reaches everything it started
    shell: false,
    stdio: 'pipe',
    // libuv also clears the supplementary groups when it switches uid.
    ...(runAs && { uid: runAs.uid, gid: runAs.gid }),
  });
}

// Linux value (Node does not export it): a descriptor that names the directory without opening it.
const O_PATH = 0o10000000;

// Opens the workspace and checks, on the descriptor, that the kernel finds it at the path the caller
// resolved (no symlink has been put in its way since); refuses to run the command otherwise.
function openCheckedDirectory(dir: string): number {
  const unavailable = () =>
    new ToolError('workspace_unavailable', 'The workspace is no longer the directory that was accepted (gone, or a symlink in its path); the command did not run.');
  let fd: number;
  try {
    fd = openSync(dir, O_PATH | fsConstants.O_DIRECTORY);
  } catch {
    throw unavailable();
  }
  let real: string | undefined;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // answered below
  }
  if (real !== dir) {
    closeSync(fd);
    throw unavailable();
  }
  return fd;
}

function spawnSandboxed(
  spec: BwrapSandbox,
  command: string[],
  opts: RunProcessOptions,
  env: Record<string, string>,
  cgroup: CallCgroup | undefined,
): ChildProcess {
  const etcFiles = Object.values(spec.etcFiles);
  // The workspace is opened and checked here, then handed to bubblewrap as a descriptor after the /etc ones.
  const workspaceFd = openCheckedDirectory(opts.workspace);
  const workspaceFdInChild = FIRST_ETC_FD + etcFiles.length;
  // The profile goes through a pipe; only the command stays on bubblewrap's command line (it must).
  let child: ChildProcess;
  try {
    child = spawn(spec.bwrapPath, ['--args', String(ARGS_FD), '--', ...command], {
      cwd: '/',
      // bubblewrap's own process is the sandbox's pid 1, and /proc/1/environ shows what it started with:
      // it gets the command's environment, built from nothing, never the service's.
      env,
      detached: true,
      shell: false,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', ...etcFiles.map(() => 'pipe' as const), workspaceFd],
      ...(spec.runAs && { uid: spec.runAs.uid, gid: spec.runAs.gid }),
    });
  } finally {
    // The child holds its own copy from here on (or never started).
    closeSync(workspaceFd);
  }
  // bubblewrap waits for its arguments before it forks anything: moved into the cgroup now, the whole
  // sandbox is born there.
  if (cgroup && child.pid !== undefined) {
    try {
      cgroup.attach(child.pid);
    } catch (err) {
      child.kill('SIGKILL');
      throw new ToolError(
        'sandbox_failed',
        `The command's sandbox could not be placed in its memory cgroup (${(err as NodeJS.ErrnoException).code ?? 'unknown error'}); the command did not run.`,
      );
    }
  }
  // bubblewrap reads its arguments to the end first, then the /etc files while it builds the sandbox.
  // An EPIPE means it died early; its exit is what the runner reports.
  const feed = (fd: number, content: string) => {
    const pipe = child.stdio[fd] as NodeJS.WritableStream & { on(event: 'error', fn: () => void): void };
    pipe.on('error', () => {});
    pipe.end(content);
  };
  // Each tmpfs of the sandbox holds no more than the command may hold in memory; its pages count there too.
  const tmpfsBytes = Math.min(spec.tmpSizeBytes, opts.memoryBytes ?? Infinity);
  const profile = bwrapArgs(spec, { workspace: SANDBOX_WORKSPACE, cwd: cwdInSandbox(opts.workspace, opts.cwd), workspaceFd: workspaceFdInChild, tmpfsBytes });
  feed(ARGS_FD, profile.map((arg) => `${arg}\0`).join(''));
  etcFiles.forEach((content, i) => feed(FIRST_ETC_FD + i, content));
  return child;
}

interface Confinement {
  sandbox: SandboxStatus | undefined;
  cgroup: CallCgroup | undefined;
  memoryBy: RunProcessResult['memoryLimitBy'];
}

function supervise(child: ChildProcess, pgid: number, opts: RunProcessOptions, { sandbox, cgroup, memoryBy }: Confinement): Promise<RunProcessResult> {
  const started = performance.now();
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
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
      child.stdio[STATUS_FD]?.destroy();
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
        memoryLimitBy: memoryBy,
        writtenBytes: watchdog?.writtenBytes ?? 0,
        fileSystemGrowthBytes: (opts.writes && watchdog?.fileSystemGrowth()) ?? null,
        fileSystemInodeGrowth: (opts.writes && watchdog?.fileSystemInodeGrowth()) ?? null,
        durationMs: Math.round(performance.now() - started),
      };
      // prlimit exits 126 or 127 with this message when the command vanished after the check (or, in
      // a sandbox, when the sandbox's uid may not execute it).
      const execFailed =
        (result.exitCode === 126 || result.exitCode === 127) && result.stderr.startsWith('prlimit: failed to execute');
      // bubblewrap exited without ever reporting the command's exit: the sandbox could not be set up.
      const setupFailed = sandbox !== undefined && sandbox.exitCode === undefined && killReason === undefined;
      void waitForGroupExit(pgid, GROUP_EXIT_WAIT_MS)
        .catch(() => false)
        .then(() => {
          void cgroup?.remove().catch(() => undefined);
          if (setupFailed) return reject(sandboxSetupFailed(result.stderr));
          if (!execFailed) return resolve(result);
          reject(new ToolError('spawn_failed', `Cannot start ${opts.argv[0]}: ${result.stderr.trim()}`));
        });
    };

    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    if (sandbox) child.stdio[STATUS_FD]!.on('data', (chunk: Buffer) => sandbox.push(chunk));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      killGroup(pgid); // whatever it left running in the background goes with it
      // What the command wrote before it exited (its last output, bubblewrap's exit status) is in the
      // pipes, but may not have been read: one SIGCHLD reaps every child that has exited, some after the
      // loop last polled. The drain's clock starts once the loop has polled again, so a stall of the
      // loop (a busy machine) cannot end the wait before that is read and turn a command that ran into
      // "the sandbox could not be set up".
      afterNextPoll(() => {
        if (!settled) timers.push(setTimeout(settle, DRAIN_MS));
      });
    });
    child.on('close', settle);
    child.on('error', () => {}); // after a successful spawn only kill() reports here, and it is not used

    // EPIPE: the command exited or closed stdin without reading it all, which is its right.
    child.stdin!.on('error', () => {});
    child.stdin!.end(opts.stdin ?? '');

    timers.push(setTimeout(() => kill('timeout'), opts.timeoutMs));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // In a sandbox the kernel holds the process count (RLIMIT_NPROC in its own user namespace).
    const maxProcesses = opts.limits?.maxProcesses;
    if (maxProcesses !== undefined && !sandbox) {
      const done = () => settled || killReason !== undefined;
      void watchProcessCount(pgid, maxProcesses, done, () => kill('processes'));
    }
    watchdog?.start((excess) => kill(excess));
    // cgroup v1's OOM killer ends one process (the one writing to /dev/shm, say) and lets the rest go on:
    // once it has struck, the whole sandbox goes, and its tmpfs pages with its mount namespace.
    if (cgroup) void watchOomKills(cgroup, () => settled || killReason !== undefined, () => kill('memory'));
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

// setImmediate from the poll phase runs in the same turn's check phase; one more is queued for the next
// turn's, after its poll phase has read whatever the pipes held.
function afterNextPoll(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
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
  const why = stderr.trim().split('\n').find((line) => line.startsWith('bwrap:')) ?? stderr.trim().slice(0, 500);
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

async function assertRunnable(opts: RunProcessOptions): Promise<void> {
  const fail = (why: string) => new ToolError('spawn_failed', `Cannot start ${opts.argv[0]}: ${why}.`);
  try {
    if (!(await stat(opts.cwd)).isDirectory()) throw fail('the working directory is not a directory');
  } catch (err) {
    throw err instanceof ToolError ? err : fail('the working directory does not exist');
  }
  try {
    await access(PRLIMIT, constants.X_OK);
  } catch {
    throw fail(`${PRLIMIT} (util-linux) is not installed`);
  }
  try {
    await access(opts.executable, constants.X_OK);
    if (!(await stat(opts.executable)).isFile()) throw fail(`${opts.executable} is not a file`);
  } catch (err) {
    if (err instanceof ToolError) throw err;
    throw fail(`${opts.executable} is missing or not executable (${(err as NodeJS.ErrnoException).code})`);
  }
}

function spawnFailed(command: string | undefined, err: unknown): ToolError {
  const code = (err as NodeJS.ErrnoException).code ?? 'unknown error';
  return new ToolError('spawn_failed', `Cannot start ${command}: ${code}.`);
}

function notStarted(): RunProcessResult {
  return {
    exitCode: null,
    signal: null,
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    timedOut: false,
    aborted: true,
    killedForOutput: false,
    killedForProcessLimit: false,
    killedForMemory: false,
    killedForWriteLimit: false,
    killedForWorkspaceQuota: false,
    memoryLimitBy: null,
    writtenBytes: 0,
    fileSystemGrowthBytes: null,
    fileSystemInodeGrowth: null,
    durationMs: 0,
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { access, constants, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { badRequest } from '../../common/errors/app-error.js';
import { ToolError } from '../tool-error.js';
import { OutputCapture } from './output-capture.js';
import { buildChildEnv } from './process-env.js';
import { groupExceeds, killGroup, waitForGroupExit } from './process-group.js';
import { PRLIMIT, prlimitArgs, type ProcessLimits } from './process-limits.js';

export { validateEnv } from './process-env.js';
export type { ProcessLimits } from './process-limits.js';

export interface RunProcessOptions {
  argv: string[];
  executable: string;
  cwd: string;
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  limits?: ProcessLimits;
  // Run as this uid/gid with no supplementary groups (needs a root service). Only then does the
  // kernel enforce maxProcesses, and only then can the command not read the service's /proc entries.
  runAs?: { uid: number; gid: number };
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
  durationMs: number;
}

type KillReason = 'timeout' | 'abort' | 'output' | 'processes';

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
  const { runAs } = opts;
  if (runAs && ![runAs.uid, runAs.gid].every((id) => Number.isSafeInteger(id) && id >= 0)) {
    throw badRequest('invalid_run_as', 'runAs needs a numeric uid and gid.');
  }
  const env = buildChildEnv(opts.cwd, opts.env);
  const limitArgs = await prlimitArgs(opts.limits, runAs?.uid);
  await assertRunnable(opts);
  if (opts.signal?.aborted) return notStarted();

  let child: ChildProcess;
  try {
    // No shell: every argv element reaches the command as one literal argument.
    child = spawn(PRLIMIT, [...limitArgs, '--', opts.executable, ...opts.argv.slice(1)], {
      cwd: opts.cwd,
      env,
      detached: true, // its own process group, so one kill reaches everything it started
      shell: false,
      stdio: 'pipe',
      // libuv also clears the supplementary groups when it switches uid.
      ...(runAs && { uid: runAs.uid, gid: runAs.gid }),
    });
  } catch (err) {
    throw spawnFailed(opts.argv[0], err);
  }
  const pgid = child.pid;
  if (pgid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw spawnFailed(opts.argv[0], err);
  }
  return supervise(child, pgid, opts);
}

function supervise(child: ChildProcess, pgid: number, opts: RunProcessOptions): Promise<RunProcessResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let settled = false;
    let killReason: KillReason | undefined;
    let exit: { code: number | null; signal: string | null } | undefined;
    const timers: NodeJS.Timeout[] = [];

    const kill = (reason: KillReason) => {
      if (settled) return;
      // Once it has exited, a late timer or abort only sweeps up leftovers; it did not stop the command.
      if (!exit) killReason ??= reason;
      killGroup(pgid);
      if (!exit) timers.push(setTimeout(settle, KILL_SETTLE_MS));
    };
    const onAbort = () => kill('abort');
    const stdout = new OutputCapture(opts.maxOutputBytes, () => kill('output'));
    const stderr = new OutputCapture(opts.maxOutputBytes, () => kill('output'));

    const settle = () => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      opts.signal?.removeEventListener('abort', onAbort);
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
      const result: RunProcessResult = {
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        timedOut: killReason === 'timeout',
        aborted: killReason === 'abort',
        killedForOutput: killReason === 'output',
        killedForProcessLimit: killReason === 'processes',
        durationMs: Math.round(performance.now() - started),
      };
      // prlimit exits 126 or 127 with this message when the command vanished after the check.
      const execFailed =
        (result.exitCode === 126 || result.exitCode === 127) && result.stderr.startsWith('prlimit: failed to execute');
      void waitForGroupExit(pgid, GROUP_EXIT_WAIT_MS)
        .catch(() => false)
        .then(() => {
          if (!execFailed) return resolve(result);
          reject(new ToolError('spawn_failed', `Cannot start ${opts.argv[0]}: ${result.stderr.trim()}`));
        });
    };

    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      killGroup(pgid); // whatever it left running in the background goes with it
      timers.push(setTimeout(settle, DRAIN_MS));
    });
    child.on('close', settle);
    child.on('error', () => {}); // after a successful spawn only kill() reports here, and it is not used

    // EPIPE: the command exited or closed stdin without reading it all, which is its right.
    child.stdin!.on('error', () => {});
    child.stdin!.end(opts.stdin ?? '');

    timers.push(setTimeout(() => kill('timeout'), opts.timeoutMs));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const maxProcesses = opts.limits?.maxProcesses;
    if (maxProcesses !== undefined) {
      const done = () => settled || killReason !== undefined;
      void watchProcessCount(pgid, maxProcesses, done, () => kill('processes'));
    }
  });
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
    durationMs: 0,
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync, readlinkSync } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ToolError } from '../tool-error.js';
import { buildChildEnv } from './process-env.js';
import { ADDRESS_SPACE_HEADROOM_BYTES, PRLIMIT, prlimitArgs } from './process-limits.js';
import type { RunProcessOptions, RunProcessResult } from './run-process-types.js';
import { RunRefused } from './run-refused.js';
import { supervise } from './run-supervision.js';
import { ARGS_FD, bwrapArgs, FIRST_ETC_FD, SandboxStatus } from './sandbox/bwrap-profile.js';
import { sandboxSeccompFilter } from './sandbox/seccomp-filter.js';
import { CallCgroup } from './sandbox/call-cgroup.js';
import { attachToCpuGroup } from '../../common/cpu-shares/tenant-cpu-groups.js';
import { SANDBOX_TMP, type BwrapSandbox, type RunAs, SANDBOX_WORKSPACE, cwdInSandbox } from './sandbox/sandbox-spec.js';

export { validateEnv } from './process-env.js';
export type { ProcessLimits } from './process-limits.js';
export type { WriteLimits } from './resource-watchdog.js';
export type { RunProcessOptions, RunProcessResult } from './run-process-types.js';
export { RunRefused } from './run-refused.js';

// Assembled once: the same for every sandbox on this machine.
const SECCOMP_FILTER = sandboxSeccompFilter();

// Starts one command, confined by the sandbox the caller hands it (bubblewrap, or none where the operator
// chose so), under its limits; run-supervision.ts watches it to its end. Options it cannot honour are
// refused (RunRefused) before anything starts; a command that cannot start is a ToolError (spawn_failed,
// sandbox_failed, workspace_unavailable).
export async function runProcess(opts: RunProcessOptions): Promise<RunProcessResult> {
  if (opts.argv.length === 0 || opts.argv.some((arg) => typeof arg !== 'string' || arg.includes('\0'))) {
    throw new RunRefused('invalid_argv', 'The command must be a non-empty list of strings without NUL bytes.');
  }
  // setTimeout turns anything past 2^31-1 ms into 1 ms.
  if (!(Number.isSafeInteger(opts.timeoutMs) && opts.timeoutMs > 0 && opts.timeoutMs <= 2 ** 31 - 1)) {
    throw new RunRefused('invalid_timeout', 'timeoutMs must be a positive integer of at most 2147483647.');
  }
  if (!(Number.isSafeInteger(opts.maxOutputBytes) && opts.maxOutputBytes >= 0)) {
    throw new RunRefused('invalid_output_cap', 'maxOutputBytes must be a non-negative integer.');
  }
  if (opts.memoryBytes !== undefined && !(Number.isSafeInteger(opts.memoryBytes) && opts.memoryBytes > 0)) {
    throw new RunRefused('invalid_limits', 'memoryBytes must be a positive integer.');
  }
  const { sandbox } = opts;
  const runAs = sandbox.runAs;
  if (runAs && ![runAs.uid, runAs.gid].every((id) => Number.isSafeInteger(id) && id >= 0)) {
    throw new RunRefused('invalid_run_as', 'runAs needs a numeric uid and gid.');
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
  const limits =
    memoryBy === 'rlimit' ? { ...opts.limits, addressSpaceBytes: opts.memoryBytes! + ADDRESS_SPACE_HEADROOM_BYTES } : opts.limits;
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
    new ToolError(
      'workspace_unavailable',
      'The workspace is no longer the directory that was accepted (gone, or a symlink in its path); the command did not run.',
    );
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
  // The seccomp filter follows on a pipe of its own (bubblewrap reads it to the end).
  const seccompFdInChild = SECCOMP_FILTER ? workspaceFdInChild + 1 : undefined;
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
      stdio: [
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        ...etcFiles.map(() => 'pipe' as const),
        workspaceFd,
        ...(SECCOMP_FILTER ? ['pipe' as const] : []),
      ],
      ...(spec.runAs && { uid: spec.runAs.uid, gid: spec.runAs.gid }),
    });
  } finally {
    // The child holds its own copy from here on (or never started).
    closeSync(workspaceFd);
  }
  // bubblewrap waits for its arguments before it forks anything: moved into the cgroup now, the whole
  // sandbox is born there.
  if (child.pid !== undefined) {
    const place = (what: string, attach: (pid: number) => void) => {
      try {
        attach(child.pid!);
      } catch (err) {
        child.kill('SIGKILL');
        throw new ToolError(
          'sandbox_failed',
          `The command's sandbox could not be placed in its ${what} (${(err as NodeJS.ErrnoException).code ?? 'unknown error'}); the command did not run.`,
        );
      }
    };
    if (cgroup) place('memory cgroup', (pid) => cgroup.attach(pid));
    if (spec.cpuGroup) place("tenant's cpu cgroup", (pid) => attachToCpuGroup(spec.cpuGroup!, pid));
  }
  // bubblewrap reads its arguments to the end first, then the /etc files while it builds the sandbox.
  // An EPIPE means it died early; its exit is what the runner reports.
  const feed = (fd: number, content: string | Buffer) => {
    const pipe = child.stdio[fd] as NodeJS.WritableStream & { on(event: 'error', fn: () => void): void };
    pipe.on('error', () => {});
    pipe.end(content);
  };
  // Each tmpfs of the sandbox holds no more than the command may hold in memory; its pages count there too.
  const tmpfsBytes = Math.min(spec.tmpSizeBytes, opts.memoryBytes ?? Infinity);
  const profile = bwrapArgs(spec, {
    workspace: SANDBOX_WORKSPACE,
    cwd: cwdInSandbox(opts.workspace, opts.cwd),
    workspaceFd: workspaceFdInChild,
    tmpfsBytes,
    seccompFd: seccompFdInChild,
  });
  feed(ARGS_FD, profile.map((arg) => `${arg}\0`).join(''));
  etcFiles.forEach((content, i) => feed(FIRST_ETC_FD + i, content));
  if (SECCOMP_FILTER && seccompFdInChild !== undefined) feed(seccompFdInChild, SECCOMP_FILTER);
  return child;
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
    workspaceQuotaPassed: null,
    memoryLimitBy: null,
    writtenBytes: 0,
    workspaceGrowthAtMost: null,
    durationMs: 0,
  };
}

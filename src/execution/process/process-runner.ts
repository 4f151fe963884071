import { access, constants, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { ToolError } from '../tool-error.js';
import { buildChildEnv } from './process-env.js';
import { ADDRESS_SPACE_HEADROOM_BYTES, PRLIMIT, prlimitArgs } from './process-limits.js';
import type { RunProcessOptions, RunProcessResult } from './run-process-types.js';
import { RunRefused } from './run-refused.js';
import { fileSystemFigures } from './resource-watchdog.js';
import { supervise } from './run-supervision.js';
import { ARGS_FD, bwrapArgs, FIRST_ETC_FD, SandboxStatus, STATUS_FD } from './sandbox/bwrap-profile.js';
import { sandboxSeccompFilter } from './sandbox/seccomp-filter.js';
import { CallCgroup } from './sandbox/call-cgroup.js';
import type { SpawnRequest } from './child-start.js';
import { StartFailed, startChild, type StartedChild } from './command-launcher.js';
import { SANDBOX_TMP, type BwrapSandbox, SANDBOX_WORKSPACE, cwdInSandbox } from './sandbox/sandbox-spec.js';

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
  // Read before the launcher starts it: by the time it reports the start, a command may have made files.
  const fileSystemBefore = opts.writes?.quota ? fileSystemFigures(opts.workspace) : undefined;
  let child: StartedChild;
  try {
    // No shell: every argv element reaches the command as one literal argument.
    const command = [PRLIMIT, ...(await prlimitArgs(limits, limitWhere)), '--', opts.executable, ...opts.argv.slice(1)];
    const stdin = { fd: 0, content: opts.stdin ?? '' };
    child =
      sandbox.kind === 'bwrap'
        ? await startSandboxed(sandbox, command, opts, env, stdin, cgroup)
        : await startOrFail(opts, {
            file: command[0],
            args: command.slice(1),
            cwd: opts.cwd,
            env,
            runAs,
            stdio: ['pipe', 'pipe', 'pipe'],
            placeIn: [],
            feeds: [stdin],
            read: outputPipes(opts),
          });
  } catch (err) {
    void cgroup?.remove().catch(() => undefined);
    throw err;
  }
  return supervise(child, opts, { sandbox: sandboxed ? new SandboxStatus() : undefined, cgroup, memoryBy, fileSystemBefore });
}

// stdout and stderr, each read up to one byte past the cap (which is how the supervisor sees it passed).
function outputPipes(opts: RunProcessOptions): SpawnRequest['read'] {
  return [
    { fd: 1, maxBytes: opts.maxOutputBytes },
    { fd: 2, maxBytes: opts.maxOutputBytes },
  ];
}

// bubblewrap's status lines: two short JSON documents.
const STATUS_MAX_BYTES = 64 * 1024;

async function startOrFail(opts: RunProcessOptions, request: SpawnRequest): Promise<StartedChild> {
  try {
    return await startChild(request);
  } catch (err) {
    if (!(err instanceof StartFailed)) throw err;
    const { failure } = err;
    if (failure.directory) {
      throw new ToolError(
        'workspace_unavailable',
        'The workspace is no longer the directory that was accepted (gone, or a symlink in its path); the command did not run.',
      );
    }
    if (failure.placement) {
      throw new ToolError(
        'sandbox_failed',
        `The command's sandbox could not be placed in its ${failure.placement} (${failure.code}); the command did not run.`,
      );
    }
    throw new ToolError('spawn_failed', `Cannot start ${opts.argv[0]}: ${failure.code}.`);
  }
}

async function startSandboxed(
  spec: BwrapSandbox,
  command: string[],
  opts: RunProcessOptions,
  env: Record<string, string>,
  stdin: { fd: number; content: string },
  cgroup: CallCgroup | undefined,
): Promise<StartedChild> {
  const etcFiles = Object.values(spec.etcFiles);
  const workspaceFdInChild = FIRST_ETC_FD + etcFiles.length;
  // The seccomp filter follows on a pipe of its own (bubblewrap reads it to the end).
  const seccompFdInChild = SECCOMP_FILTER ? workspaceFdInChild + 1 : undefined;
  // Each tmpfs of the sandbox holds no more than the command may hold in memory; its pages count there too.
  const tmpfsBytes = Math.min(spec.tmpSizeBytes, opts.memoryBytes ?? Infinity);
  const profile = bwrapArgs(spec, {
    workspace: SANDBOX_WORKSPACE,
    cwd: cwdInSandbox(opts.workspace, opts.cwd),
    workspaceFd: workspaceFdInChild,
    tmpfsBytes,
    seccompFd: seccompFdInChild,
    env,
  });
  return startOrFail(opts, {
    file: spec.bwrapPath,
    // The profile goes through a pipe; only the command stays on bubblewrap's command line (it must).
    args: ['--args', String(ARGS_FD), '--', ...command],
    cwd: '/',
    // bubblewrap runs on the host (as the tenant's uid) until the sandbox is built, and its own process is
    // the sandbox's pid 1, whose /proc/1/environ shows what it started with: it starts with the fixed part
    // of a command's environment, never the service's, and never the variables a call asked for, which
    // would reach the loader and libc of a process outside the sandbox (GLIBC_TUNABLES, LOCPATH, TZ...).
    // The command gets those from the profile (--clearenv, --setenv).
    env: buildChildEnv({ home: SANDBOX_WORKSPACE, tmp: SANDBOX_TMP }),
    runAs: spec.runAs,
    // The workspace is opened and checked as it starts, and handed to bubblewrap after the /etc files.
    stdio: [
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      'pipe',
      ...etcFiles.map(() => 'pipe' as const),
      { directory: opts.workspace },
      ...(SECCOMP_FILTER ? ['pipe' as const] : []),
    ],
    // bubblewrap waits for its arguments before it forks anything: moved into the cgroups first, the whole
    // sandbox is born there.
    placeIn: [
      ...(cgroup ? [{ what: 'memory cgroup', kind: 'memory' as const, dir: cgroup.dir }] : []),
      ...(spec.cpuGroup ? [{ what: "tenant's cpu cgroup", kind: 'cpu' as const, dir: spec.cpuGroup }] : []),
    ],
    // bubblewrap reads its arguments to the end first, then the /etc files while it builds the sandbox.
    feeds: [
      stdin,
      { fd: ARGS_FD, content: profile.map((arg) => `${arg}\0`).join('') },
      ...etcFiles.map((content, i) => ({ fd: FIRST_ETC_FD + i, content })),
      ...(SECCOMP_FILTER && seccompFdInChild !== undefined ? [{ fd: seccompFdInChild, content: SECCOMP_FILTER }] : []),
    ],
    read: [...outputPipes(opts), { fd: STATUS_FD, maxBytes: STATUS_MAX_BYTES }],
  });
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

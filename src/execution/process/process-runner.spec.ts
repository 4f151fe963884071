import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../common/errors/app-error.js';
import { ToolError } from '../tool-error.js';
import { resolveAllowedExecutable } from './executable-allowlist.js';
import { runProcess, validateEnv, type RunProcessOptions } from './process-runner.js';

const ALLOWED = ['sh', 'printf', 'ls', 'env', 'cat', 'yes', 'dd', 'sleep', 'true', 'id', 'python3'];

let dir: string;
// Every group a test started is killed in afterAll, whatever the runner did.
const groups = new Set<number>();

const run = (argv: string[], extra: Partial<RunProcessOptions> = {}) =>
  runProcess({
    argv,
    executable: resolveAllowedExecutable(argv[0], ALLOWED),
    workspace: dir,
    cwd: dir,
    timeoutMs: 10_000,
    maxOutputBytes: 64 * 1024,
    sandbox: { kind: 'none' },
    ...extra,
  });

// The command prints its own pid first; under `detached` that is also its process group id.
const pgidOf = (stdout: string) => {
  const pgid = Number.parseInt(stdout, 10);
  expect(pgid).toBeGreaterThan(1);
  groups.add(pgid);
  return pgid;
};

// True when kill(-pgid, 0) finds no one, or only zombies that init has not reaped yet.
const groupIsGone = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .every((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(pgrp) !== pgid || state === 'Z';
      } catch {
        return true;
      }
    });
};

// Processes whose command line contains `marker`, found by scanning /proc.
const pidsRunning = (marker: string) =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker);
      } catch {
        return false;
      }
    });

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'process-runner-')));
});

afterAll(() => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone, as it should be
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('runProcess', () => {
  it('reports stdout, stderr and the exit code', async () => {
    const result = await run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(result).toMatchObject({
      exitCode: 3,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      stdoutTruncated: false,
      stderrTruncated: false,
      timedOut: false,
      aborted: false,
      killedForOutput: false,
      killedForProcessLimit: false,
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reports the signal that ended the command', async () => {
    const result = await run(['sh', '-c', 'kill -TERM $$']);
    expect([result.exitCode, result.signal]).toEqual([null, 'SIGTERM']);
  });

  it('runs in the given working directory', async () => {
    writeFileSync(join(dir, 'here.txt'), '');
    expect((await run(['ls'])).stdout.split('\n')).toContain('here.txt');
  });

  it('delivers stdin and then closes it', async () => {
    const result = await run(['cat'], { stdin: 'line one\nligne deux é\n' });
    expect([result.exitCode, result.stdout]).toEqual([0, 'line one\nligne deux é\n']);
  });

  it('ignores EPIPE when the command does not read its stdin', async () => {
    const result = await run(['true'], { stdin: 'x'.repeat(8 * 1024 * 1024) });
    expect(result.exitCode).toBe(0);
  });

  it('decodes UTF-8 and never splits a character at the cap', async () => {
    const result = await run(['printf', '%s', 'aé€'.repeat(100)], { maxOutputBytes: 10 });
    expect(result.stdoutTruncated).toBe(true);
    // 'a' (1) + 'é' (2) + '€' (3) + 'a' (1) = 7 bytes; the next 'é' would end past the cap of 10 only in part.
    expect(result.stdout).toBe('aé€aé');
    expect(result.stdout).not.toContain('\uFFFD');
    expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(10);
  });

  it('caps stderr on its own', async () => {
    const result = await run(['sh', '-c', 'echo fine; head -c 5000 /dev/zero | tr "\\0" x >&2'], {
      maxOutputBytes: 100,
    });
    expect([result.stdout, result.stdoutTruncated]).toEqual(['fine\n', false]);
    expect([result.stderr.length, result.stderrTruncated, result.killedForOutput]).toEqual([100, true, true]);
  });

  it('settles soon after the command exits even if a process outside its group holds stdout open', async () => {
    const started = Date.now();
    const result = await run(['sh', '-c', 'setsid sleep 5.31 & echo $!']);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.exitCode).toBe(0);
    // setsid left the group, unless the group's kill reached it before it got there: then it is gone already.
    try {
      process.kill(Number.parseInt(result.stdout, 10), 'SIGKILL');
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ESRCH');
    }
  });

  it('fails with spawn_failed when the executable is missing or not executable', async () => {
    const notExecutable = join(dir, 'script.sh');
    writeFileSync(notExecutable, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    for (const executable of [join(dir, 'missing'), notExecutable, dir]) {
      const attempt = runProcess({ argv: ['x'], executable, workspace: dir, cwd: dir, timeoutMs: 1000, maxOutputBytes: 100, sandbox: { kind: 'none' } });
      await expect(attempt).rejects.toBeInstanceOf(ToolError);
      await expect(attempt).rejects.toMatchObject({ code: 'spawn_failed' });
    }
  });

  it('fails with spawn_failed when the working directory does not exist', async () => {
    await expect(run(['ls'], { cwd: join(dir, 'nope') })).rejects.toMatchObject({ code: 'spawn_failed' });
  });

  it('refuses a timeout setTimeout cannot represent and a negative output cap', async () => {
    await expect(run(['true'], { timeoutMs: 2 ** 31 })).rejects.toMatchObject({ status: 400, code: 'invalid_timeout' });
    await expect(run(['true'], { maxOutputBytes: -1 })).rejects.toMatchObject({ code: 'invalid_output_cap' });
  });

  it('refuses an argv with a NUL byte and an empty argv with 400', async () => {
    await expect(run(['printf', 'a\0b'])).rejects.toMatchObject({ status: 400, code: 'invalid_argv' });
    await expect(
      runProcess({ argv: [], executable: '/usr/bin/true', workspace: dir, cwd: dir, timeoutMs: 1000, maxOutputBytes: 10, sandbox: { kind: 'none' } }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_argv' });
  });

  it('refuses dangerous environment names before spawning', async () => {
    const marker = join(dir, 'env-refused');
    await expect(run(['sh', '-c', `touch ${marker}`], { env: { LD_PRELOAD: '/tmp/x.so' } })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_env',
    });
    expect(existsSync(marker)).toBe(false);
    expect(() => validateEnv({ NODE_OPTIONS: '--require x' })).toThrow(AppError);
  });

  it('reports the timeout', async () => {
    const result = await run(['sleep', '30'], { timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL', aborted: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('keeps the output produced before the timeout', async () => {
    const result = await run(['sh', '-c', 'echo before; sleep 30'], { timeoutMs: 300 });
    expect([result.timedOut, result.stdout]).toEqual([true, 'before\n']);
  });

  it('kills the whole group when the AbortSignal fires', async () => {
    const controller = new AbortController();
    const pending = run(['sh', '-c', 'echo $$; sleep 997.5 & sleep 997.5'], { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    const result = await pending;
    expect(result).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGKILL' });
    expect(result.durationMs).toBeLessThan(2000);
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('997.5')).toEqual([]);
  });

  it('does not start a command whose signal is already aborted', async () => {
    const marker = join(dir, 'aborted-before');
    const result = await run(['sh', '-c', `touch ${marker}`], { signal: AbortSignal.abort() });
    expect(result.aborted).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('kills processes left in the background when the command exits', async () => {
    const result = await run(['sh', '-c', 'echo $$; sleep 996.5 >/dev/null 2>&1 &']);
    expect(result.exitCode).toBe(0);
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('996.5')).toEqual([]);
  });
});

describe('runProcess against hostile commands', () => {
  it('[sec-27] passes "; rm -rf /" as one literal argument and runs no shell', async () => {
    writeFileSync(join(dir, 'canary'), 'still here');
    const printed = await run(['printf', '%s', '; rm -rf / ; touch pwned $(touch pwned2)']);
    expect(printed.stdout).toBe('; rm -rf / ; touch pwned $(touch pwned2)');
    const listed = await run(['ls', '; rm -rf /']);
    expect(listed.exitCode).not.toBe(0);
    expect(listed.stderr).toContain("'; rm -rf /'");
    expect(readFileSync(join(dir, 'canary'), 'utf8')).toBe('still here');
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(existsSync(join(dir, 'pwned2'))).toBe(false);
  });

  it('[sec-29] kills the whole group of sh -c "sleep 999 & sleep 999" at the timeout and leaves no orphans', async () => {
    const result = await run(['sh', '-c', 'echo $$; sleep 999.29 & sleep 999.29'], { timeoutMs: 500 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect(result.durationMs).toBeLessThan(1500);
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('999.29')).toEqual([]);
  });

  it('[sec-29] settles at the timeout even when a grandchild keeps stdout open', async () => {
    const result = await run(['sh', '-c', 'echo $$; (sleep 999.291; echo never) & wait'], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.durationMs).toBeLessThan(1500);
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('999.291')).toEqual([]);
  });

  it('[sec-30] caps the output of yes, marks it truncated and kills it', async () => {
    const result = await run(['yes'], { maxOutputBytes: 64 * 1024, timeoutMs: 10_000 });
    expect(result).toMatchObject({
      stdoutTruncated: true,
      killedForOutput: true,
      timedOut: false,
      exitCode: null,
      signal: 'SIGKILL',
    });
    expect(result.stdout).toHaveLength(64 * 1024);
    expect(result.stdout.startsWith('y\ny\n')).toBe(true);
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('[sec-31] env shows none of the service environment', async () => {
    const planted = { TOOLGATE_SEC31_CANARY: 'canary-value', DATABASE_URL: 'postgres://secret', ADMIN_TOKEN: 'tok' };
    const saved = Object.fromEntries(Object.keys(planted).map((k) => [k, process.env[k]]));
    Object.assign(process.env, planted);
    try {
      const result = await run(['env'], { env: { GIT_AUTHOR_NAME: 'agent' } });
      const names = result.stdout.trim().split('\n').map((line) => line.split('=')[0]);
      expect(names.sort()).toEqual(['GIT_AUTHOR_NAME', 'HOME', 'LANG', 'PATH', 'TMPDIR']);
      for (const value of Object.values(planted)) expect(result.stdout).not.toContain(value);
      expect(result.stdout).toContain(`HOME=${dir}\n`);
      expect(result.stdout).toContain('PATH=/usr/local/bin:/usr/bin:/bin\n');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('[sec-32] stops a bounded fork bomb at the process limit', async () => {
    // At most 300 sleeping processes even if every limit failed; each one notes that it started.
    const bomb = 'echo $$; i=0; while [ $i -lt 300 ]; do sleep 995.32 & echo >> started; i=$((i+1)); done; wait';
    const result = await run(['sh', '-c', bomb], { timeoutMs: 15_000, limits: { maxProcesses: 40 } });
    const started = readFileSync(join(dir, 'started'), 'utf8').length;
    // The watchdog (this runner's only limit under root) killed the group: how many started before its
    // next look depends on the scheduler, so what holds is that it fired and nothing is left. It fires at
    // 41 members, the shell and 40 children, and the shell may not have noted the last one yet: 39 at least.
    expect(result).toMatchObject({ killedForProcessLimit: true, timedOut: false, signal: 'SIGKILL' });
    expect(started).toBeGreaterThanOrEqual(39);
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('995.32')).toEqual([]);
  });

  it('[sec-32] kills the whole group of a bounded recursive fork bomb once it passes the process limit', async () => {
    // Every process starts two more down to depth 8: 511 at most, far past the limit of 40.
    const tree = join(dir, 'tree.sh');
    writeFileSync(
      tree,
      'echo >> started-tree\nif [ "$1" -gt 0 ]; then sh "$0" $(($1-1)) & sh "$0" $(($1-1)) & fi\nexec sleep 994.32\n',
    );
    const result = await run(['sh', '-c', 'echo $$; exec sh "$0" 8', tree], {
      timeoutMs: 15_000,
      limits: { maxProcesses: 40 },
    });
    // The bomb really ran before it was stopped.
    expect(readFileSync(join(dir, 'started-tree'), 'utf8').length).toBeGreaterThan(10);
    expect(result).toMatchObject({ killedForProcessLimit: true, timedOut: false, signal: 'SIGKILL' });
    // How many it reached before the watchdog's next look depends on the scheduler (as root the kernel
    // does not cap it); the hard cap under SHELL_RUN_AS is the runAs test below.
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('994.32')).toEqual([]);
  });

  it('[sec-32] stops a huge file write at the file-size limit', async () => {
    const limit = 1024 * 1024;
    const result = await run(['dd', 'if=/dev/zero', 'of=big.bin', 'bs=64k', 'count=160'], {
      limits: { maxFileSizeBytes: limit },
    });
    expect(result.signal).toBe('SIGXFSZ');
    expect(statSync(join(dir, 'big.bin')).size).toBeLessThanOrEqual(limit);
  });

  it('[sec-32] writes through a shell redirect are held to the same file-size limit', async () => {
    const limit = 256 * 1024;
    const result = await run(['sh', '-c', 'head -c 5000000 /dev/zero > big2.bin'], {
      limits: { maxFileSizeBytes: limit },
    });
    expect(result.exitCode).not.toBe(0);
    expect(statSync(join(dir, 'big2.bin')).size).toBeLessThanOrEqual(limit);
  });

  it('stops a CPU-bound loop at the CPU limit', async () => {
    const result = await run(['sh', '-c', 'while :; do :; done'], { timeoutMs: 10_000, limits: { cpuSeconds: 1 } });
    expect(result.signal).toBe('SIGXCPU');
    expect(result.timedOut).toBe(false);
  });
});

const MiB = 1024 * 1024;
const withPython = existsSync('/usr/bin/python3') ? describe : describe.skip;

// Python, because it can pace its allocations and writes: each test's command would pass its limit many
// times over if nothing stopped it, slowly enough that the watchdog's samples see it happen.
withPython('runProcess resource limits', () => {
  let ws: string;
  const py = (script: string, extra: Partial<RunProcessOptions> = {}) => run(['python3', '-c', script], { workspace: ws, cwd: ws, timeoutMs: 20_000, ...extra });

  beforeEach(() => {
    ws = realpathSync(mkdtempSync(join(tmpdir(), 'process-runner-limits-')));
  });
  afterEach(() => rmSync(ws, { recursive: true, force: true }));

  it('stops processes whose memory together passes memoryBytes, each one under it', async () => {
    // Four processes of 24 MiB each: none alone passes 64 MiB, together they hold 96 MiB.
    const script = [
      'import os, time',
      'for _ in range(3):',
      '    if os.fork() == 0: break',
      'held = []',
      'for _ in range(24):',
      '    held.append(bytearray(1 << 20)); time.sleep(0.01)',
      'time.sleep(20)',
    ].join('\n');
    const result = await py(script, { memoryBytes: 64 * MiB });
    expect(result).toMatchObject({ killedForMemory: true, memoryLimitBy: 'rlimit', timedOut: false, signal: 'SIGKILL' });
  });

  it('refuses an allocation past the address space each process may reserve', async () => {
    const result = await py('b = bytearray(2 * 1024 ** 3)', { memoryBytes: 64 * MiB });
    expect(result).toMatchObject({ exitCode: 1, killedForMemory: false, memoryLimitBy: 'rlimit' });
    expect(result.stderr).toContain('MemoryError');
  });

  it('lets a command use memory up to the limit', async () => {
    const result = await py('b = bytearray(24 << 20); print(len(b))', { memoryBytes: 64 * MiB });
    expect(result).toMatchObject({ exitCode: 0, stdout: `${24 << 20}\n`, killedForMemory: false });
  });

  it('stops a command once it has written more than writes.maxBytes to files, in files each under the file-size limit', async () => {
    const script = [
      'import time',
      'for i in range(64):',
      '    with open(f"part-{i}", "wb") as f: f.write(b"x" * (1 << 20))',
      '    time.sleep(0.01)',
    ].join('\n');
    const result = await py(script, { writes: { maxBytes: 4 * MiB }, limits: { maxFileSizeBytes: 2 * MiB } });
    expect(result).toMatchObject({ killedForWriteLimit: true, signal: 'SIGKILL' });
    expect(result.writtenBytes).toBeGreaterThan(4 * MiB);
    // On disk: about the budget (the file being written when it was killed may be cut short).
    const written = readdirSync(ws).reduce((sum, name) => sum + statSync(join(ws, name)).size, 0);
    expect(written).toBeGreaterThanOrEqual(3 * MiB);
    expect(written).toBeLessThan(32 * MiB);
  });

  it('stops a command that grows the workspace past its quota without writing a byte (fallocate)', async () => {
    const script = [
      'import os, time',
      'for i in range(64):',
      '    fd = os.open(f"reserved-{i}", os.O_CREAT | os.O_WRONLY)',
      '    os.posix_fallocate(fd, 0, 1 << 20); os.close(fd)',
      '    time.sleep(0.02)',
    ].join('\n');
    const quota = { bytes: 8 * MiB, usageAtStart: 0 };
    const result = await py(script, { writes: { maxBytes: 256 * MiB, quota } });
    expect(result).toMatchObject({ killedForWorkspaceQuota: true, killedForWriteLimit: false, signal: 'SIGKILL' });
    expect(readdirSync(ws).length).toBeLessThan(64);
  });

  it('lets a command that writes within its budget and quota finish', async () => {
    const script = 'open("small", "wb").write(b"x" * (1 << 20))';
    const result = await py(script, { writes: { maxBytes: 4 * MiB, quota: { bytes: 8 * MiB, usageAtStart: 0 } } });
    expect(result).toMatchObject({ exitCode: 0, killedForWriteLimit: false, killedForWorkspaceQuota: false });
  });
});

// Dropping to another uid needs a root service; elsewhere these are skipped.
const asRoot = process.getuid?.() === 0 ? describe : describe.skip;

asRoot('runProcess with runAs an unprivileged uid', () => {
  const nobody = { uid: 65534, gid: 65534 };
  let ws: string;
  const runAsNobody = (argv: string[], extra: Partial<RunProcessOptions> = {}) =>
    run(argv, { workspace: ws, cwd: ws, sandbox: { kind: 'none', runAs: nobody }, ...extra });

  beforeAll(() => {
    ws = realpathSync(mkdtempSync(join(tmpdir(), 'process-runner-nobody-')));
    chownSync(ws, nobody.uid, nobody.gid); // the deployment's job: the workspace belongs to the sandbox uid
  });
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it('runs as that uid and gid with no supplementary groups, and can write its workspace', async () => {
    const result = await runAsNobody(['sh', '-c', 'id -u; id -g; id -G; echo written > out.txt']);
    expect(result.stdout).toBe('65534\n65534\n65534\n');
    expect(readFileSync(join(ws, 'out.txt'), 'utf8')).toBe('written\n');
  });

  it('[sec-31] cannot read the environment the service started with from /proc', async () => {
    const result = await runAsNobody(['sh', '-c', 'cat /proc/$PPID/environ']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Permission denied');
  });

  it('[sec-32] the kernel refuses forks past the process limit (RLIMIT_NPROC)', async () => {
    const bomb = 'echo $$; i=0; while [ $i -lt 300 ]; do sleep 992.32 & echo >> started; i=$((i+1)); done; wait';
    const result = await runAsNobody(['sh', '-c', bomb], { timeoutMs: 15_000, limits: { maxProcesses: 40 } });
    const started = readFileSync(join(ws, 'started'), 'utf8').length;
    expect(result.stderr).toContain('Cannot fork');
    // RLIMIT_NPROC here is the uid's task count at the start plus 40, and the sandboxes of other tests run
    // as this uid too: the cap is the kernel's, but its exact headroom depends on what else runs as it.
    expect(started).toBeLessThan(300);
    expect(groupIsGone(pgidOf(result.stdout))).toBe(true);
    expect(pidsRunning('992.32')).toEqual([]);
  });

  it('fails with spawn_failed when that uid may not execute the command', async () => {
    const rootOnly = join(ws, 'root-only');
    writeFileSync(rootOnly, '#!/bin/sh\necho ran\n', { mode: 0o700 });
    const attempt = runProcess({
      argv: ['root-only'],
      executable: rootOnly,
      workspace: ws,
      cwd: ws,
      sandbox: { kind: 'none', runAs: nobody },
      timeoutMs: 5000,
      maxOutputBytes: 1000,
    });
    await expect(attempt).rejects.toBeInstanceOf(ToolError);
    await expect(attempt).rejects.toMatchObject({ code: 'spawn_failed' });
  });

  it('refuses a runAs that is not a uid and gid', async () => {
    await expect(run(['true'], { sandbox: { kind: 'none', runAs: { uid: -1, gid: 0 } } })).rejects.toMatchObject({ code: 'invalid_run_as' });
  });
});

// A busy service: every turn of the event loop stalls for longer than the runner waits for pipes after an
// exit. Several commands end at once, so one SIGCHLD reaps some whose last writes the loop has not polled.
async function withStalledLoop<T>(stallMs: number, fn: () => Promise<T>): Promise<T> {
  let stop = false;
  const stall = () => {
    const until = Date.now() + stallMs;
    while (Date.now() < until);
    if (!stop) setImmediate(stall);
  };
  setImmediate(stall);
  try {
    return await fn();
  } finally {
    stop = true;
  }
}

const STALL_MS = 120; // more than the 100 ms drain
const ROUNDS = 6;

describe('runProcess on a stalled event loop', () => {
  // In a sandbox the same wait decides whether bubblewrap's exit status (written just before it exits)
  // was read: unread, a command that ran was answered as "the sandbox could not be set up".
  it('keeps the last output of commands that end together', async () => {
    const outputs = await withStalledLoop(STALL_MS, async () => {
      const seen: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const results = await Promise.all(Array.from({ length: 8 }, () => run(['sh', '-c', 'sleep 0.2; printf done'])));
        seen.push(...results.map((r) => `${r.exitCode} ${r.stdout}`));
      }
      return seen;
    });
    expect(outputs).toEqual(Array(8 * ROUNDS).fill('0 done'));
  });
});

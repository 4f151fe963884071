import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processRunHarness } from '../../../test/support/process-runs.js';
import { ToolError } from '../tool-error.js';
import { runProcess, RunRefused, validateEnv } from './process-runner.js';

const runs = processRunHarness();
const { run, pgidOf, groupIsGone, pidsRunning } = runs;
let dir: string;
beforeAll(() => {
  dir = runs.workspace();
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
      const attempt = runProcess({
        argv: ['x'],
        executable,
        workspace: dir,
        cwd: dir,
        timeoutMs: 1000,
        maxOutputBytes: 100,
        sandbox: { kind: 'none' },
      });
      await expect(attempt).rejects.toBeInstanceOf(ToolError);
      await expect(attempt).rejects.toMatchObject({ code: 'spawn_failed' });
    }
  });

  it('fails with spawn_failed when the working directory does not exist', async () => {
    await expect(run(['ls'], { cwd: join(dir, 'nope') })).rejects.toMatchObject({ code: 'spawn_failed' });
  });

  it('refuses a timeout setTimeout cannot represent and a negative output cap', async () => {
    await expect(run(['true'], { timeoutMs: 2 ** 31 })).rejects.toMatchObject({ name: 'RunRefused', code: 'invalid_timeout' });
    await expect(run(['true'], { maxOutputBytes: -1 })).rejects.toMatchObject({ code: 'invalid_output_cap' });
  });

  it('refuses an argv with a NUL byte and an empty argv', async () => {
    await expect(run(['printf', 'a\0b'])).rejects.toMatchObject({ name: 'RunRefused', code: 'invalid_argv' });
    await expect(
      runProcess({
        argv: [],
        executable: '/usr/bin/true',
        workspace: dir,
        cwd: dir,
        timeoutMs: 1000,
        maxOutputBytes: 10,
        sandbox: { kind: 'none' },
      }),
    ).rejects.toMatchObject({ name: 'RunRefused', code: 'invalid_argv' });
  });

  it('refuses dangerous environment names before spawning', async () => {
    const marker = join(dir, 'env-refused');
    await expect(run(['sh', '-c', `touch ${marker}`], { env: { LD_PRELOAD: '/tmp/x.so' } })).rejects.toMatchObject({
      name: 'RunRefused',
      code: 'invalid_env',
    });
    expect(existsSync(marker)).toBe(false);
    expect(() => validateEnv({ NODE_OPTIONS: '--require x' })).toThrow(RunRefused);
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

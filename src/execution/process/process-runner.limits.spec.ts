import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processRunHarness } from '../../../test/support/process-runs.js';
import { ToolError } from '../tool-error.js';
import { runProcess, type RunProcessOptions } from './process-runner.js';

const runs = processRunHarness();
const { run, pgidOf, groupIsGone, pidsRunning } = runs;

const MiB = 1024 * 1024;
const withPython = existsSync('/usr/bin/python3') ? describe : describe.skip;

// Python, because it can pace its allocations and writes: each test's command would pass its limit many
// times over if nothing stopped it, slowly enough that the watchdog's samples see it happen.
withPython('runProcess resource limits', () => {
  let ws: string;
  const py = (script: string, extra: Partial<RunProcessOptions> = {}) =>
    run(['python3', '-c', script], { workspace: ws, cwd: ws, timeoutMs: 20_000, ...extra });

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

  // The file system's figures are the host's: what is deleted elsewhere on it meanwhile hides what the run
  // makes. Here another process deletes empty files beside the workspace faster than the command makes them,
  // so the file system's inode count only falls while the workspace passes its quota.
  describe('while files are deleted elsewhere on the same file system', () => {
    let elsewhere: string;
    let deleter: ChildProcess | undefined;
    // Makes `count` empty files elsewhere, then deletes them: about 4,000 a second, or as fast as it can.
    // Answers once the deleting has begun (the first 200 are gone).
    const deleteElsewhere = async (count: number, pace: 'steady' | 'flat-out') => {
      execFileSync('python3', [
        '-c',
        `import os\nfor i in range(${count}): open(os.path.join(${JSON.stringify(elsewhere)}, f"e{i}"), "w").close()`,
      ]);
      const sleep = pace === 'steady' ? '\n    if i % 40 == 0: time.sleep(0.01)' : '';
      const begun = '\n    if i == 200: print("deleting", flush=True)';
      const script = `import os, time\nfor i in range(${count}):\n    os.unlink(os.path.join(${JSON.stringify(elsewhere)}, f"e{i}"))${begun}${sleep}`;
      deleter = spawn('python3', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
      await once(deleter.stdout!, 'data');
    };
    beforeEach(() => {
      elsewhere = mkdtempSync(join(tmpdir(), 'process-runner-elsewhere-'));
    });
    afterEach(async () => {
      deleter?.kill('SIGKILL');
      if (deleter && deleter.exitCode === null) await once(deleter, 'exit');
      rmSync(elsewhere, { recursive: true, force: true });
    });

    it('stops a command that passes its inode quota all the same', async () => {
      await deleteElsewhere(20_000, 'steady');
      // About 2,000 files a second for five seconds, against a quota of 500.
      const script = 'import time\nfor i in range(10000):\n    open(f"f{i}", "w").close()\n    if i % 20 == 0: time.sleep(0.01)';
      const quota = { bytes: 64 * MiB, usageAtStart: 0, inodes: 500, entriesAtStart: 0 };
      const result = await py(script, { writes: { maxBytes: 64 * MiB, quota } });
      expect(result).toMatchObject({ killedForWorkspaceQuota: true, workspaceQuotaPassed: 'inodes', signal: 'SIGKILL' });
      // Stopped within about a second of passing it (a walk at least every PERIODIC_WALK_MS), not at the end.
      expect(readdirSync(ws).length).toBeLessThan(5_000);
    });

    it('stops a command that passes it within a second, while the file system only shrinks', async () => {
      // The deleter has a head start and unlinks as fast as the command makes files: the file system's inode
      // count falls all through the run. The command makes 1,000 files (0.1-0.6 s) and ends half a second
      // later, before a walk first due at a second into the run.
      await deleteElsewhere(5_000, 'flat-out');
      const script = 'i=0; while [ $i -lt 1000 ]; do : > f$i; i=$((i+1)); done; sleep 0.5';
      const quota = { bytes: 64 * MiB, usageAtStart: 0, inodes: 500, entriesAtStart: 0 };
      const options = { workspace: ws, cwd: ws, writes: { maxBytes: 64 * MiB, quota }, timeoutMs: 20_000 };
      const result = await run(['sh', '-c', script], options);
      expect(result).toMatchObject({ killedForWorkspaceQuota: true, workspaceQuotaPassed: 'inodes', signal: 'SIGKILL' });
    });

    it('counts what a run made in its growth, though the file system shrank meanwhile', async () => {
      await deleteElsewhere(20_000, 'steady');
      // 300 files at once, then a pause long enough for the watchdog to walk the workspace.
      const script = 'import time\nfor i in range(300): open(f"f{i}", "w").close()\ntime.sleep(1.6)';
      const quota = { bytes: 64 * MiB, usageAtStart: 0, inodes: 10_000, entriesAtStart: 0 };
      const result = await py(script, { writes: { maxBytes: 64 * MiB, quota } });
      expect(result).toMatchObject({ exitCode: 0, killedForWorkspaceQuota: false });
      expect(result.workspaceGrowthAtMost?.entries).toBeGreaterThanOrEqual(300);
    });
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
    await expect(run(['true'], { sandbox: { kind: 'none', runAs: { uid: -1, gid: 0 } } })).rejects.toMatchObject({
      code: 'invalid_run_as',
    });
  });
});

// A busy service: every turn of the event loop stalls for longer than the runner waits for pipes after an
// exit. Several commands end at once, so one SIGCHLD reaps some whose last writes the loop has not polled.

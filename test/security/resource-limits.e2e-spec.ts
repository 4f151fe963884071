import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statfsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommandSandbox } from '../../src/sandbox/command-sandbox.js';
import { WorkspaceQuota } from '../../src/workspace/workspace-quota.js';
import { callTool, installSkill, skillOf, type SkillToolBody } from '../e2e/skills/skill-test-kit.js';
import { expectNoProcess } from '../support/processes.js';
import { sandboxSupport } from '../support/sandbox.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { invoke } from './security-helpers.js';

// docs/security-model.md, cases 68-69: what one command may take of the machine (memory, bytes written) and
// how far a workspace may grow, over HTTP against the real service. The limits are small so the tests
// are quick and leave the disk alone; each command would pass its limit hundreds of times over if
// nothing stopped it. The limits hold with or without bubblewrap (the test app runs without it where it
// cannot build a sandbox), so these run either way; how memory is held (a cgroup or RLIMIT_AS and the
// watchdog) is asked of the service, and the outcome checked is the one that way promises.

const MiB = 1024 * 1024;
const MEMORY = 64 * MiB;
const WRITE_BUDGET = 4 * MiB;
const FILE_CAP = MiB;
const QUOTA = 128 * MiB;
const CPU_SECONDS = 1;
const MARKERS = { hog: 'sec68-hog-marker', writer: 'sec69-writer-marker', reserver: 'sec69-reserver-marker' };

type Answer = {
  status: string;
  result?: { exitCode: number | null; signal: string | null; stdout: string; stderr: string; killed: string | null; note: string | null };
  error?: { code: string; message: string };
};

// Space allocated below a directory, as du counts it.
const diskUsage = (dir: string) => Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0]);

const python = existsSync('/usr/bin/python3') ? describe : describe.skip;
if (!existsSync('/usr/bin/python3'))
  process.stderr.write('Skipping the resource-limit suite: /usr/bin/python3 is missing (apt-get install python3)\n');
// The write budget counts the kernel's write_bytes, which tmpfs (no writeback) never adds to; the test
// app's workspaces live under the system's temporary directory.
const TMPFS_MAGIC = 0x01021994;
const writesCounted = statfsSync(os.tmpdir()).type !== TMPFS_MAGIC;
const withWriteBudget = writesCounted ? it : it.skip;
if (!writesCounted)
  process.stderr.write(`Skipping the write-budget tests: ${os.tmpdir()} is a tmpfs, where the kernel counts no write_bytes\n`);

python('resource limits of commands and workspaces, over HTTP', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let ws: string;
  let memoryBy: 'cgroup' | 'rlimit';

  const run = async (script: string, marker: string, extra: Record<string, unknown> = {}): Promise<Answer> => {
    const res = await invoke(t, tenant, projectId, 'shell_exec', { argv: ['python3', '-c', script, marker], timeoutMs: 60_000, ...extra });
    expect({ status: res.status, tool: res.body.tool }).toEqual({ status: 200, tool: 'shell_exec' });
    return res.body as Answer;
  };
  const tool = async (name: string, args: Record<string, unknown>): Promise<Answer> => {
    const res = await invoke(t, tenant, projectId, name, args);
    expect({ status: res.status, body: res.status === 200 ? 'answered' : res.body }).toEqual({ status: 200, body: 'answered' });
    return res.body as Answer;
  };
  // The service, and commands that stay within their limits, still answer.
  const settle = async () => {
    const alive = await invoke(t, tenant, projectId, 'shell_exec', { argv: ['printf', '%s', 'alive'] });
    expect(alive.body).toMatchObject({ status: 'ok', result: { exitCode: 0, stdout: 'alive', killed: null } });
    await t.http.get('/health/ready').expect(200);
  };

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SHELL_MAX_MEMORY_BYTES: String(MEMORY),
        SHELL_MAX_WRITE_BYTES: String(WRITE_BUDGET),
        SHELL_MAX_FILE_SIZE_BYTES: String(FILE_CAP),
        WORKSPACE_QUOTA_BYTES: String(QUOTA),
        SHELL_MAX_CPU_SECONDS: String(CPU_SECONDS),
      },
    });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['python3', 'printf'] })).id;
    ws = t.workspaceOf(projectId);
    memoryBy = t.app.get(CommandSandbox).memoryEnforcement().by;
    if (sandboxSupport.available) expect(t.app.get(CommandSandbox).state()).toMatchObject({ mode: 'bwrap', ready: true });
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('[sec-68] a command that allocates 2 GiB at once gets no more than the memory limit', async () => {
    const res = await run('b = bytearray(2 * 1024 ** 3)', MARKERS.hog);
    expect(res.status).toBe('ok');
    if (memoryBy === 'cgroup') {
      // The kernel's OOM killer ends the sandbox at memory.max.
      expect(res.result).toMatchObject({ exitCode: null, signal: 'SIGKILL', killed: 'memory_limit' });
    } else {
      // The allocation is refused (RLIMIT_AS): the command sees MemoryError, and the answer says why.
      expect(res.result).toMatchObject({ exitCode: 1, killed: null });
      expect(res.result!.stderr).toContain('MemoryError');
    }
    expect(res.result!.note).toMatch(/64 MiB .*SHELL_MAX_MEMORY_BYTES/);
    await settle();
  });

  it('[sec-68] processes that grow past the memory limit together are stopped, while other calls keep answering', async () => {
    // Four processes that each take 1 MiB every 10 ms up to 256 MiB: every one of them alone passes the limit
    // only after its siblings have taken theirs, so it is their sum that is stopped.
    const hog = [
      'import os, time',
      'for _ in range(3):',
      '    if os.fork() == 0: break',
      'held = []',
      'for _ in range(256):',
      '    held.append(bytearray(1 << 20)); time.sleep(0.01)',
      'time.sleep(60)',
    ].join('\n');
    const running = run(hog, MARKERS.hog);
    // Meanwhile, in the same project: a command, a file written and read back, the health route.
    const others = await Promise.all([
      invoke(t, tenant, projectId, 'shell_exec', { argv: ['printf', '%s', 'meanwhile'] }),
      invoke(t, tenant, projectId, 'write_file', { path: 'meanwhile.txt', content: 'still writable' }),
      t.http.get('/health/ready'),
    ]);
    expect(others.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(others[0].body).toMatchObject({ status: 'ok', result: { stdout: 'meanwhile' } });
    expect(others[1].body).toMatchObject({ status: 'ok' });
    expect((await tool('read_file', { path: 'meanwhile.txt' })).result).toMatchObject({ content: 'still writable' });

    const res = await running;
    expect(res).toMatchObject({ status: 'ok', result: { killed: 'memory_limit', exitCode: null, signal: 'SIGKILL' } });
    expect(res.result!.note).toMatch(/more than the memory limit of 64 MiB/);
    await expectNoProcess(MARKERS.hog);
    await settle();
  });

  it('stops a command that burns CPU at SHELL_MAX_CPU_SECONDS, well before its timeout', async () => {
    const res = await run('while True: pass', MARKERS.hog, { timeoutMs: 60_000 });
    expect(res).toMatchObject({ status: 'ok', result: { killed: 'cpu_limit' } });
    expect(res.result!.note).toMatch(/SIGXCPU\) after using 1 s of CPU time/);
    await settle();
  });

  withWriteBudget(
    '[sec-69] a command writing 2 GiB in files each under the per-file cap is stopped at the write budget; the workspace stays under its quota',
    async () => {
      const writer = [
        'import os',
        'os.mkdir("flood")',
        'for i in range(2048):',
        '    open(f"flood/part-{i}", "wb").write(b"x" * (1 << 20))',
      ].join('\n');
      const res = await run(writer, MARKERS.writer);
      expect(res).toMatchObject({ status: 'ok', result: { killed: 'write_limit', signal: 'SIGKILL' } });
      expect(res.result!.note).toMatch(/past the limit of 4 MiB one command may write \(SHELL_MAX_WRITE_BYTES\)/);
      const parts = readdirSync(path.join(ws, 'flood')).map((name) => statSync(path.join(ws, 'flood', name)).size);
      // It really wrote (about the budget; the file being written when it was killed may be cut short), every
      // file within the cap, and far from the 2 GiB it set out to write.
      expect(parts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(WRITE_BUDGET - FILE_CAP);
      expect(Math.max(...parts)).toBeLessThanOrEqual(FILE_CAP);
      expect(parts.length).toBeLessThan(2048);
      expect(diskUsage(ws)).toBeLessThan(QUOTA);
      await expectNoProcess(MARKERS.writer);
      await settle();
    },
  );

  it('[sec-69] a command that reserves space past the quota without writing (fallocate, 3,000 files at once) is stopped far short of it', async () => {
    // 1 MiB files reserved with posix_fallocate as fast as they can be made: 3 GiB, 24 times the quota, if
    // nothing stopped it. In the sandbox fallocate itself is refused (seccomp) and the C library writes the
    // blocks instead, which the write budget counts; without the sandbox the watchdog sees the file system
    // fill and walks the workspace.
    const reserver = [
      'import os',
      'os.mkdir("reserved")',
      'for i in range(3000):',
      '    fd = os.open(f"reserved/r-{i}", os.O_CREAT | os.O_WRONLY)',
      '    os.posix_fallocate(fd, 0, 1 << 20); os.close(fd)',
    ].join('\n');
    const res = await run(reserver, MARKERS.reserver);
    expect(res.status).toBe('ok');
    expect(['write_limit', 'workspace_quota']).toContain(res.result!.killed);
    expect(readdirSync(path.join(ws, 'reserved')).length).toBeLessThan(3000);
    expect(diskUsage(ws)).toBeLessThan(QUOTA + 64 * MiB);
    await expectNoProcess(MARKERS.reserver);
    expect((await tool('delete_file', { path: 'reserved', recursive: true })).status).toBe('ok');
    await settle();
  });

  (sandboxSupport.available ? it : it.skip)(
    '[sec-69] in the sandbox fallocate and io_uring are refused: nothing takes disk without writing it',
    async () => {
      const probe = [
        'import ctypes, os',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'fd = os.open("probe.bin", os.O_CREAT | os.O_WRONLY)',
        'r = libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(1 << 30))',
        'print("fallocate", r, os.strerror(ctypes.get_errno()))',
        'r = libc.syscall(425, 8, ctypes.create_string_buffer(120))',
        'print("io_uring_setup", r, os.strerror(ctypes.get_errno()))',
        'os.close(fd); print("size", os.stat("probe.bin").st_blocks)',
      ].join('\n');
      const res = await run(probe, MARKERS.reserver);
      expect(res.result).toMatchObject({ exitCode: 0, killed: null });
      expect(res.result!.stdout).toBe('fallocate -1 Operation not supported\nio_uring_setup -1 Function not implemented\nsize 0\n');
      expect((await tool('delete_file', { path: 'probe.bin' })).status).toBe('ok');
    },
  );

  it('[sec-69] a workspace past its quota runs no command and takes no write until files are deleted', async () => {
    // Space reserved on the host, outside any call (as a command killed at its limit may leave it), and
    // the service told to measure again rather than wait for its figure to expire.
    execFileSync('fallocate', ['-l', String(QUOTA + 8 * MiB), path.join(ws, 'reserved.bin')]);
    t.app.get(WorkspaceQuota).forget(ws);

    const command = await invoke(t, tenant, projectId, 'shell_exec', { argv: ['printf', '%s', 'more'] });
    expect(command.body).toMatchObject({ status: 'error', error: { code: 'workspace_quota_exceeded' } });
    expect(command.body.error.message).toMatch(
      /The command did not run: the workspace uses .*, at or past its quota of 128 MiB \(WORKSPACE_QUOTA_BYTES\)/,
    );
    const refused = await tool('write_file', { path: 'more.txt', content: 'x'.repeat(64 * 1024) });
    expect(refused).toMatchObject({ status: 'error', error: { code: 'workspace_quota_exceeded' } });
    expect(refused.error!.message).toMatch(
      /Writing 'more\.txt' would grow the workspace by 64 KiB to .*, past its quota of 128 MiB \(it uses .* now\)/,
    );
    expect(existsSync(path.join(ws, 'more.txt'))).toBe(false);
    const edited = await tool('edit_file', { path: 'meanwhile.txt', edits: [{ oldText: 'still', newText: 'x'.repeat(8192) }] });
    expect(edited).toMatchObject({ status: 'error', error: { code: 'workspace_quota_exceeded' } });
    // Reading costs nothing against the quota.
    expect((await tool('read_file', { path: 'meanwhile.txt' })).result).toMatchObject({ content: 'still writable' });

    // Space freed with delete_file is seen at once.
    expect((await tool('delete_file', { path: 'reserved.bin' })).status).toBe('ok');
    expect((await tool('write_file', { path: 'more.txt', content: 'x'.repeat(64 * 1024) })).status).toBe('ok');
    expect(diskUsage(ws)).toBeLessThan(QUOTA);
    await settle();
  });

  it('[sec-69] space held under names that are not UTF-8 counts against the quota like any other', async () => {
    // A command can name files with any bytes (printf '\\xff'); decoded to a string such a name no longer
    // names its file, and a measurement that went by strings left what it holds uncounted.
    const hidden = path.join(ws, 'hidden');
    execFileSync('python3', [
      '-c',
      'import os, sys\nd = os.fsencode(sys.argv[1]) + b"/\\xff\\xfe"\nos.makedirs(d)\nf = open(d + b"/\\x80", "wb")\nos.posix_fallocate(f.fileno(), 0, int(sys.argv[2]))',
      hidden,
      String(QUOTA + 8 * MiB),
    ]);
    t.app.get(WorkspaceQuota).forget(ws);
    try {
      const command = await invoke(t, tenant, projectId, 'shell_exec', { argv: ['printf', '%s', 'more'] });
      expect(command.body).toMatchObject({ status: 'error', error: { code: 'workspace_quota_exceeded' } });
      const refused = await tool('write_file', { path: 'more-again.txt', content: 'x'.repeat(64 * 1024) });
      expect(refused).toMatchObject({ status: 'error', error: { code: 'workspace_quota_exceeded' } });
    } finally {
      execFileSync('rm', ['-rf', hidden]);
      t.app.get(WorkspaceQuota).forget(ws);
    }
    await settle();
  });

  withWriteBudget('[sec-69] a command skill is held to the same write budget and answers write_limit', async () => {
    const flood: SkillToolBody = {
      name: 'flood',
      description: 'Writes 2 GiB in 1 MiB files',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      executor: {
        type: 'command',
        argv: [
          'python3',
          '-c',
          'import os\nos.makedirs("skill-flood", exist_ok=True)\nfor i in range(2048):\n    open(f"skill-flood/p-{i}", "wb").write(b"x" * (1 << 20))',
          MARKERS.writer,
        ],
      },
    };
    await installSkill(t, tenant, projectId, skillOf([flood, { ...flood, name: 'flood_sync', mode: 'sync' }]));
    for (const name of ['flood', 'flood_sync']) {
      const res = await callTool(t, tenant, projectId, name, {}).expect(200);
      expect(res.body).toMatchObject({
        status: 'error',
        error: { code: 'write_limit', message: expect.stringMatching(/4 MiB .*SHELL_MAX_WRITE_BYTES/) },
      });
      expect((await tool('delete_file', { path: 'skill-flood', recursive: true })).status).toBe('ok');
    }
    await expectNoProcess(MARKERS.writer);
    await settle();
  });
});

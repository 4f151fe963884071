import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { SandboxUids } from '../../src/sandbox/sandbox-uids.js';
import { eventually } from '../support/eventually.js';
import { processesWith, uniqueSleep, waitForProcess } from '../support/processes.js';
import { describeSandboxed } from '../support/sandbox.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { expectRefusal, invoke } from './security-helpers.js';

// docs/security-model.md, "Commands in a sandbox" (cases 46-54), over HTTP against the real service, with the
// real bubblewrap. Each case is what a tenant that enabled commands could try against the service, the
// host or another tenant. Line 55 (no sandbox can be set up) is sandbox-unavailable.e2e-spec.ts.

const MAX_PROCESSES = 24;
const FILE_CAP = 1024 * 1024;
const TMP_CAP = 4 * 1024 * 1024;
const CANARIES = {
  TOOLGATE_SANDBOX_TEST_SECRET: `canary-${randomBytes(8).toString('hex')}`,
  DATABASE_URL: `postgresql://service:pw-${randomBytes(4).toString('hex')}@db.internal/toolgate`,
};
const ALLOWED = ['sh', 'bash', 'cat', 'ls', 'printf', 'sleep', 'setsid', 'nohup', 'head', 'ln', 'mkdir', 'id', 'stat', 'touch', 'rm'];

type Answer = {
  status: string;
  result?: { exitCode: number | null; stdout: string; stderr: string };
  error?: { code: string; message: string };
};

describeSandboxed('commands in a sandbox, over HTTP', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let neighbour: TestTenant;
  let projectId: string;
  let ws: string;
  let neighbourWs: string;
  const saved: Record<string, string | undefined> = {};

  const run = async (argv: string[], extra: Record<string, unknown> = {}): Promise<Answer> => {
    const res = await invoke(t, tenant, projectId, 'shell_exec', { argv, ...extra });
    expect({ status: res.status, tool: res.body.tool }).toEqual({ status: 200, tool: 'shell_exec' });
    return res.body as Answer;
  };
  const sh = (script: string, extra: Record<string, unknown> = {}) => run(['sh', '-c', script], extra);
  const tool = (name: string, args: Record<string, unknown>) => invoke(t, tenant, projectId, name, args);

  beforeAll(async () => {
    for (const [name, value] of Object.entries(CANARIES)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    t = await createTestApp({
      env: {
        SHELL_MAX_PROCESSES: String(MAX_PROCESSES),
        SHELL_MAX_FILE_SIZE_BYTES: String(FILE_CAP),
        SANDBOX_TMP_SIZE_BYTES: String(TMP_CAP),
      },
    });
    tenant = await t.createTenant();
    neighbour = await t.createTenant();
    projectId = (await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ALLOWED })).id;
    const neighbourProject = await t.createProject(neighbour, { shellEnabled: true, shellAllowlist: ['cat'] });
    ws = t.workspaceOf(projectId);
    neighbourWs = t.workspaceOf(neighbourProject.id);
    await invoke(t, neighbour, neighbourProject.id, 'write_file', { path: 'secret-plans.txt', content: 'the neighbour secret' }).expect(
      200,
    );
  });

  afterAll(async () => {
    await t?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("[sec-46] cat /proc/*/environ shows none of the service's environment", async () => {
    const res = await sh('cat /proc/*/environ | tr "\\0" "\\n"; echo; ls /proc | grep -c "^[0-9]"');
    expect(res.status).toBe('ok');
    const out = res.result!.stdout;
    for (const value of Object.values(CANARIES)) expect(out).not.toContain(value);
    expect(out).not.toContain(t.config.adminToken!);
    if (t.database.url) expect(out).not.toContain(t.database.url);
    // The only environments there are the command's own, built from nothing.
    const names = new Set(
      out
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => line.split('=')[0]),
    );
    expect([...names].sort()).toEqual(['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']);
    // A pid namespace of its own: a handful of processes (the sandbox's init, sh, cat, ls, grep).
    expect(Number(out.trim().split('\n').pop())).toBeLessThan(10);
  });

  it("[sec-46] a call's own variables reach its command, not bubblewrap, which runs on the host until the sandbox is built", async () => {
    // GLIBC_TUNABLES, LOCPATH and TZ are read by the loader and libc of every process that starts with them.
    const env = { GLIBC_TUNABLES: 'glibc.malloc.check=0', LOCPATH: '/workspace/locales', TZ: 'UTC', CALL_MARKER: 'from-the-call' };
    const res = await sh('tr "\\0" "\\n" < /proc/1/environ; echo ---; env', { env });
    expect(res.status).toBe('ok');
    const [bubblewrap, command] = res.result!.stdout.split('---\n');
    const names = (text: string) =>
      new Set(
        text
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => line.split('=')[0]),
      );
    expect([...names(bubblewrap)].sort()).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR']);
    for (const [name, value] of Object.entries(env)) expect(command).toContain(`${name}=${value}\n`);
  });

  it("[sec-47] another project's files and names are out of reach: its absolute path, .., and /", async () => {
    const byPath = await run(['cat', path.join(neighbourWs, 'secret-plans.txt')]);
    expect(byPath.result!.exitCode).not.toBe(0);
    expect(byPath.result!.stdout).not.toContain('the neighbour secret');

    const listing = await sh('ls -a ..; echo ---; ls -a /; echo ---; ls -a "$(dirname "$PWD")"');
    expect(listing.status).toBe('ok');
    expect(listing.result!.stdout).not.toContain(path.basename(neighbourWs));
    // The workspace is /workspace: its parent is the sandbox's own root, which names no project and no host path.
    const parent = listing
      .result!.stdout.split('---\n')[0]
      .split('\n')
      .filter((name) => name && name !== '.' && name !== '..');
    expect(parent).toContain('workspace');
    expect(parent).not.toContain(projectId);
    // pwd, $HOME, $PWD and the environment name /workspace only. (/proc/self/mountinfo still gives the bind's
    // source path within its file system: the kernel writes it, and nothing in it is reachable from here.)
    const where = await sh('pwd; echo "$HOME"; env');
    expect(where.result!.stdout.split('\n').slice(0, 2)).toEqual(['/workspace', '/workspace']);
    expect(where.result!.stdout).not.toContain(t.workspaceOf(projectId));
    expect(existsSync(path.join(neighbourWs, 'secret-plans.txt'))).toBe(true);
  });

  it("[sec-48] /etc/shadow and the service's own files are not readable", async () => {
    expect(existsSync('/etc/shadow')).toBe(true);
    const shadow = await run(['cat', '/etc/shadow']);
    expect(shadow.result!.exitCode).not.toBe(0);
    expect(shadow.result!.stdout).toBe('');

    const mainJs = path.resolve('dist/main.js');
    expect(existsSync(mainJs)).toBe(true);
    const own = await run(['cat', mainJs]);
    expect(own.result).toMatchObject({ exitCode: 1, stdout: '', stderr: expect.stringContaining('No such file or directory') });
    const home = await sh('ls /root /home /run /var 2>&1; echo "exit $?"');
    expect(home.result!.stdout).toMatch(/No such file or directory[\s\S]*exit 2/);
  });

  it('[sec-49] no network: TCP to PostgreSQL, Redis and the service itself fails, and /run has no sockets', async () => {
    const ownPort = t.port;
    for (const port of [5432, 6379, ownPort]) {
      const res = await run(['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`]);
      expect({ port, exitCode: res.result!.exitCode, stdout: res.result!.stdout }).toEqual({ port, exitCode: 1, stdout: '' });
      expect(res.result!.stderr).toMatch(/Connection refused|Network is unreachable/);
    }
    const interfaces = await run(['cat', '/proc/net/dev']);
    const names = interfaces
      .result!.stdout.split('\n')
      .slice(2)
      .map((line) => line.split(':')[0].trim())
      .filter(Boolean);
    expect(names).toEqual(['lo']);
    const sockets = await sh('ls /run/postgresql /var/run/postgresql 2>&1; echo "exit $?"');
    expect(sockets.result!.stdout).toMatch(/No such file or directory[\s\S]*exit 2/);
  });

  it('[sec-50] nothing a command started survives the end of the call: setsid, nohup, a double fork', async () => {
    const marker = uniqueSleep(999);
    const res = await sh(`setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & (sleep ${marker} &) ; sleep 0.3; echo started`);
    expect(res).toMatchObject({ status: 'ok', result: { exitCode: 0, stdout: 'started\n' } });
    await eventually(() => expect(processesWith(marker)).toEqual([]), 40, 50);
  });

  it('[sec-50] nor its timeout, nor the client going away', async () => {
    const marker = uniqueSleep(999);
    const timedOut = await sh(`setsid sleep ${marker} & (sleep ${marker} &); sleep ${marker}`, { timeoutMs: 1000 });
    expect(timedOut.status).toBe('timeout');
    await eventually(() => expect(processesWith(marker)).toEqual([]), 40, 50);

    const gone = uniqueSleep(999);
    const request = http.request({
      host: '127.0.0.1',
      port: t.port,
      method: 'POST',
      path: `/v1/projects/${projectId}/tools/shell_exec/invoke`,
      headers: { ...tenant.auth, 'content-type': 'application/json' },
    });
    request.on('error', () => undefined);
    request.end(JSON.stringify({ arguments: { argv: ['sh', '-c', `setsid sleep ${gone} & sleep ${gone}`] } }));
    await waitForProcess(gone, 2);
    request.destroy();
    await eventually(() => expect(processesWith(gone)).toEqual([]), 40, 50);
  });

  it('[sec-50] nor a shutdown of the service', async () => {
    const other = await createTestApp({ env: { SHUTDOWN_GRACE_MS: '200' } });
    const marker = uniqueSleep(999);
    try {
      const owner = await other.createTenant();
      const project = await other.createProject(owner, { shellEnabled: true, shellAllowlist: ['sh'] });
      const call = invoke(other, owner, project.id, 'shell_exec', {
        argv: ['sh', '-c', `setsid sleep ${marker} & (sleep ${marker} &); sleep ${marker}`],
      }).then((res) => res);
      await waitForProcess(marker, 3);
      await other.close();
      expect((await call).body).toMatchObject({ status: 'error', error: { code: 'shutting_down' } });
    } finally {
      await other.close().catch(() => undefined);
    }
    expect(processesWith(marker)).toEqual([]);
  });

  it('[sec-51] a fork bomb stays under SHELL_MAX_PROCESSES, and the service and other calls keep answering', async () => {
    const marker = `bomb-${uniqueSleep(51)}`;
    // Every copy of the shell carries the marker as its $0, so the host can count them. bash retries a
    // refused fork for a while instead of giving up, so the bomb keeps pressing on the limit until the timeout.
    const bomb = run(['bash', '-c', 'b() { b & b & wait; }; b', marker], { timeoutMs: 4000 });
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, processesWith(marker).length)), 10);
    try {
      await eventually(() => expect(processesWith(marker).length).toBeGreaterThan(3), 100, 20);
      const alive = await run(['printf', 'alive']);
      expect(alive).toMatchObject({ status: 'ok', result: { stdout: 'alive' } });
      await t.http.get('/health/ready').expect(200);
    } finally {
      const res = await bomb;
      clearInterval(watch);
      // Refused forks, whichever way the bomb ended: mostly at its timeout, bash still retrying; on a loaded
      // machine its retries can run out first and every copy return, so the run ends on its own.
      const output = res.status === 'timeout' ? res.error?.message : res.result?.stderr;
      expect(res.status === 'timeout' || res.status === 'ok').toBe(true);
      expect(output).toContain('Resource temporarily unavailable');
    }
    expect(most).toBeGreaterThan(3);
    expect(most).toBeLessThanOrEqual(MAX_PROCESSES);
    await eventually(() => expect(processesWith(marker)).toEqual([]), 40, 50);
  });

  it('[sec-52] a huge write into the workspace stops at the file-size limit, and /tmp at its size cap', async () => {
    const big = await sh('head -c 100000000 /dev/zero > big.bin; echo "exit $?"');
    expect(big.result!.stdout).not.toBe('exit 0\n');
    expect((await stat(path.join(ws, 'big.bin'))).size).toBeLessThanOrEqual(FILE_CAP);

    // Files under the per-file cap, more of them than /tmp holds.
    const name = `sec52-${randomBytes(4).toString('hex')}`;
    const tmp = await sh(`i=0; while [ $i -lt 8 ]; do head -c 900000 /dev/zero > /tmp/${name}-$i || exit 9; i=$((i+1)); done`);
    expect(tmp.result).toMatchObject({ exitCode: 9, stderr: expect.stringContaining('No space left on device') });
    // /tmp is the sandbox's own: the host's /tmp did not get the files.
    expect(existsSync(`/tmp/${name}-0`)).toBe(false);
  });

  it('[sec-53] links a command made do not take the file tools out of the workspace', async () => {
    const made = await sh(
      `ln -s / to-root && ln -s /etc/passwd passwd-link && ln -s ../${path.basename(neighbourWs)} to-neighbour && ln -s .. up`,
    );
    expect(made.result!.exitCode).toBe(0);
    expect((await lstat(path.join(ws, 'to-root'))).isSymbolicLink()).toBe(true);

    expectRefusal(await tool('read_file', { path: 'to-root/etc/hostname' }), 403, 'path_outside_workspace');
    expectRefusal(await tool('read_file', { path: 'passwd-link' }), 403, 'path_outside_workspace');
    expectRefusal(await tool('list_files', { path: 'to-root' }), 403, 'path_outside_workspace');
    expectRefusal(await tool('read_file', { path: 'to-neighbour/secret-plans.txt' }), 403, 'path_outside_workspace');
    expectRefusal(await tool('write_file', { path: 'to-neighbour/planted.txt', content: 'x' }), 403, 'path_outside_workspace');
    expectRefusal(await tool('write_file', { path: 'up/planted.txt', content: 'x' }), 403, 'path_outside_workspace');
    expect(existsSync(path.join(neighbourWs, 'planted.txt'))).toBe(false);
    // Deleting the link removes the link, never what it points at.
    expect((await tool('delete_file', { path: 'passwd-link' }).expect(200)).body.status).toBe('ok');
    expect(existsSync('/etc/passwd')).toBe(true);
  });

  it('[sec-54] files pass both ways between the file tools and commands, with no world-writable modes', async () => {
    expect(
      (await tool('write_file', { path: 'from-tool/notes.txt', content: 'written by the tool\n', createDirs: true }).expect(200)).body
        .status,
    ).toBe('ok');
    const edited = await sh(
      'cat from-tool/notes.txt && echo "and by a command" >> from-tool/notes.txt && mkdir -p from-cmd/deep && echo made > from-cmd/deep/made.txt',
    );
    expect(edited.result).toMatchObject({ exitCode: 0, stdout: 'written by the tool\n' });

    const read = await tool('read_file', { path: 'from-tool/notes.txt' }).expect(200);
    expect(read.body.result.content).toBe('written by the tool\nand by a command\n');
    expect((await tool('read_file', { path: 'from-cmd/deep/made.txt' }).expect(200)).body.result.content).toBe('made\n');
    // The tool overwrites what the command made, and the command then changes what the tool wrote over it.
    expect((await tool('write_file', { path: 'from-cmd/deep/made.txt', content: 'replaced\n' }).expect(200)).body.status).toBe('ok');
    expect((await sh('echo again >> from-cmd/deep/made.txt && cat from-cmd/deep/made.txt')).result!.stdout).toBe('replaced\nagain\n');
    expect((await tool('delete_file', { path: 'from-cmd/deep/made.txt' }).expect(200)).body.status).toBe('ok');
    expect(existsSync(path.join(ws, 'from-cmd/deep/made.txt'))).toBe(false);

    // Under root, the tenant's own uid (SANDBOX_UID_RANGE), the one its commands run as.
    const tenantUid = (await t.app.get(SandboxUids).forTenant(tenant.id))?.uid;
    expect((await run(['id', '-u'])).result!.stdout.trim()).toBe(String(tenantUid ?? process.getuid?.()));
    for (const entry of ['from-tool', 'from-tool/notes.txt', 'from-cmd', 'from-cmd/deep']) {
      const info = await stat(path.join(ws, entry));
      expect({ entry, worldWritable: (info.mode & 0o002) !== 0 }).toEqual({ entry, worldWritable: false });
      if (process.getuid?.() === 0) expect({ entry, uid: info.uid }).toEqual({ entry, uid: tenantUid });
    }
    // Commands run as that unprivileged uid, never root.
    expect((await run(['id', '-u'])).result!.stdout.trim()).not.toBe('0');
    // The workspace itself is the sandbox user's and nobody else's.
    expect((await stat(ws)).mode & 0o077).toBe(0);
  });
});

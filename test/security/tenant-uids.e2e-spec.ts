import { existsSync } from 'node:fs';
import { chown, lstat, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceResolver } from '../../src/workspace/workspace-resolver.js';
import { describeSandboxed } from '../support/sandbox.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { invoke } from './security-helpers.js';

// docs/security-model.md, case 108 (per-uid kernel limits): the kernel charges inotify instances, RLIMIT_NPROC
// and other per-user counts to the uid a process really runs as, whatever a user namespace maps it to
// inside. With every sandbox as one uid, one tenant holding its 128 inotify instances (the host's
// fs.inotify.max_user_instances) made every other tenant's inotify_init fail with EMFILE. Under a root
// service each tenant's sandboxes now run as a host uid of its own, from SANDBOX_UID_RANGE.

// A range of this file's own, so that no other suite's tenants (their databases start from the same
// first uid) share a uid with the ones here.
const FIRST_UID = 300_000 + (process.pid % 1000) * 100;
const RANGE = `${FIRST_UID}-${FIRST_UID + 99}`;
const asRoot = process.getuid?.() === 0;

// Takes inotify instances until the kernel refuses one, writes how many it got, and holds them.
const HOLD_INOTIFY = [
  'import ctypes, os, time',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'fds = []',
  'while len(fds) < 4096:',
  '    fd = libc.inotify_init()',
  '    if fd < 0: break',
  '    fds.append(fd)',
  "open('held.tmp', 'w').write('%d %d' % (len(fds), ctypes.get_errno()))",
  "os.rename('held.tmp', 'held')",
  'time.sleep(12)',
].join('\n');
// One inotify_init: its descriptor, or -1 and the errno.
const ONE_INOTIFY =
  'import ctypes; libc = ctypes.CDLL(None, use_errno=True); fd = libc.inotify_init(); print(fd, ctypes.get_errno() if fd < 0 else 0)';
const EMFILE = 24;

(asRoot ? describeSandboxed : describe.skip)('[sec-108] each tenant runs its commands as a uid of its own', () => {
  let t: TestApp;
  let alice: TestTenant;
  let bob: TestTenant;
  let aliceProject: string;
  let bobProject: string;

  const sh = async (tenant: TestTenant, project: string, argv: string[]) => {
    const res = await invoke(t, tenant, project, 'shell_exec', { argv, timeoutMs: 30_000 });
    expect({ argv, status: res.body.status, error: res.body.error }).toEqual({ argv, status: 'ok', error: undefined });
    return res.body.result as { exitCode: number; stdout: string; stderr: string };
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_UID_RANGE: RANGE } });
    alice = await t.createTenant();
    bob = await t.createTenant();
    const shell = { shellEnabled: true, shellAllowlist: ['python3', 'id', 'sh', 'touch'] };
    aliceProject = (await t.createProject(alice, shell)).id;
    bobProject = (await t.createProject(bob, shell)).id;
  });

  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('gives each tenant its own uid from the range, and its workspaces and the files its commands write belong to it', async () => {
    const aliceId = (await sh(alice, aliceProject, ['id', '-u'])).stdout.trim();
    const bobId = (await sh(bob, bobProject, ['id', '-u'])).stdout.trim();
    const uids = [Number(aliceId), Number(bobId)];
    expect(uids[0]).not.toBe(uids[1]);
    for (const uid of uids) expect(uid >= FIRST_UID && uid <= FIRST_UID + 99).toBe(true);
    // A second project of the tenant runs as the same uid.
    const second = (await t.createProject(alice, { shellEnabled: true, shellAllowlist: ['id'] })).id;
    expect((await sh(alice, second, ['id', '-u'])).stdout.trim()).toBe(aliceId);

    const ws = t.workspaceOf(aliceProject);
    expect((await lstat(ws)).mode & 0o777).toBe(0o700);
    expect((await lstat(ws)).uid).toBe(uids[0]);
    await sh(alice, aliceProject, ['sh', '-c', 'mkdir -p made && echo by-command > made/note.txt']);
    expect((await lstat(path.join(ws, 'made/note.txt'))).uid).toBe(uids[0]);
    // The file tools read and change it, and what they write belongs to the tenant's uid too.
    expect((await invoke(t, alice, aliceProject, 'read_file', { path: 'made/note.txt' }).expect(200)).body.result.content).toBe(
      'by-command\n',
    );
    expect(
      (await invoke(t, alice, aliceProject, 'write_file', { path: 'made/tool.txt', content: 'by-tool\n' }).expect(200)).body.status,
    ).toBe('ok');
    expect((await lstat(path.join(ws, 'made/tool.txt'))).uid).toBe(uids[0]);
    expect((await sh(alice, aliceProject, ['sh', '-c', 'echo more >> made/tool.txt && cat made/tool.txt'])).stdout).toBe('by-tool\nmore\n');
  }, 60_000);

  it('one tenant holding every inotify instance its uid may have leaves another tenant able to take one', async () => {
    const held = path.join(t.workspaceOf(aliceProject), 'held');
    const holding = invoke(t, alice, aliceProject, 'shell_exec', { argv: ['python3', '-c', HOLD_INOTIFY], timeoutMs: 30_000 }).then(
      (r) => r,
    );
    const deadline = Date.now() + 20_000;
    while (!existsSync(held)) {
      if (Date.now() > deadline) throw new Error(`the holding command never reported: ${JSON.stringify((await holding).body)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [count, errno] = (await readFile(held, 'utf8')).split(' ').map(Number);
    // It took what the kernel allows one uid (fs.inotify.max_user_instances), and was then refused.
    const perUid = Number((await readFile('/proc/sys/fs/inotify/max_user_instances', 'utf8')).trim());
    expect({ count, errno }).toEqual({ count: perUid, errno: EMFILE });

    // Meanwhile: another command of the same tenant (same uid) gets none, which shows the limit is the uid's ...
    const sameUid = await sh(alice, aliceProject, ['python3', '-c', ONE_INOTIFY]);
    expect(sameUid.stdout.trim()).toBe(`-1 ${EMFILE}`);
    // ... and the other tenant's command gets one.
    const otherTenant = await sh(bob, bobProject, ['python3', '-c', ONE_INOTIFY]);
    const [fd, bobErrno] = otherTenant.stdout.trim().split(' ').map(Number);
    expect({ ok: fd >= 0, bobErrno }).toEqual({ ok: true, bobErrno: 0 });
    expect((await holding).body).toMatchObject({ status: 'ok', result: { exitCode: 0 } });
  }, 60_000);

  it('hands a workspace that still belongs to SANDBOX_UID to the tenant, whole, before its next command', async () => {
    const project = (await t.createProject(bob, { shellEnabled: true, shellAllowlist: ['sh'] })).id;
    const ws = t.workspaceOf(project);
    // As a service before per-tenant uids left it: everything the shared uid's.
    await writeFile(path.join(ws, 'old.txt'), 'old\n');
    // A name that is not UTF-8 is adopted too.
    await writeFile(Buffer.concat([Buffer.from(`${ws}/`), Buffer.from([0x6f, 0x6c, 0x64, 0xff])]), 'odd name\n');
    const entries = async () => [
      Buffer.from(ws),
      ...(await readdir(ws, { encoding: 'buffer' })).map((name) => Buffer.concat([Buffer.from(`${ws}/`), name])),
    ];
    const shared = t.config.tools.sandbox.uid;
    for (const entry of await entries()) await chown(entry, shared, shared);
    t.app.get(WorkspaceResolver).invalidate(bob.id, project);
    const result = await sh(bob, project, ['sh', '-c', 'echo new >> old.txt && cat old.txt && id -u']);
    const [, , uid] = result.stdout.trim().split('\n');
    expect(result.stdout.startsWith('old\nnew\n')).toBe(true);
    const owners = await Promise.all((await entries()).map(async (entry) => (await lstat(entry)).uid));
    expect(owners).toEqual([Number(uid), Number(uid), Number(uid)]);
  }, 60_000);
});

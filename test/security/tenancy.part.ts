import { chown, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { sandboxSupport } from '../support/sandbox.js';
import { waitForProcess } from '../support/processes.js';

// docs/security-model.md, "Workspaces and the machine" (cases 65-67): who chooses a workspace directory, and what happens when the
// directory an accepted path names is swapped afterwards. Two tenants on one service running as root,
// with real directories, real commands in bubblewrap and every route that resolves a workspace.

const SANDBOX_UID = 65534;

describe('tenancy: who places a workspace, and what a tenant can reach through it', () => {
  let t: TestApp;
  let alice: TestTenant;
  let bob: TestTenant;
  let bobProject: string;
  let aliceRoot: string;
  let bobRoot: string;
  let workspaceRoot: string;

  const project = (tenant: TestTenant, body: Record<string, unknown> = {}) => t.createProject(tenant, body);
  const patch = (tenant: TestTenant, projectId: string, body: object) =>
    t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send(body);
  const invoke = (tenant: TestTenant, projectId: string, tool: string, args: object) =>
    t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(tenant.auth).send({ arguments: args });
  const rootListing = () => readdir('/root').catch(() => [] as string[]);

  beforeAll(async () => {
    // The allowed root holds WORKSPACE_ROOT and the roots the operator grants, as on a real host.
    t = await createTestApp({ env: { WORKSPACE_ALLOWED_ROOTS: '.' } });
    workspaceRoot = t.config.workspace.root!;
    alice = await t.createTenant();
    bob = await t.createTenant();
    aliceRoot = path.join(t.tmpDir, 'granted', 'alice');
    bobRoot = path.join(t.tmpDir, 'granted', 'bob');
    await mkdir(aliceRoot, { recursive: true });
    await mkdir(bobRoot, { recursive: true });
    bobProject = (await project(bob)).id;
    await writeFile(path.join(t.workspaceOf(bobProject), 'secret.txt'), 'bob-secret');
  });
  afterAll(() => t.close());

  describe("[sec-65] a tenant never places a workspace on another tenant's directory or the host", () => {
    it("refuses a tenant's workspacePath with 403 workspace_path_operator_only until the operator grants roots, on create and update", async () => {
      const mine = await project(alice);
      for (const value of [workspaceRoot, t.workspaceOf(bobProject), '/', '/root']) {
        const created = await t.http
          .post('/v1/projects')
          .set(alice.auth)
          .send({ name: 'x', slug: `x-${Date.now()}`, workspacePath: value });
        expect([created.status, created.body.error?.code]).toEqual([403, 'workspace_path_operator_only']);
        const updated = await patch(alice, mine.id, { workspacePath: value });
        expect([updated.status, updated.body.error?.code]).toEqual([403, 'workspace_path_operator_only']);
        expect(updated.body.error.message).toContain('PATCH /v1/admin/projects/{projectId}');
      }
      // Item 1 of the report, end to end: the tenant still sees only its own directory.
      const listing = await invoke(alice, mine.id, 'list_files', {}).expect(200);
      expect(JSON.stringify(listing.body)).not.toContain(bobProject);
      const read = await invoke(alice, mine.id, 'read_file', { path: `${bobProject}/secret.txt` }).expect(200);
      expect(read.body.status).toBe('error');
      expect(JSON.stringify(read.body)).not.toContain('bob-secret');
    });

    it('refuses, even inside granted roots, every path that leads to another tenant: the root, by id, .., a symlinked parent, /proc aliases', async () => {
      await t.grantWorkspaceRoots(alice, [aliceRoot]);
      await t.grantWorkspaceRoots(bob, [bobRoot]);
      await symlink(t.workspaceOf(bobProject), path.join(aliceRoot, 'to-bob'));
      await symlink(bobRoot, path.join(aliceRoot, 'to-bob-root'));
      await symlink('/proc/self/root', path.join(aliceRoot, 'host'));
      const mine = await project(alice);
      const attempts = [
        workspaceRoot,
        t.tmpDir,
        t.workspaceOf(bobProject),
        bobRoot,
        `${aliceRoot}/../bob`,
        `${aliceRoot}/./x`,
        `${aliceRoot}/`,
        path.join(aliceRoot, 'to-bob'),
        path.join(aliceRoot, 'to-bob-root'),
        path.join(aliceRoot, 'host', workspaceRoot.slice(1)),
        `/proc/self/root${t.workspaceOf(bobProject)}`,
        `/proc/1/cwd`,
        '/',
      ];
      for (const value of attempts) {
        const res = await patch(alice, mine.id, { workspacePath: value });
        expect({ value, status: res.status, code: res.body.error?.code }).toEqual({
          value,
          status: 422,
          code: 'workspace_path_not_allowed',
        });
      }
      const created = await t.http
        .post('/v1/projects')
        .set(alice.auth)
        .send({ name: 'y', slug: 'y-onto-bob', workspacePath: t.workspaceOf(bobProject) });
      expect(created.status).toBe(422);
      // A directory of its own inside its root is fine, and shows relative to that root.
      await mkdir(path.join(aliceRoot, 'site'));
      await patch(alice, mine.id, { workspacePath: path.join(aliceRoot, 'site') }).expect(200);
      const ws = await t.http.get(`/v1/projects/${mine.id}/workspace`).set(alice.auth).expect(200);
      expect(ws.body).toEqual({ path: 'site', workspaceRoot: aliceRoot, source: 'database' });
      // Workspaces never nest, in either direction: one inside another could have its path swapped by
      // the outer one's commands while a sandbox is set up.
      await mkdir(path.join(aliceRoot, 'site', 'inner'));
      const other = await project(alice);
      for (const value of [path.join(aliceRoot, 'site', 'inner'), aliceRoot]) {
        const res = await patch(alice, other.id, { workspacePath: value });
        expect({ value, status: res.status, code: res.body.error?.code }).toEqual({
          value,
          status: 422,
          code: 'workspace_path_not_allowed',
        });
      }
    });

    it("refuses the operator too: an allowed root itself, a directory holding WORKSPACE_ROOT, another tenant's project directory or root", async () => {
      const mine = await project(alice);
      const overlapping = [
        t.tmpDir,
        path.dirname(workspaceRoot),
        workspaceRoot,
        t.workspaceOf(bobProject),
        path.join(t.workspaceOf(bobProject), 'sub'),
        bobRoot,
        path.dirname(bobRoot),
      ];
      await mkdir(path.join(t.workspaceOf(bobProject), 'sub'), { recursive: true });
      for (const value of overlapping) {
        const res = await t.http.patch(`/v1/admin/projects/${mine.id}`).set(t.admin).send({ workspacePath: value });
        expect({ value, status: res.status, code: res.body.error?.code }).toEqual({
          value,
          status: 422,
          code: 'workspace_path_not_allowed',
        });
      }
      // Granting roots that overlap another tenant's is refused the same way.
      for (const value of [bobRoot, path.join(bobRoot, 'x'), t.workspaceOf(bobProject), workspaceRoot, t.tmpDir]) {
        await mkdir(path.join(bobRoot, 'x'), { recursive: true });
        const res = await t.http
          .patch(`/v1/admin/tenants/${alice.id}`)
          .set(t.admin)
          .send({ workspaceRoots: [value] });
        expect({ value, status: res.status, code: res.body.error?.code }).toEqual({
          value,
          status: 422,
          code: 'workspace_roots_not_allowed',
        });
      }
    });
  });

  describe('[sec-66] a workspace swapped for a symlink after it was accepted answers workspace_unavailable', () => {
    // The report's chain needs one workspace inside another, which placement now refuses; a row written
    // before these rules (or by hand in the database) still holds one, and is what the resolver must survive.
    const nestedLegacyProject = async (dir: string, body: Record<string, unknown> = {}) => {
      const p = await project(alice, body);
      await t.database.driver.withSession((s) => s.query('UPDATE projects SET workspace_path = $1 WHERE id = $2', [dir, p.id]));
      // A rename through the API drops every cache of the project, so the stored path is what resolves.
      await patch(alice, p.id, { name: `legacy-${p.id}` }).expect(200);
      return p;
    };

    // Item 2 of the report: P2 inside P1's directory; a command in P1 swaps P2's directory for a link to /.
    const swapChain = async (warm: boolean) => {
      const base = path.join(aliceRoot, `p1-${warm ? 'warm' : 'cold'}`);
      await mkdir(path.join(base, 'sub'), { recursive: true });
      await chown(base, SANDBOX_UID, SANDBOX_UID);
      await chown(path.join(base, 'sub'), SANDBOX_UID, SANDBOX_UID);
      const p1 = await project(alice, { workspacePath: base, shellEnabled: true, shellAllowlist: ['sh'] });
      const p2 = await nestedLegacyProject(path.join(base, 'sub'));
      if (warm) await invoke(alice, p2.id, 'list_files', {}).expect(200);
      const before = await rootListing();
      const swap = await invoke(alice, p1.id, 'shell_exec', { argv: ['sh', '-c', 'rm -rf sub && ln -s / sub'] }).expect(200);
      expect(swap.body.result.exitCode).toBe(0);
      // The rename drops the resolver's cache (the cold variant); the warm one goes straight to the call.
      if (!warm) await patch(alice, p2.id, { name: 'renamed' }).expect(200);
      return { p1, p2, before };
    };

    it.each([['warm'], ['cold']])(
      'refuses every route of the swapped project (cache %s); nothing outside is read or written',
      async (which) => {
        const { p2, before } = await swapChain(which === 'warm');
        const expectUnavailable = (res: { status: number; body: { error?: { code: string }; results?: unknown[] } }, what: string) =>
          expect({ what, status: res.status, code: res.body.error?.code }).toEqual({ what, status: 409, code: 'workspace_unavailable' });

        const shadow = await invoke(alice, p2.id, 'read_file', { path: 'etc/shadow' });
        expectUnavailable(shadow, 'read_file');
        expect(JSON.stringify(shadow.body)).not.toContain('root:');
        expectUnavailable(await invoke(alice, p2.id, 'write_file', { path: 'root/x', content: 'owned' }), 'write_file');
        expectUnavailable(await invoke(alice, p2.id, 'list_files', { path: 'etc' }), 'list_files');
        expectUnavailable(
          await t.http.get(`/v1/projects/${p2.id}/workspace/file`).query({ path: 'etc/shadow' }).set(alice.auth),
          'browse file',
        );
        expectUnavailable(
          await t.http.get(`/v1/projects/${p2.id}/workspace/files`).query({ path: 'root' }).set(alice.auth),
          'browse files',
        );
        expectUnavailable(await t.http.get(`/v1/projects/${p2.id}/workspace`).set(alice.auth), 'workspace');

        const batch = await t.http
          .post(`/v1/projects/${p2.id}/tools/batch`)
          .set(alice.auth)
          .send({
            calls: [
              { id: 'a', tool: 'read_file', arguments: { path: 'etc/shadow' } },
              { id: 'b', tool: 'write_file', arguments: { path: 'root/y', content: 'x' } },
            ],
          });
        expect(JSON.stringify(batch.body)).not.toContain('root:');
        for (const r of batch.body.results ?? []) expect(r).toMatchObject({ status: 'denied', error: { code: 'workspace_unavailable' } });

        const port = t.port;
        const mcp = await fetch(`http://127.0.0.1:${port}/v1/projects/${p2.id}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...alice.auth },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'read_file', arguments: { path: 'etc/shadow' } },
          }),
        });
        const mcpText = await mcp.text();
        expect(mcpText).not.toContain('root:');
        expect(mcpText).toContain('workspace_unavailable');

        expect(existsSync('/root/x')).toBe(false);
        expect(existsSync('/root/y')).toBe(false);
        expect(await rootListing()).toEqual(before);
        // The error names the project, logged once, never the host path to the tenant.
        expect(shadow.body.error.message).toContain(p2.id);
        expect(shadow.body.error.message).not.toContain(t.tmpDir);
        expect(t.logs.filter((l) => l.level === 'error' && String(l.msg).includes(p2.id))).toHaveLength(1);
      },
    );

    it('refuses an approved call of a project whose directory was swapped while it waited', async () => {
      const base = path.join(aliceRoot, 'p1-approval');
      await mkdir(path.join(base, 'sub'), { recursive: true });
      await chown(base, SANDBOX_UID, SANDBOX_UID);
      await chown(path.join(base, 'sub'), SANDBOX_UID, SANDBOX_UID);
      const p1 = await project(alice, { workspacePath: base, shellEnabled: true, shellAllowlist: ['sh'] });
      const p2 = await nestedLegacyProject(path.join(base, 'sub'), { approvalRequired: ['write_file'] });
      const parked = await invoke(alice, p2.id, 'write_file', { path: 'root/approved', content: 'x' }).expect(202);
      await invoke(alice, p1.id, 'shell_exec', { argv: ['sh', '-c', 'rm -rf sub && ln -s / sub'] }).expect(200);
      const decided = await t.http
        .post(`/v1/projects/${p2.id}/invocations/${parked.body.invocationId}/approve`)
        .set(alice.deciderAuth)
        .send({});
      expect(JSON.stringify(decided.body)).toContain('workspace_unavailable');
      expect(existsSync('/root/approved')).toBe(false);
    });

    (sandboxSupport.available ? it : it.skip)(
      'keeps a command that is running when its directory is swapped in the directory it was given',
      async () => {
        const base = path.join(aliceRoot, 'p1-inflight');
        const outside = path.join(t.tmpDir, 'outside-inflight');
        await mkdir(path.join(base, 'sub'), { recursive: true });
        await mkdir(outside);
        await chown(base, SANDBOX_UID, SANDBOX_UID);
        await chown(path.join(base, 'sub'), SANDBOX_UID, SANDBOX_UID);
        await chown(outside, SANDBOX_UID, SANDBOX_UID);
        const p2 = await project(alice, { workspacePath: path.join(base, 'sub'), shellEnabled: true, shellAllowlist: ['sh'] });
        // .then sends the request now (supertest sends on the first then).
        const running = invoke(alice, p2.id, 'shell_exec', { argv: ['sh', '-c', 'sleep 2.066; echo planted > marker; ls -a'] }).then(
          (r) => r,
        );
        // Swapped once the command runs (admission and the quota's measurement come first, however long they take).
        await waitForProcess('2.066');
        // The operator's side of the host, not a tenant: the directory is moved away and a link put in its place.
        await rename(path.join(base, 'sub'), path.join(base, 'sub-moved'));
        await symlink(outside, path.join(base, 'sub'));
        const res = await running;
        expect(res.status).toBe(200);
        expect(res.body.result.stdout).toContain('marker');
        expect(existsSync(path.join(outside, 'marker'))).toBe(false);
        expect(existsSync(path.join(base, 'sub-moved', 'marker'))).toBe(true);
        expect((await invoke(alice, p2.id, 'shell_exec', { argv: ['sh', '-c', 'echo again > again'] })).status).toBe(409);
        expect(existsSync(path.join(outside, 'again'))).toBe(false);
        await rm(path.join(base, 'sub'));
      },
    );
  });

  it('[sec-67] GET …/workspace and the project never show a tenant a host path it was not given; the operator sees it', async () => {
    const own = await t.http.get(`/v1/projects/${bobProject}/workspace`).set(bob.auth).expect(200);
    expect(own.body).toEqual({ path: null, workspaceRoot: null, source: 'workspace_root' });
    expect(JSON.stringify(own.body)).not.toContain(t.tmpDir);
    const placedDir = path.join(t.tmpDir, 'operator-placed');
    await mkdir(placedDir);
    const placed = await project(bob);
    await t.http.patch(`/v1/admin/projects/${placed.id}`).set(t.admin).send({ workspacePath: placedDir }).expect(200);
    for (const url of [`/v1/projects/${placed.id}/workspace`, `/v1/projects/${placed.id}`, '/v1/projects?limit=100']) {
      const res = await t.http.get(url).set(bob.auth).expect(200);
      expect({ url, body: JSON.stringify(res.body).includes(t.tmpDir) }).toEqual({ url, body: false });
    }
    // A tenant cannot undo the operator's placement either.
    const cleared = await patch(bob, placed.id, { workspacePath: null });
    expect([cleared.status, cleared.body.error?.code]).toEqual([403, 'workspace_path_operator_only']);
    const admin = await t.http.get(`/v1/admin/projects/${placed.id}`).set(t.admin).expect(200);
    expect(admin.body).toMatchObject({ tenantId: bob.id, workspacePath: placedDir, workspace: { path: placedDir, source: 'database' } });
  });
});

import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

const warningsAbout = (t: TestApp, projectId: string) =>
  t.logs.filter((l) => l.level === 'warn' && String(l.msg).includes(projectId) && String(l.msg).includes('working directory'));

describe('workspace resolution', () => {
  let t: TestApp;
  let tenant: TestTenant;

  afterEach(() => t.close());

  it('uses WORKSPACE_ROOT/<projectId>, created with the project', async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    const project = await t.createProject(tenant);
    const expected = t.workspaceOf(project.id);
    expect(await realpath(expected)).toBe(expected);
    const res = await t.http.get(`/v1/projects/${project.id}/workspace`).set(tenant.auth).expect(200);
    // A tenant is never told the host path; the operator is.
    expect(res.body).toEqual({ path: null, workspaceRoot: null, source: 'workspace_root' });
    const admin = await t.http.get(`/v1/admin/projects/${project.id}`).set(t.admin).expect(200);
    expect(admin.body.workspace).toEqual({ path: expected, source: 'workspace_root' });
  });

  it("prefers the project's workspacePath, and answers workspace_unavailable (logged once) when that directory is gone", async () => {
    t = await createTestApp({ env: { WORKSPACE_ALLOWED_ROOTS: 'allowed', WORKSPACE_CACHE_TTL_MS: '0' } });
    tenant = await t.createTenant();
    const granted = path.join(t.tmpDir, 'allowed', 'acme');
    const dir = path.join(granted, 'site');
    await mkdir(dir, { recursive: true });
    await t.grantWorkspaceRoots(tenant, [granted]);
    const project = await t.createProject(tenant, { workspacePath: dir });
    expect((await t.http.get(`/v1/projects/${project.id}/workspace`).set(tenant.auth).expect(200)).body).toEqual({
      path: 'site',
      workspaceRoot: granted,
      source: 'database',
    });
    await rm(dir, { recursive: true });
    for (let i = 0; i < 3; i++) {
      const res = await t.http.get(`/v1/projects/${project.id}/workspace`).set(tenant.auth).expect(409);
      expect(res.body.error.code).toBe('workspace_unavailable');
      expect(res.body.error.message).toContain(project.id);
      expect(res.body.error.message).not.toContain(t.tmpDir);
    }
    expect(t.logs.filter((l) => l.level === 'error' && String(l.msg).includes(dir))).toHaveLength(1);
  });

  it('falls back to the working directory with one warning per project, not per call', async () => {
    t = await createTestApp({ env: { WORKSPACE_ROOT: '', WORKSPACE_CACHE_TTL_MS: '0' } });
    tenant = await t.createTenant();
    const [a, b] = [await t.createProject(tenant), await t.createProject(tenant)];
    for (let i = 0; i < 3; i++) {
      const res = await t.http.get(`/v1/projects/${a.id}/workspace`).set(tenant.auth).expect(200);
      expect(res.body).toEqual({ path: null, workspaceRoot: null, source: 'cwd' });
    }
    await t.http.get(`/v1/projects/${b.id}/workspace`).set(tenant.auth).expect(200);
    expect(warningsAbout(t, a.id)).toHaveLength(1);
    expect(warningsAbout(t, b.id)).toHaveLength(1);
  });

  it('refuses the working-directory fallback with a clear error when WORKSPACE_FALLBACK=error', async () => {
    t = await createTestApp({ env: { WORKSPACE_ROOT: '', WORKSPACE_FALLBACK: 'error' } });
    tenant = await t.createTenant();
    const project = await t.createProject(tenant);
    const res = await t.http.get(`/v1/projects/${project.id}/workspace`).set(tenant.auth).expect(409);
    expect(res.body.error.code).toBe('workspace_unavailable');
    expect(res.body.error.message).toMatch(/workspacePath|WORKSPACE_ROOT/);
  });

  it('serves lookups from the cache until the TTL passes, and drops the entry when the project changes', async () => {
    t = await createTestApp({ env: { WORKSPACE_ALLOWED_ROOTS: 'allowed', WORKSPACE_CACHE_TTL_MS: '400' } });
    tenant = await t.createTenant();
    const granted = path.join(t.tmpDir, 'allowed', 'acme');
    const [one, two] = [path.join(granted, 'one'), path.join(granted, 'two')];
    await mkdir(one, { recursive: true });
    await mkdir(two, { recursive: true });
    await t.grantWorkspaceRoots(tenant, [granted]);
    const project = await t.createProject(tenant, { workspacePath: one });
    const get = async () => (await t.http.get(`/v1/projects/${project.id}/workspace`).set(tenant.auth).expect(200)).body;
    expect(await get()).toEqual({ path: 'one', workspaceRoot: granted, source: 'database' });

    // Changed behind the service's back: the cached answer stands until the TTL passes.
    await t.database.driver.withSession((s) => s.query('UPDATE projects SET workspace_path = $1 WHERE id = $2', [two, project.id]));
    expect(await get()).toEqual({ path: 'one', workspaceRoot: granted, source: 'database' });
    await new Promise((r) => setTimeout(r, 450));
    expect(await get()).toEqual({ path: 'two', workspaceRoot: granted, source: 'database' });

    // Changed through the API: seen at once.
    await t.http.patch(`/v1/projects/${project.id}`).set(tenant.auth).send({ workspacePath: one }).expect(200);
    expect(await get()).toEqual({ path: 'one', workspaceRoot: granted, source: 'database' });
    await t.http.patch(`/v1/projects/${project.id}`).set(tenant.auth).send({ workspacePath: null }).expect(200);
    expect((await get()).source).toBe('workspace_root');

    // Deleted: 404 at once, not a cached answer.
    await t.http.delete(`/v1/projects/${project.id}`).set(tenant.auth).expect(204);
    await t.http.get(`/v1/projects/${project.id}/workspace`).set(tenant.auth).expect(404);
  });
});

describe('workspace browsing', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let ws: string;
  let projectId: string;
  let outside: string;

  const files = (query: Record<string, string>) => t.http.get(`/v1/projects/${projectId}/workspace/files`).query(query).set(tenant.auth);
  const file = (p: string) => t.http.get(`/v1/projects/${projectId}/workspace/file`).query({ path: p }).set(tenant.auth);

  beforeAll(async () => {
    t = await createTestApp({ env: { WORKSPACE_FILE_MAX_BYTES: '1024' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    ws = t.workspaceOf(projectId);
    outside = await mkdtemp(path.join(os.tmpdir(), 'toolgate-outside-'));
    await writeFile(path.join(outside, 'secret.txt'), 'top secret');
    await mkdir(path.join(ws, 'src/deep'), { recursive: true });
    await writeFile(path.join(ws, 'README.md'), '# hello\n');
    await writeFile(path.join(ws, 'src/index.ts'), 'export {};\n');
    await writeFile(path.join(ws, 'src/deep/x.txt'), 'x');
    await writeFile(path.join(ws, 'big.txt'), 'y'.repeat(5000));
    await symlink(path.join(outside, 'secret.txt'), path.join(ws, 'leak.txt'));
    await symlink(outside, path.join(ws, 'outdir'));
    await symlink('.', path.join(ws, 'src/loop'));
    await link(path.join(outside, 'secret.txt'), path.join(ws, 'hardlink.txt')).catch(() => undefined);
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    // Siblings sharing the workspace's prefix.
    for (const suffix of ['-evil', '2', '.bak']) {
      await mkdir(`${ws}${suffix}`, { recursive: true });
      await writeFile(`${ws}${suffix}/x`, 'sibling');
    }
  });
  afterAll(async () => {
    await t.close();
    await rm(outside, { recursive: true, force: true });
  });

  it('lists a directory with name, path, type, size and modified', async () => {
    const res = await files({}).expect(200);
    const readme = res.body.entries.find((e: { name: string }) => e.name === 'README.md');
    expect(readme).toEqual({ name: 'README.md', path: 'README.md', type: 'file', size: 8, modified: expect.any(String) });
    expect(res.body.entries.find((e: { name: string }) => e.name === 'outdir').type).toBe('symlink');
    const sub = await files({ path: 'src' }).expect(200);
    expect(sub.body.entries.map((e: { path: string }) => e.path)).toEqual(['src/deep', 'src/index.ts', 'src/loop']);
  });

  it('[sec-16] lists recursively without following a symlink loop or a link outside', async () => {
    const res = await files({ recursive: 'true' }).expect(200);
    const paths: string[] = res.body.entries.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['src/deep/x.txt', 'src/loop', 'outdir']));
    expect(paths.some((p) => p.startsWith('src/loop/') || p.startsWith('outdir/'))).toBe(false);
  });

  it('reads a file, capped at WORKSPACE_FILE_MAX_BYTES and marked truncated', async () => {
    expect((await file('README.md').expect(200)).body).toEqual({
      path: 'README.md',
      encoding: 'utf8',
      content: '# hello\n',
      size: 8,
      truncated: false,
    });
    const big = await file('big.txt').expect(200);
    expect(big.body.content.length).toBeLessThanOrEqual(1024);
    expect(big.body.truncated).toBe(true);
    expect((await file('nope.txt').expect(404)).body.error.code).toBe('not_found');
  });

  const refusals: Array<[string, string, string]> = [
    ['sec-01', 'a relative path that climbs out', '../../etc/passwd'],
    ['sec-02', 'an absolute path outside', '/etc/passwd'],
    ['sec-04', 'a symlink to a file outside', 'leak.txt'],
    ['sec-04', 'a path through a symlinked directory outside', 'outdir/secret.txt'],
    ['sec-09', 'a NUL byte', 'README.md\0.png'],
    ['sec-14', 'a FIFO', 'pipe'],
  ];
  it.each(refusals)('[%s] refuses to read %s', async (_line, _what, p) => {
    const res = await file(p);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.error.code).toMatch(/path_outside_workspace|invalid_path|special_file|validation_failed/);
    expect(JSON.stringify(res.body)).not.toContain('top secret');
  });

  it('[sec-02] reads an absolute path inside the workspace', async () => {
    expect((await file(path.join(ws, 'README.md')).expect(200)).body.content).toBe('# hello\n');
  });

  it.each(['-evil', '2', '.bak'])('[sec-03] refuses the sibling <workspace>%s that shares the prefix', async (suffix) => {
    expect((await file(`${ws}${suffix}/x`).expect(403)).body.error.code).toBe('path_outside_workspace');
    expect((await file(`../${path.basename(ws)}${suffix}/x`).expect(403)).body.error.code).toBe('path_outside_workspace');
    expect((await files({ path: `${ws}${suffix}` }).expect(403)).body.error.code).toBe('path_outside_workspace');
  });

  it('[sec-01] refuses to list outside the workspace', async () => {
    expect((await files({ path: '../..' }).expect(403)).body.error.code).toBe('path_outside_workspace');
    expect((await files({ path: 'outdir' }).expect(403)).body.error.code).toBe('path_outside_workspace');
    expect((await files({ path: '/' }).expect(403)).body.error.code).toBe('path_outside_workspace');
  });

  it('[sec-10] [sec-11] [sec-12] treats backslashes, percent-escapes and fullwidth dots as literal names', async () => {
    await writeFile(path.join(ws, '..%2fx'), 'literal');
    for (const p of ['..\\..\\x', 'C:\\Windows\\x', '%2e%2e/x', '%252e%252e/x', '．．／x', '..%2fx']) {
      const res = await file(p);
      if (p === '..%2fx') {
        // Sent encoded, it arrives as the literal name `..%2fx`, a file inside the workspace.
        expect(res.body.content).toBe('literal');
      } else {
        expect([403, 404]).toContain(res.status);
        if (res.status === 404) expect(res.body.error.code).toBe('not_found');
      }
    }
    // Raw in the query string it is decoded once, to `../x`: that climbs out and is refused.
    await t.http.get(`/v1/projects/${projectId}/workspace/file?path=..%2fx`).set(tenant.auth).expect(403);
    // Percent-encoded twice, it arrives as the literal name and reads the literal file.
    const literal = await t.http.get(`/v1/projects/${projectId}/workspace/file?path=..%252fx`).set(tenant.auth).expect(200);
    expect(literal.body.content).toBe('literal');
  });

  it('[sec-13] refuses an 8 KiB path with a 4xx in the one error shape', async () => {
    const res = await file('a/'.repeat(4096));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.error.code).toMatch(/invalid_path|headers_too_large/);
  });

  it('[sec-13] refuses 2,000 path segments with a 4xx', async () => {
    const res = await file(Array.from({ length: 2000 }, () => 'a').join('/'));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_path');
  });

  it('[sec-08] still reads a hard-linked file only through its name in the workspace (content is the same inode)', async () => {
    // Hard links cannot be told from their target; reading is allowed, writes and deletes are refused (tools suite).
    const res = await file('hardlink.txt');
    expect([200, 403, 404]).toContain(res.status);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });
});

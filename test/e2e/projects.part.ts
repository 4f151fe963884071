import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Test as SupertestTest } from 'supertest';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

describe('projects', () => {
  let t: TestApp;
  let alice: TestTenant;
  let bob: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    [alice, bob] = [await t.createTenant(), await t.createTenant()];
  });
  afterAll(() => t.close());

  it('creates, reads, updates and deletes a project', async () => {
    const created = await t.http.post('/v1/projects').set(alice.auth).send({ name: 'Docs', slug: 'docs' }).expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Docs',
      slug: 'docs',
      workspacePath: null,
      shellEnabled: false,
      shellAllowlist: [],
      approvalRequired: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const id = created.body.id as string;
    expect((await t.http.get(`/v1/projects/${id}`).set(alice.auth).expect(200)).body).toEqual(created.body);
    const updated = await t.http.patch(`/v1/projects/${id}`).set(alice.auth).send({ name: 'Docs site' }).expect(200);
    expect(updated.body).toMatchObject({ id, name: 'Docs site', slug: 'docs' });
    await t.http.delete(`/v1/projects/${id}`).set(alice.auth).expect(204);
    await t.http.get(`/v1/projects/${id}`).set(alice.auth).expect(404);
  });

  it('removes the workspace Toolgate made for a deleted project, files and directories inside it included, and nothing else', async () => {
    const doomed = await t.createProject(alice);
    const kept = await t.createProject(alice);
    const dir = t.workspaceOf(doomed.id);
    await t.http
      .post(`/v1/projects/${doomed.id}/tools/write_file/invoke`)
      .set(alice.auth)
      .send({ arguments: { path: 'a/b/c.txt', content: 'x', createDirs: true } })
      .expect(200);
    // A link to another workspace: removed as a link, its target untouched.
    await symlink(t.workspaceOf(kept.id), path.join(dir, 'link'));
    await t.http
      .post(`/v1/projects/${kept.id}/tools/write_file/invoke`)
      .set(alice.auth)
      .send({ arguments: { path: 'stays.txt', content: 'kept' } })
      .expect(200);
    await t.http.delete(`/v1/projects/${doomed.id}`).set(alice.auth).expect(204);
    for (let i = 0; i < 100 && existsSync(dir); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(path.join(t.workspaceOf(kept.id), 'stays.txt'))).toBe(true);
  });

  it('answers 409 for a slug already used in the tenant, and allows it in another tenant', async () => {
    await t.http.post('/v1/projects').set(alice.auth).send({ name: 'A', slug: 'shared' }).expect(201);
    const dup = await t.http.post('/v1/projects').set(alice.auth).send({ name: 'B', slug: 'shared' }).expect(409);
    expect(dup.body.error).toEqual({ code: 'project_slug_taken', message: "A project with slug 'shared' already exists in this tenant" });
    await t.http.post('/v1/projects').set(bob.auth).send({ name: 'B', slug: 'shared' }).expect(201);
    const other = await t.http.post('/v1/projects').set(alice.auth).send({ name: 'C', slug: 'other-slug' }).expect(201);
    await t.http.patch(`/v1/projects/${other.body.id}`).set(alice.auth).send({ slug: 'shared' }).expect(409);
  });

  it('refuses bad fields with a message naming them', async () => {
    const res = await t.http.post('/v1/projects').set(alice.auth).send({ name: 'X', slug: 'Not A Slug', tenantId: 'x' }).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.message).toMatch(/slug/);
    expect(res.body.error.message).toMatch(/tenantId/);
    // An allow-list entry longer than a path can be: 100 of them would keep megabytes in the project's row.
    const long = await t.http
      .post('/v1/projects')
      .set(alice.auth)
      .send({ name: 'Y', slug: 'long-allowlist', shellAllowlist: [`/${'a'.repeat(5000)}`] })
      .expect(400);
    expect(long.body.error.message).toMatch(/shellAllowlist.*4096/);
    // Counted in bytes, as a path is: 1,400 characters of three bytes each are past it.
    const wide = await t.http
      .post('/v1/projects')
      .set(alice.auth)
      .send({ name: 'Z', slug: 'wide-allowlist', shellAllowlist: [`/${'中'.repeat(1400)}`] })
      .expect(400);
    expect(wide.body.error.message).toMatch(/shellAllowlist.*4096/);
  });

  it('pages through the list with a cursor', async () => {
    const tenant = await t.createTenant();
    for (let i = 0; i < 5; i++) await t.createProject(tenant, { slug: `page-${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { items: Array<{ slug: string }>; nextCursor: string | null } } = await t.http
        .get('/v1/projects')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(tenant.auth)
        .expect(200);
      seen.push(...res.body.items.map((p: { slug: string }) => p.slug));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    const bad = await t.http.get('/v1/projects').query({ cursor: 'garbage' }).set(tenant.auth).expect(400);
    expect(bad.body.error.code).toBe('invalid_cursor');
    await t.http.get('/v1/projects').query({ limit: 0 }).set(tenant.auth).expect(400);
  });

  it("[sec-40] answers another tenant's project on every route with the bytes of a missing one", async () => {
    const project = await t.createProject(alice);
    const routes: Array<[string, string, object?]> = [
      ['get', `/v1/projects/${project.id}`],
      ['patch', `/v1/projects/${project.id}`, { name: 'stolen' }],
      ['delete', `/v1/projects/${project.id}`],
      ['get', `/v1/projects/${project.id}/workspace`],
      ['get', `/v1/projects/${project.id}/workspace/files`],
      ['get', `/v1/projects/${project.id}/workspace/file?path=a.txt`],
    ];
    const call = (tenant: TestTenant, [method, url, body]: [string, string, object?]) => {
      const req = (t.http as unknown as Record<string, (u: string) => SupertestTest>)[method](url).set(tenant.auth);
      return body ? req.send(body) : req;
    };
    const whileExisting = [];
    for (const route of routes) whileExisting.push(await call(bob, route).expect(404));
    // Alice's project still exists, untouched.
    expect((await t.http.get(`/v1/projects/${project.id}`).set(alice.auth).expect(200)).body.name).toBe(project.name);
    await t.http.delete(`/v1/projects/${project.id}`).set(alice.auth).expect(204);
    for (const [i, route] of routes.entries()) {
      const whileMissing = await call(bob, route).expect(404);
      expect(whileExisting[i].text.replace(/"requestId":"[^"]+"/, '')).toBe(whileMissing.text.replace(/"requestId":"[^"]+"/, ''));
      expect(whileMissing.body.error.code).toBe('project_not_found');
    }
    // Ids that are not even uuids are just as missing.
    await t.http.get('/v1/projects/not-a-uuid').set(bob.auth).expect(404);
  });
});

describe('project workspacePath', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let allowed: string;
  let outside: string;

  beforeAll(async () => {
    outside = await mkdtemp(path.join(os.tmpdir(), 'toolgate-outside-'));
    // Relative to the app's working directory, its temporary folder.
    t = await createTestApp({ env: { WORKSPACE_ALLOWED_ROOTS: 'allowed' } });
    // The tenant's own root, granted by the operator inside the allowed root.
    allowed = path.join(t.tmpDir, 'allowed', 'acme');
    await mkdir(path.join(allowed, 'site'), { recursive: true });
    await mkdir(`${allowed}-evil`);
    await symlink('/etc', path.join(allowed, 'etc-link'));
    await symlink(`${allowed}-evil`, path.join(allowed, 'evil-link'));
    tenant = await t.createTenant();
    await t.grantWorkspaceRoots(tenant, [allowed]);
  });
  afterAll(async () => {
    await t.close();
    await rm(outside, { recursive: true, force: true });
  });

  it("refuses a workspacePath from a tenant the operator granted no roots, with 403 naming the operator's route", async () => {
    const other = await t.createTenant();
    const res = await t.http
      .post('/v1/projects')
      .set(other.auth)
      .send({ name: 'S', slug: 's', workspacePath: path.join(allowed, 'site') })
      .expect(403);
    expect(res.body.error.code).toBe('workspace_path_operator_only');
    expect(res.body.error.message).toContain('PATCH /v1/admin/projects/{projectId}');
  });

  it('accepts a directory inside a granted root and stores it', async () => {
    const res = await t.http
      .post('/v1/projects')
      .set(tenant.auth)
      .send({ name: 'Site', slug: 'site', workspacePath: path.join(allowed, 'site') })
      .expect(201);
    expect(res.body.workspacePath).toBe(path.join(allowed, 'site'));
  });

  it.each([
    ['/', 'the filesystem root'],
    ['/etc', 'a system directory'],
    ['outside', 'a directory outside the allowed roots'],
    ['etc-link', 'a symlink inside the root pointing at /etc'],
    ['evil-link', 'a symlink to a sibling sharing the root prefix'],
    ['sibling', 'a sibling sharing the root prefix'],
    ['missing', 'a directory that does not exist'],
    ['relative', 'a relative path'],
  ])('[sec-17] refuses %s (%s)', async (which) => {
    const value =
      which === 'outside'
        ? outside
        : which === 'etc-link'
          ? path.join(allowed, 'etc-link')
          : which === 'evil-link'
            ? path.join(allowed, 'evil-link')
            : which === 'sibling'
              ? `${allowed}-evil`
              : which === 'missing'
                ? path.join(allowed, 'missing')
                : which === 'relative'
                  ? 'site'
                  : which;
    const res = await t.http
      .post('/v1/projects')
      .set(tenant.auth)
      .send({ name: 'X', slug: `x-${Math.random().toString(16).slice(2, 8)}`, workspacePath: value })
      .expect(422);
    expect(res.body.error.code).toBe('workspace_path_not_allowed');
    const project = await t.createProject(tenant);
    const patch = await t.http.patch(`/v1/projects/${project.id}`).set(tenant.auth).send({ workspacePath: value }).expect(422);
    expect(patch.body.error.code).toBe('workspace_path_not_allowed');
  });
});

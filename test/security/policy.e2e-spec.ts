import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md 117-119: Cedar policies decide every call before it runs, on every channel, on the
// arguments as they will run (paths normalised, symlinks followed); an invalid set, or one an agent or an
// approver tries to set, is refused and the set in force stays.

const DOCS_ONLY = `@id("writes-stay-in-docs")
@reason("Files may only be written under docs/")
forbid (principal, action == Toolgate::Action::"call", resource)
when {
  ["write_file", "edit_file", "move_file", "delete_file"].contains(resource.name) &&
  ((context has path && !(context.path like "docs/*")) || (context has source && !(context.source like "docs/*")))
};`;

type Auth = { Authorization: string };

describe('policies', () => {
  let t: TestApp;
  let tenant: TestTenant;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
  });
  afterAll(() => t.close());

  const issue = async (body: Record<string, unknown>): Promise<Auth> => {
    const res = await t.http.post('/v1/api-keys').set(tenant.auth).send(body).expect(201);
    return { Authorization: `Bearer ${res.body.key as string}` };
  };
  const invoke = (projectId: string, tool: string, args: Record<string, unknown>, auth: Auth = tenant.auth) =>
    t.http.post(`/v1/projects/${projectId}/tools/${tool}/invoke`).set(auth).send({ arguments: args });
  const mcpCall = async (projectId: string, name: string, args: Record<string, unknown>, url = `/v1/projects/${projectId}/mcp`) => {
    const res = await fetch(`http://127.0.0.1:${t.port}${url}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-03-26',
        ...tenant.auth,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    return (await res.json()) as { result?: { isError?: boolean; content: Array<{ text: string }> } };
  };
  const setProjectPolicy = (projectId: string, text: string, auth: Auth = tenant.auth) =>
    t.http.put(`/v1/projects/${projectId}/policies`).set(auth).send({ text });
  const refusedByPolicy = (res: { status: number; body: { error?: { code: string; message: string } } }, id: string) => {
    expect([res.status, res.body.error?.code]).toEqual([403, 'forbidden_by_policy']);
    expect(res.body.error?.message).toContain(`"${id}"`);
  };

  describe('[sec-117] a policy that keeps writes under docs/', () => {
    let p: string;
    let dir: string;

    beforeAll(async () => {
      p = (await t.createProject(tenant)).id;
      dir = t.workspaceOf(p);
      await mkdir(path.join(dir, 'docs'));
      await mkdir(path.join(dir, 'src'));
      await writeFile(path.join(dir, 'docs', 'a.md'), 'a');
      await writeFile(path.join(dir, 'src', 'b.ts'), 'b');
      // A symlink under docs/ that leads elsewhere in the workspace.
      await symlink(path.join(dir, 'src'), path.join(dir, 'docs', 'code'));
      await setProjectPolicy(p, DOCS_ONLY).expect(200);
    });

    it('lets a write under docs/ run, and records the decision in the audit row', async () => {
      const ok = await invoke(p, 'write_file', { path: 'docs/new.md', content: 'x' }).expect(200);
      expect(ok.body.status).toBe('ok');
      const row = await t.http.get(`/v1/projects/${p}/invocations/${ok.body.invocationId}`).set(tenant.auth).expect(200);
      expect(row.body.policy).toEqual({ decision: 'allow', policyIds: [] });
    });

    it.each([['docs/../x.txt'], ['./docs/../x.txt'], ['docs/./../src/x.txt'], ['docs/code/x.ts']])(
      'refuses write_file to %s (the decision sees the normalised path)',
      async (target) => {
        refusedByPolicy(await invoke(p, 'write_file', { path: target, content: 'x' }), 'writes-stay-in-docs');
      },
    );

    it('refuses an absolute path outside docs/, and allows an absolute one inside', async () => {
      refusedByPolicy(await invoke(p, 'write_file', { path: path.join(dir, 'x.txt'), content: 'x' }), 'writes-stay-in-docs');
      expect((await invoke(p, 'write_file', { path: path.join(dir, 'docs', 'abs.md'), content: 'x' }).expect(200)).body.status).toBe('ok');
    });

    it('refuses edit_file and move_file into the forbidden area, and a move out of docs/', async () => {
      refusedByPolicy(await invoke(p, 'edit_file', { path: 'src/b.ts', edits: [{ oldText: 'b', newText: 'c' }] }), 'writes-stay-in-docs');
      refusedByPolicy(await invoke(p, 'move_file', { source: 'docs/a.md', destination: 'src/a.md' }), 'writes-stay-in-docs');
      refusedByPolicy(await invoke(p, 'move_file', { source: 'src/b.ts', destination: 'docs/b.ts' }), 'writes-stay-in-docs');
    });

    it('refuses the same calls in a batch, over MCP and through a toolset with a pathPrefix, and nothing was written', async () => {
      const batch = await t.http
        .post(`/v1/projects/${p}/tools/batch`)
        .set(tenant.auth)
        .send({
          calls: [
            { id: 'in', tool: 'write_file', arguments: { path: 'docs/batch.md', content: 'x' } },
            { id: 'out', tool: 'write_file', arguments: { path: 'docs/../batch.txt', content: 'x' } },
          ],
        })
        .expect(200);
      const [inside, outside] = batch.body.results as Array<{ status: string; error?: { code: string } }>;
      expect(inside.status).toBe('ok');
      expect([outside.status, outside.error?.code]).toEqual(['denied', 'forbidden_by_policy']);

      const viaMcp = await mcpCall(p, 'write_file', { path: './docs/../mcp.txt', content: 'x' });
      expect(viaMcp.result?.isError).toBe(true);
      expect(viaMcp.result?.content[0].text).toContain('writes-stay-in-docs');

      // A toolset that confines write_file to src/: its paths are judged where they land.
      await t.http
        .post(`/v1/projects/${p}/toolsets`)
        .set(tenant.auth)
        .send({ slug: 'coder', name: 'Coder', mode: 'direct', tools: [{ select: 'write_file', name: 'write_code', pathPrefix: 'src' }] })
        .expect(201);
      const viaToolset = await t.http
        .post(`/v1/projects/${p}/toolsets/coder/tools/write_code/invoke`)
        .set(tenant.auth)
        .send({ arguments: { path: 'x.ts', content: 'x' } });
      refusedByPolicy(viaToolset, 'writes-stay-in-docs');
      const viaToolsetMcp = await mcpCall(p, 'write_code', { path: 'y.ts', content: 'x' }, `/v1/projects/${p}/toolsets/coder/mcp`);
      expect(viaToolsetMcp.result?.isError).toBe(true);
      // call_tool in search mode is judged as the tool it calls.
      await t.http
        .post(`/v1/projects/${p}/toolsets`)
        .set(tenant.auth)
        .send({ slug: 'finder', name: 'Finder', mode: 'search', tools: [{ select: 'write_file' }] })
        .expect(201);
      const viaCallTool = await t.http
        .post(`/v1/projects/${p}/toolsets/finder/tools/call_tool/invoke`)
        .set(tenant.auth)
        .send({ arguments: { name: 'write_file', arguments: { path: 'docs/../found.txt', content: 'x' } } });
      refusedByPolicy(viaCallTool, 'writes-stay-in-docs');

      expect((await readdir(dir)).sort()).toEqual(['docs', 'src']);
      expect((await readdir(path.join(dir, 'src'))).sort()).toEqual(['b.ts']);
    });

    it('audits each refusal with the decision and the policy that made it', async () => {
      const res = await invoke(p, 'write_file', { path: 'audited.txt', content: 'x' });
      refusedByPolicy(res, 'writes-stay-in-docs');
      const rows = await t.http.get(`/v1/projects/${p}/invocations?status=denied`).set(tenant.auth).expect(200);
      const row = (rows.body.items as Array<{ arguments: { path?: string }; policy: unknown; errorCode: string }>).find(
        (r) => r.arguments.path === 'audited.txt',
      );
      expect(row).toMatchObject({ errorCode: 'forbidden_by_policy', policy: { decision: 'forbid', policyIds: ['writes-stay-in-docs'] } });
    });

    it('answers the decision for a call without running it (policies/check)', async () => {
      const check = await t.http
        .post(`/v1/projects/${p}/policies/check`)
        .set(tenant.auth)
        .send({ tool: 'write_file', arguments: { path: 'docs/../c.txt', content: 'x' } })
        .expect(200);
      expect(check.body).toEqual({
        decision: 'forbid',
        policies: [{ id: 'writes-stay-in-docs', scope: 'project', reason: 'Files may only be written under docs/' }],
        policyInForce: true,
        wouldPark: false,
      });
      expect((await readdir(dir)).includes('c.txt')).toBe(false);
    });
  });

  describe('[sec-117] policies on a command, a role and a key name', () => {
    it('asks a person for git push, refuses git commit --amend, and runs git status', async () => {
      const { id: p } = await t.createProject(tenant, { shellEnabled: true, shellAllowlist: ['git'] });
      await setProjectPolicy(
        p,
        `@id("push-needs-a-person") @ask("") permit (principal, action, resource) when { context has command && context.command like "git push*" };
         @id("no-amend") @reason("History is not rewritten") forbid (principal, action, resource) when { context.argv.contains("--amend") };`,
      ).expect(200);
      const push = await invoke(p, 'shell_exec', { argv: ['git', 'push', 'origin', 'main'] }).expect(202);
      expect(push.body.status).toBe('pending_approval');
      refusedByPolicy(await invoke(p, 'shell_exec', { argv: ['/usr/bin/git', 'commit', '--amend'] }), 'no-amend');
      const status = await invoke(p, 'shell_exec', { argv: ['git', 'status'] }).expect(200);
      expect(status.body.status).toBe('ok');
    });

    it('forbids by role and by key name', async () => {
      const { id: p } = await t.createProject(tenant);
      await setProjectPolicy(
        p,
        `@id("agents-read-only") forbid (principal in Toolgate::Role::"agent", action, resource) when { resource.classes.contains("@writes") };
         @id("no-ci-network") forbid (principal, action, resource) when { principal.name like "ci-*" && resource.name == "list_files" };`,
      ).expect(200);
      const agent = await issue({ name: 'writer-agent', role: 'agent', projectIds: [p] });
      refusedByPolicy(await invoke(p, 'write_file', { path: 'a.txt', content: 'x' }, agent), 'agents-read-only');
      expect((await invoke(p, 'write_file', { path: 'a.txt', content: 'x' }).expect(200)).body.status).toBe('ok');
      const ci = await issue({ name: 'ci-bot', role: 'agent', projectIds: [p] });
      refusedByPolicy(await invoke(p, 'list_files', {}, ci), 'no-ci-network');
      expect((await invoke(p, 'list_files', {}, agent).expect(200)).body.status).toBe('ok');
      // The check answers as another principal when asked to.
      const asCi = await t.http
        .post(`/v1/projects/${p}/policies/check`)
        .set(tenant.auth)
        .send({ tool: 'list_files', arguments: {}, as: { keyName: 'ci-7', role: 'agent' } })
        .expect(200);
      expect(asCi.body.decision).toBe('forbid');
    });

    it('parks a call an @ask policy covers, over REST and in a batch, and an approved one runs', async () => {
      const { id: p } = await t.createProject(tenant);
      await setProjectPolicy(
        p,
        `@id("deletes-ask") @ask("") @reason("a person confirms deletes") permit (principal, action, resource == Toolgate::Tool::"delete_file");`,
      ).expect(200);
      await writeFile(path.join(t.workspaceOf(p), 'gone.txt'), 'x');
      await writeFile(path.join(t.workspaceOf(p), 'gone2.txt'), 'x');
      const parked = await invoke(p, 'delete_file', { path: 'gone.txt' }).expect(202);
      expect(parked.body.status).toBe('pending_approval');
      const batch = await t.http
        .post(`/v1/projects/${p}/tools/batch`)
        .set(tenant.auth)
        .send({
          calls: [
            { id: 'd', tool: 'delete_file', arguments: { path: 'gone2.txt' } },
            { id: 'l', tool: 'list_files', arguments: {} },
          ],
        })
        .expect(200);
      expect((batch.body.results as Array<{ status: string }>).map((r) => r.status)).toEqual(['pending_approval', 'ok']);
      expect((await readdir(t.workspaceOf(p))).sort()).toEqual(['gone.txt', 'gone2.txt']);
      const row = await t.http.get(`/v1/projects/${p}/invocations/${parked.body.invocationId}`).set(tenant.auth).expect(200);
      expect(row.body.policy).toEqual({ decision: 'ask', policyIds: ['deletes-ask'] });
      const approved = await t.http
        .post(`/v1/projects/${p}/invocations/${parked.body.invocationId}/approve`)
        .set(tenant.deciderAuth)
        .send({})
        .expect(200);
      expect(approved.body.outcome.status).toBe('ok');
      expect(await readdir(t.workspaceOf(p))).toEqual(['gone2.txt']);
    });

    it('refuses an approved call that a policy set since forbids', async () => {
      const { id: p } = await t.createProject(tenant, { approvalRequired: ['write_file'] });
      const parked = await invoke(p, 'write_file', { path: 'late.txt', content: 'x' }).expect(202);
      await setProjectPolicy(p, `@id("no-writes") forbid (principal, action, resource == Toolgate::Tool::"write_file");`).expect(200);
      const approved = await t.http
        .post(`/v1/projects/${p}/invocations/${parked.body.invocationId}/approve`)
        .set(tenant.deciderAuth)
        .send({})
        .expect(200);
      expect([approved.body.outcome.status, approved.body.outcome.error.code]).toEqual(['denied', 'forbidden_by_policy']);
      expect(await readdir(t.workspaceOf(p))).toEqual([]);
    });

    it('applies the tenant set to every project, beside the project set', async () => {
      const other = await t.createTenant();
      const { id: p } = await t.createProject(other);
      await t.http
        .put('/v1/policies')
        .set(other.auth)
        .send({ text: '@id("tenant-no-fetch") forbid (principal, action, resource == Toolgate::Tool::"fetch_url");' })
        .expect(200);
      const res = await t.http
        .post(`/v1/projects/${p}/tools/fetch_url/invoke`)
        .set(other.auth)
        .send({ arguments: { url: 'https://example.com/' } });
      refusedByPolicy(res, 'tenant-no-fetch');
      // Another tenant is not affected.
      const mine = await t.http
        .post(`/v1/projects/${(await t.createProject(tenant)).id}/policies/check`)
        .set(tenant.auth)
        .send({ tool: 'fetch_url', arguments: { url: 'https://example.com/' } })
        .expect(200);
      expect(mine.body).toMatchObject({ decision: 'allow', policyInForce: false });
    });
  });

  describe('[sec-118] a policy that keeps fetch_url to a set of hosts', () => {
    it('refuses a userinfo trick, a trailing dot and an upper-case host outside the set, before any request is made', async () => {
      const { id: p } = await t.createProject(tenant);
      await setProjectPolicy(
        p,
        `@id("known-hosts") @reason("Only docs.example.com") forbid (principal, action, resource == Toolgate::Tool::"fetch_url")
         unless { context has host && context.host == "docs.example.com" };`,
      ).expect(200);
      for (const url of [
        'https://docs.example.com@evil.test/',
        'https://user:pw@evil.test./x',
        'https://EVIL.test/',
        'https://evil.test./',
        'https://docs.example.com.evil.test/',
      ]) {
        refusedByPolicy(await invoke(p, 'fetch_url', { url }), 'known-hosts');
      }
      for (const url of ['https://DOCS.example.com/a', 'https://docs.example.com./a']) {
        const check = await t.http
          .post(`/v1/projects/${p}/policies/check`)
          .set(tenant.auth)
          .send({ tool: 'fetch_url', arguments: { url } })
          .expect(200);
        expect({ url, decision: check.body.decision }).toEqual({ url, decision: 'allow' });
      }
    });
  });

  describe('[sec-119] setting policies', () => {
    it("refuses an invalid set with Cedar's message and position, and keeps the set in force", async () => {
      const { id: p } = await t.createProject(tenant);
      const first = await setProjectPolicy(
        p,
        '@id("no-deletes") forbid (principal, action, resource == Toolgate::Tool::"delete_file");',
      ).expect(200);
      expect(first.body).toMatchObject({ scope: 'project', version: 1, setBy: { keyId: tenant.keyId, name: 'default' } });

      const typo = await setProjectPolicy(p, 'forbid (principal, action, resource) when { resource.nme == "x" };');
      expect([typo.status, typo.body.error.code]).toEqual([422, 'policy_invalid']);
      expect(typo.body.error.details.problems[0]).toMatchObject({
        message: expect.stringContaining('nme'),
        help: expect.stringContaining('name'),
        position: { line: 1 },
      });

      const syntax = await setProjectPolicy(
        p,
        'permit (principal, action, resource);\nforbid (principal, action, resource) when { resource.name == };',
      );
      expect([syntax.status, syntax.body.error.code]).toEqual([422, 'policy_invalid']);
      expect(syntax.body.error.details.problems[0].position).toMatchObject({ line: 2 });

      const unknownAttribute = await setProjectPolicy(p, 'forbid (principal, action, resource) when { context.hostname == "x" };');
      expect(unknownAttribute.status).toBe(422);

      const current = await t.http.get(`/v1/projects/${p}/policies`).set(tenant.auth).expect(200);
      expect(current.body).toMatchObject({ version: 1, text: expect.stringContaining('no-deletes') });
      await writeFile(path.join(t.workspaceOf(p), 'keep.txt'), 'x');
      refusedByPolicy(await invoke(p, 'delete_file', { path: 'keep.txt' }), 'no-deletes');
    });

    it('refuses agent and approver keys (403) and leaves the set in force', async () => {
      const { id: p } = await t.createProject(tenant);
      await setProjectPolicy(p, '@id("kept") forbid (principal, action, resource == Toolgate::Tool::"delete_file");').expect(200);
      const agent = await issue({ name: 'policy-agent', role: 'agent', projectIds: [p] });
      const approver = await issue({ name: 'policy-approver', role: 'approver' });
      for (const auth of [agent, approver]) {
        for (const res of [await setProjectPolicy(p, '', auth), await t.http.put('/v1/policies').set(auth).send({ text: '' })]) {
          expect([res.status, res.body.error.code]).toEqual([403, 'forbidden_for_role']);
        }
      }
      const current = await t.http.get(`/v1/projects/${p}/policies`).set(approver).expect(200);
      expect(current.body).toMatchObject({ version: 1, text: expect.stringContaining('kept') });
      const schema = await t.http.get('/v1/policies/schema').set(agent).expect(200);
      expect(schema.body.text).toContain('action call');
    });

    it("answers 404 for another tenant's project, as for a missing one", async () => {
      const other = await t.createTenant();
      const { id: theirs } = await t.createProject(other);
      const res = await setProjectPolicy(theirs, 'forbid (principal, action, resource);');
      expect([res.status, res.body.error.code]).toEqual([404, 'project_not_found']);
      expect((await t.http.get(`/v1/projects/${theirs}/policies`).set(tenant.auth)).status).toBe(404);
    });

    it('a change reaches the next call at once, and an empty set restores the behaviour before policies', async () => {
      const { id: p } = await t.createProject(tenant);
      expect((await invoke(p, 'list_files', {}).expect(200)).body.status).toBe('ok');
      await setProjectPolicy(p, '@id("no-listing") forbid (principal, action, resource == Toolgate::Tool::"list_files");').expect(200);
      refusedByPolicy(await invoke(p, 'list_files', {}), 'no-listing');
      const cleared = await setProjectPolicy(p, '').expect(200);
      expect(cleared.body.version).toBe(2);
      const ok = await invoke(p, 'list_files', {}).expect(200);
      const row = await t.http.get(`/v1/projects/${p}/invocations/${ok.body.invocationId}`).set(tenant.auth).expect(200);
      expect(row.body.policy).toBeNull();
    });
  });
});

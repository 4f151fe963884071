import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { mcpClientFor, refusedWith as refusal } from '../e2e/mcp/mcp-test-kit.js';

const SECRET = 'outside-secret-5b02';
const THEIRS = 'other-tenant-9d41';

// Workspace files as MCP resources (file:///{path}) are confined exactly like read_file: the URI is
// decoded once, then judged by the same path checks on the same workspace, and nothing outside it is
// listed, read or offered as a completion.
describe('MCP resources stay inside the project workspace', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let projectId: string;
  let theirProject: string;
  let workspace: string;
  let outside: string;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp({ env: { READ_FILE_MAX_BYTES: '4096' } });
    tenant = await t.createTenant();
    other = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    theirProject = (await t.createProject(other)).id;
    workspace = t.workspaceOf(projectId);
    outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'toolgate-resources-sec-')));
    await writeFile(path.join(outside, 'secret.txt'), SECRET);
    await writeFile(path.join(t.workspaceOf(theirProject), 'theirs.txt'), THEIRS);
    await writeFile(path.join(workspace, 'README.md'), '# mine\n');
    await writeFile(path.join(workspace, 'big.txt'), 'x'.repeat(5000));
    await mkdir(path.join(workspace, '%2e%2e'));
    await writeFile(path.join(workspace, '%2e%2e', 'literal.txt'), 'a literal name');
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'leak.txt'));
    await symlink(path.relative(workspace, path.join(outside, 'secret.txt')), path.join(workspace, 'leak-rel.txt'));
    await symlink(outside, path.join(workspace, 'outdir'));
    client = await mcpClientFor(t, tenant, projectId);
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
    await rm(outside, { recursive: true, force: true });
  });

  const rows = async () =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200)).body.items as Array<{
      arguments: unknown;
    }>;

  it("[sec-01] [sec-04] refuses .., symlinks out of the workspace and the other tenant's workspace, each read audited, no byte of theirs in an answer", async () => {
    const theirs = path.basename(t.workspaceOf(theirProject));
    const uris = [
      'file:///../secret.txt',
      'file:///leak.txt',
      'file:///leak-rel.txt',
      'file:///outdir/secret.txt',
      `file:///../${theirs}/theirs.txt`,
      `file:///../../${theirs}/theirs.txt`,
    ];
    const before = (await rows()).length;
    for (const uri of uris) {
      const refused = await refusal(client.readResource({ uri }));
      expect({ uri, code: refused.code }).toEqual({ uri, code: ErrorCode.InvalidParams });
      expect(refused.message).not.toContain(SECRET);
      expect(refused.message).not.toContain(THEIRS);
    }
    // Judged by read_file: each refusal is its audited read_file call.
    expect((await rows()).length).toBe(before + uris.length);
  });

  it('[sec-11] decodes the URI once: an encoded .. climbs nowhere, a doubly encoded one is a literal name', async () => {
    for (const uri of [
      'file:///%2e%2e/secret.txt',
      'file:///%2E%2E%2Fsecret.txt',
      'file:///..%2fsecret.txt',
      'file:///%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    ]) {
      const refused = await refusal(client.readResource({ uri }));
      expect({ uri, code: refused.code }).toEqual({ uri, code: ErrorCode.InvalidParams });
      expect(refused.message).not.toContain(SECRET);
    }
    const literal = await client.readResource({ uri: 'file:///%252e%252e/literal.txt' });
    expect(literal.contents).toEqual([{ uri: 'file:///%252e%252e/literal.txt', mimeType: 'text/plain', text: 'a literal name' }]);
  });

  it('refuses a file URI with a host, an absolute path, a query and a bad encoding before anything is read', async () => {
    const before = (await rows()).length;
    for (const uri of [
      'file://localhost/README.md',
      'file://evil.example/etc/passwd',
      'file:////etc/passwd',
      `file:///${encodeURIComponent(path.join(outside, 'secret.txt'))}`,
      'file:///README.md?x=1',
      'file:///%C3',
      'file:README.md',
      'FILE:///README.md',
    ]) {
      const refused = await refusal(client.readResource({ uri }));
      expect({ uri, code: refused.code }).toEqual({ uri, code: ErrorCode.InvalidParams });
    }
    expect((await rows()).length).toBe(before);
  });

  it('refuses a file larger than read_file returns in one read, with how to read it instead', async () => {
    const refused = await refusal(client.readResource({ uri: 'file:///big.txt' }));
    expect(refused).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/5000 bytes.*read_file/) });
  });

  it('lists and completes nothing from outside the workspace', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.name).sort()).toEqual(['%2e%2e/literal.txt', 'README.md', 'big.txt']);
    const ref = { type: 'ref/resource' as const, uri: 'file:///{path}' };
    for (const value of ['outdir/', '../', `../${path.basename(t.workspaceOf(theirProject))}/`, '/', `${outside}/`]) {
      expect({ value, values: (await client.complete({ ref, argument: { name: 'path', value } })).completion.values }).toEqual({
        value,
        values: [],
      });
    }
  });

  it("answers another tenant's key on this project's endpoint 404, as a missing project, reading nothing", async () => {
    const port = t.port;
    for (const project of [projectId, '00000000-0000-4000-8000-000000000000']) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${project}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...other.auth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///README.md' } }),
      });
      expect({ project, status: res.status }).toEqual({ project, status: 404 });
      expect(await res.text()).not.toContain('# mine');
    }
  });
});

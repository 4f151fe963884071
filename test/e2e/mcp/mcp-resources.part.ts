import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { connectMcp, mcpClientFor, postModern, refusedWith } from './mcp-test-kit.js';
import { LEGACY_TASKS_CAPABILITY } from '../../../src/mcp/mcp-tasks.service.js';

interface AuditRow {
  tool: string;
  channel: string;
  status: string;
  errorCode: string | null;
  caller: { keyId: string } | null;
  arguments: Record<string, unknown> | null;
}

// The eight bytes every PNG starts with, then a NUL: binary by read_file's test.
const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x01, 0x02]);
const FILES_IN_BULK = 450;
const SECRET = 'kept-outside-7c1e';

describe('workspace files as MCP resources', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let workspace: string;
  let outside: string;
  let client: Client;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    workspace = t.workspaceOf(projectId);
    outside = await realpath(await mkdtemp(path.join(os.tmpdir(), 'toolgate-resources-outside-')));
    await writeFile(path.join(outside, 'secret.txt'), SECRET);
    await writeFile(path.join(workspace, 'README.md'), '# hello resources\n');
    await writeFile(path.join(workspace, 'logo.png'), PNG_BYTES);
    await writeFile(path.join(workspace, 'with space é.txt'), 'named with care');
    await writeFile(path.join(workspace, '.env'), 'HIDDEN=1');
    await mkdir(path.join(workspace, 'bulk'));
    for (let i = 0; i < FILES_IN_BULK; i++)
      await writeFile(path.join(workspace, 'bulk', `f${String(i).padStart(3, '0')}.txt`), `file ${i}`);
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'leak.txt'));
    client = await mcpClientFor(t, tenant, projectId);
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
    await rm(outside, { recursive: true, force: true });
  });

  // Oldest first.
  const readRows = async () =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'read_file', limit: 100 }).set(tenant.auth).expect(200)).body
      .items as AuditRow[];
  const agentKey = async (tools?: string[]) =>
    (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'bound', role: 'agent', projectIds: [projectId], ...(tools ? { tools } : {}) })
        .expect(201)
    ).body as { id: string; key: string };

  it('declares resources (without subscriptions) and completions beside tools', () => {
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      completions: {},
      tasks: LEGACY_TASKS_CAPABILITY,
    });
  });

  it('lists the workspace files page by page, in walk order, skipping hidden names, directories and symlinks', async () => {
    const seen: Array<{ uri: string; name: string; mimeType?: string }> = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      expect(page.resources.length).toBeLessThanOrEqual(200);
      seen.push(...page.resources);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    const names = seen.map((r) => r.name);
    expect(names).toHaveLength(FILES_IN_BULK + 3);
    expect(names.slice(0, 3)).toEqual(['README.md', 'bulk/f000.txt', 'bulk/f001.txt']);
    expect(names.slice(-3)).toEqual(['bulk/f449.txt', 'logo.png', 'with space é.txt']);
    expect(names).not.toEqual(expect.arrayContaining(['.env']));
    expect(names).not.toContain('leak.txt');
    expect(names).not.toContain('bulk');
    expect(seen[0]).toEqual({ uri: 'file:///README.md', name: 'README.md', mimeType: 'text/markdown' });
    expect(seen.find((r) => r.name === 'with space é.txt')?.uri).toBe('file:///with%20space%20%C3%A9.txt');
  });

  it('refuses a cursor it did not give', async () => {
    expect(await refusedWith(client.listResources({ cursor: 'not a cursor!' }))).toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it('offers the file:///{path} template', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'file:///{path}', name: 'workspace-file' })]);
  });

  it('reads a text file as text, a percent-encoded name as the file it names, each read one read_file audit row with channel mcp', async () => {
    const before = (await readRows()).length;
    const text = await client.readResource({ uri: 'file:///README.md' });
    expect(text.contents).toEqual([{ uri: 'file:///README.md', mimeType: 'text/markdown', text: '# hello resources\n' }]);
    const encoded = await client.readResource({ uri: 'file:///with%20space%20%C3%A9.txt' });
    expect(encoded.contents).toEqual([{ uri: 'file:///with%20space%20%C3%A9.txt', mimeType: 'text/plain', text: 'named with care' }]);
    const rows = await readRows();
    expect(rows).toHaveLength(before + 2);
    expect(rows.slice(-2)).toEqual([
      expect.objectContaining({ tool: 'read_file', channel: 'mcp', status: 'ok', arguments: { path: 'README.md', encoding: 'base64' } }),
      expect.objectContaining({
        tool: 'read_file',
        channel: 'mcp',
        status: 'ok',
        arguments: { path: 'with space é.txt', encoding: 'base64' },
      }),
    ]);
  });

  it('reads a binary file as a base64 blob with its MIME type', async () => {
    const { contents } = await client.readResource({ uri: 'file:///logo.png' });
    expect(contents).toEqual([{ uri: 'file:///logo.png', mimeType: 'image/png', blob: PNG_BYTES.toString('base64') }]);
  });

  it('answers a missing file with -32002 (resource not found), audited as the refused read', async () => {
    expect(await refusedWith(client.readResource({ uri: 'file:///nope.txt' }))).toMatchObject({
      code: -32002,
      message: expect.stringMatching(/nope\.txt/),
    });
    expect((await readRows()).at(-1)).toMatchObject({
      channel: 'mcp',
      status: 'error',
      errorCode: 'not_found',
      arguments: { path: 'nope.txt', encoding: 'base64' },
    });
  });

  it('refuses .., an absolute path, a symlink out of the workspace and another scheme, reading nothing outside', async () => {
    for (const uri of [
      'file:///../secret.txt',
      'file:///bulk/../../secret.txt',
      'file:////etc/passwd',
      `file:///${encodeURIComponent(outside)}/secret.txt`,
      'file:///leak.txt',
      'https://example.com/x',
    ]) {
      const refusal = await refusedWith(client.readResource({ uri }));
      expect({ uri, code: refusal.code }).toEqual({ uri, code: ErrorCode.InvalidParams });
      expect(refusal.message).not.toContain(SECRET);
    }
  });

  it("refuses another project's files: its endpoint answers 404 to a key of this project, like a missing project", async () => {
    const other = await t.createProject(tenant);
    await writeFile(path.join(t.workspaceOf(other.id), 'theirs.txt'), 'of the other project');
    const key = (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'one-project', role: 'agent', projectIds: [projectId] })
        .expect(201)
    ).body as { key: string };
    const port = t.port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${other.id}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', Authorization: `Bearer ${key.key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'file:///theirs.txt' } }),
    });
    expect(res.status).toBe(404);
    // Nor can a URI of this project reach it: the path is judged inside this project's workspace.
    const through = await refusedWith(client.readResource({ uri: `file:///../${path.basename(t.workspaceOf(other.id))}/theirs.txt` }));
    expect(through.code).toBe(ErrorCode.InvalidParams);
  });

  it('completes the template’s path with workspace files starting with what was typed, bounded, and nothing outside', async () => {
    const ref = { type: 'ref/resource' as const, uri: 'file:///{path}' };
    const bulk = await client.complete({ ref, argument: { name: 'path', value: 'bulk/f1' } });
    expect(bulk.completion.values).toHaveLength(100);
    expect(bulk.completion.values[0]).toBe('bulk/f100.txt');
    expect(bulk.completion).toMatchObject({ total: 100, hasMore: false });
    const top = await client.complete({ ref, argument: { name: 'path', value: 'R' } });
    expect(top.completion.values).toEqual(['README.md']);
    const all = await client.complete({ ref, argument: { name: 'path', value: 'bulk/' } });
    expect(all.completion).toMatchObject({ total: FILES_IN_BULK, hasMore: true });
    expect(all.completion.values).toHaveLength(100);
    for (const value of ['../', `${outside}/`, 'leak.txt/']) {
      expect((await client.complete({ ref, argument: { name: 'path', value } })).completion.values).toEqual([]);
    }
  });

  it('offers resources to a key bound to tools only when it may call read_file', async () => {
    const reader = await agentKey(['read_file']);
    const readerClient = await connectMcp(t, projectId, { Authorization: `Bearer ${reader.key}` });
    try {
      expect(readerClient.getServerCapabilities()?.resources).toBeDefined();
      expect((await readerClient.readResource({ uri: 'file:///README.md' })).contents[0]).toMatchObject({ text: '# hello resources\n' });
      expect((await readRows()).at(-1)).toMatchObject({ caller: { keyId: reader.id }, channel: 'mcp' });
    } finally {
      await readerClient.close();
    }
    const lister = await agentKey(['list_files']);
    const listerClient = await connectMcp(t, projectId, { Authorization: `Bearer ${lister.key}` });
    try {
      expect(listerClient.getServerCapabilities()).toEqual({ tools: { listChanged: false }, tasks: LEGACY_TASKS_CAPABILITY });
      const before = (await readRows()).length;
      // The SDK client checks the capability itself; a raw request shows what the server answers.
      const port = t.port;
      for (const method of ['resources/list', 'resources/read', 'resources/templates/list', 'completion/complete']) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            Authorization: `Bearer ${lister.key}`,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method,
            params: {
              uri: 'file:///README.md',
              ref: { type: 'ref/resource', uri: 'file:///{path}' },
              argument: { name: 'path', value: '' },
            },
          }),
        });
        expect({ method, error: ((await res.json()) as { error?: { code: number } }).error?.code }).toEqual({
          method,
          error: ErrorCode.MethodNotFound,
        });
      }
      expect(await readRows()).toHaveLength(before);
    } finally {
      await listerClient.close();
    }
  });

  it('makes a read wait for a person where the project has read_file approved first: refused, naming the parked invocation', async () => {
    await t.http
      .patch(`/v1/projects/${projectId}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['read_file'] })
      .expect(200);
    try {
      const refused = await refusedWith(client.readResource({ uri: 'file:///README.md' }));
      expect(refused).toMatchObject({ code: ErrorCode.InvalidRequest, message: expect.stringMatching(/awaits approval.*has not run/) });
      const id = /invocation ([0-9a-f-]{36})/.exec(refused.message)?.[1];
      const row = (await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200)).body as AuditRow;
      expect(row).toMatchObject({ tool: 'read_file', channel: 'mcp', status: 'pending_approval' });
      // Listing and completion would name the files with no one approving: they name none.
      expect((await client.listResources()).resources).toEqual([]);
      expect(
        (await client.complete({ ref: { type: 'ref/resource', uri: 'file:///{path}' }, argument: { name: 'path', value: '' } })).completion
          .values,
      ).toEqual([]);
    } finally {
      await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ approvalRequired: [] }).expect(200);
    }
  });

  it('offers no resources on a toolset endpoint, even one that exposes read_file', async () => {
    await t.http
      .post(`/v1/projects/${projectId}/toolsets`)
      .set(tenant.auth)
      .send({ slug: 'reader', name: 'Reader', mode: 'direct', tools: [{ select: 'read_file' }] })
      .expect(201);
    const toolset = await connectMcp(t, projectId, tenant.auth, '/toolsets/reader/mcp');
    try {
      expect(toolset.getServerCapabilities()).toEqual({ tools: { listChanged: false }, tasks: LEGACY_TASKS_CAPABILITY });
    } finally {
      await toolset.close();
    }
  });

  describe('under protocol revision 2026-07-28', () => {
    const post = (method: string, params: Record<string, unknown>, name?: string) =>
      postModern(t, projectId, tenant.auth, method, params, name);

    it('lists, offers the template, reads and completes, each result complete and listings private to the caller', async () => {
      const list = await post('resources/list', {});
      expect(list.body.result).toMatchObject({
        resultType: 'complete',
        cacheScope: 'private',
        ttlMs: expect.any(Number),
        nextCursor: expect.any(String),
      });
      expect(list.body.result.resources[0]).toEqual({ uri: 'file:///README.md', name: 'README.md', mimeType: 'text/markdown' });
      const next = await post('resources/list', { cursor: list.body.result.nextCursor });
      expect(next.body.result.resources[0].name).toBe('bulk/f199.txt');
      expect((await post('resources/templates/list', {})).body.result.resourceTemplates[0].uriTemplate).toBe('file:///{path}');
      const read = await post('resources/read', { uri: 'file:///logo.png' }, 'file:///logo.png');
      expect(read.body.result).toEqual({
        resultType: 'complete',
        ttlMs: 0,
        cacheScope: 'private',
        contents: [{ uri: 'file:///logo.png', mimeType: 'image/png', blob: PNG_BYTES.toString('base64') }],
      });
      const completion = await post('completion/complete', {
        ref: { type: 'ref/resource', uri: 'file:///{path}' },
        argument: { name: 'path', value: 'log' },
      });
      expect(completion.body.result.completion.values).toEqual(['logo.png']);
    });

    it('answers params the method does not take with -32602', async () => {
      expect((await post('resources/read', {})).body.error).toMatchObject({
        code: ErrorCode.InvalidParams,
        message: expect.stringMatching(/params\.uri/),
      });
      expect((await post('resources/list', { cursor: 3 })).body.error).toMatchObject({ code: ErrorCode.InvalidParams });
      expect((await post('completion/complete', { ref: { type: 'ref/resource', uri: 'file:///{path}' } })).body.error).toMatchObject({
        code: ErrorCode.InvalidParams,
      });
    });

    it('refuses a read whose Mcp-Name is not its URI before anything is read', async () => {
      const before = (await readRows()).length;
      const res = await post('resources/read', { uri: 'file:///README.md' }, 'file:///logo.png');
      expect(res).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
      expect(await readRows()).toHaveLength(before);
    });

    it('answers a resource that is not there with -32602, the code this revision gives it (-32002 before)', async () => {
      const res = await post('resources/read', { uri: 'file:///nope.txt' }, 'file:///nope.txt');
      expect(res.body.error).toMatchObject({ code: ErrorCode.InvalidParams, message: expect.stringMatching(/nope\.txt/) });
    });

    it('answers a refused read with the JSON-RPC error, as under 2025-11-25', async () => {
      const res = await post('resources/read', { uri: 'file:///../secret.txt' }, 'file:///../secret.txt');
      expect(res.body.error).toMatchObject({ code: ErrorCode.InvalidParams });
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
    });
  });
});

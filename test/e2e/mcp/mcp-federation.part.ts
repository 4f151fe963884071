import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { enableSource, FederatedUpstream } from './federated-upstream.js';
import { connectMcp, postModern, refusedWith } from './mcp-test-kit.js';
import { LEGACY_TASKS_CAPABILITY, MODERN_TASKS_CAPABILITY } from '../../../src/mcp/mcp-tasks.service.js';

interface AuditRow {
  tool: string;
  channel: string;
  status: string;
  errorCode: string | null;
  caller: { keyId: string; name: string } | null;
  arguments: Record<string, unknown> | null;
}

// A project's MCP sources relayed beside its workspace files: their resources, templates, prompts and
// completions reach an official SDK client through the project's endpoint, for the keys that may call the
// sources' tools, audited, under both protocol revisions.
describe('resources and prompts of MCP sources, relayed', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let client: Client;
  const docs = new FederatedUpstream('docs_search', {
    resources: [
      { uri: 'docs://guide/intro', name: 'intro', mimeType: 'text/markdown' },
      { uri: 'docs://guide/setup', name: 'setup', mimeType: 'text/markdown' },
    ],
    templates: [{ uriTemplate: 'docs://page/{slug}', name: 'page' }],
    prompts: [{ name: 'summarise', description: 'Summarise a page', arguments: [{ name: 'topic', required: true }] }],
    completions: true,
  });
  // Resources only: no prompts, no completions.
  const tickets = new FederatedUpstream('tickets_find', { resources: [{ uri: 'tickets://open', name: 'open tickets' }] });

  beforeAll(async () => {
    await docs.start();
    await tickets.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${docs.port},127.0.0.1:${tickets.port}`, MCP_SOURCE_REFRESH_S: '0' } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    await writeFile(path.join(t.workspaceOf(projectId), 'notes.md'), '# notes\n');
    await enableSource(t, tenant, projectId, docs);
    await enableSource(t, tenant, projectId, tickets);
    client = await connectMcp(t, projectId, tenant.auth);
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
    await docs.stop();
    await tickets.stop();
  });

  const agentKey = async (body: Record<string, unknown> = {}) =>
    (
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'agent', role: 'agent', projectIds: [projectId], ...body })
        .expect(201)
    ).body as { id: string; key: string };
  const rows = async (tool: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool, limit: 100 }).set(tenant.auth).expect(200)).body
      .items as AuditRow[];

  it('declares resources, prompts and completions because the sources do', () => {
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      prompts: { listChanged: false },
      completions: {},
      tasks: LEGACY_TASKS_CAPABILITY,
    });
  });

  it('lists the workspace’s files, then the sources’ resources sorted by URI, the cursor leading from one to the other', async () => {
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(['file:///notes.md']);
    expect(first.nextCursor).toBeDefined();
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.resources).toEqual([
      { uri: 'docs://guide/intro', name: 'intro', mimeType: 'text/markdown' },
      { uri: 'docs://guide/setup', name: 'setup', mimeType: 'text/markdown' },
      { uri: 'tickets://open', name: 'open tickets' },
    ]);
    expect(second.nextCursor).toBeUndefined();
    expect(await refusedWith(client.listResources({ cursor: 'u.not base64' }))).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: expect.stringMatching(/cursor is not one this server gave/),
    });
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
    expect(templates).toEqual(['file:///{path}', 'docs://page/{slug}']);
  });

  it('reads a listed resource and a templated one from their source, each read audited with who, what and the outcome', async () => {
    expect((await client.readResource({ uri: 'tickets://open' })).contents).toEqual([
      { uri: 'tickets://open', mimeType: 'text/plain', text: 'tickets_find says: tickets://open' },
    ]);
    expect((await client.readResource({ uri: 'docs://page/install' })).contents).toEqual([
      { uri: 'docs://page/install', mimeType: 'text/plain', text: 'docs_search says: docs://page/install' },
    ]);
    expect(tickets.requests).toContain('read tickets://open');
    expect(docs.requests).toContain('read docs://page/install');
    const audited = await rows('resources/read');
    expect(audited.map((row) => ({ ...row, caller: row.caller?.name }))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel: 'mcp',
          status: 'ok',
          caller: expect.any(String),
          arguments: { source: expect.stringMatching(/^skill:tickets-find/), uri: 'tickets://open' },
        }),
        expect.objectContaining({
          channel: 'mcp',
          status: 'ok',
          arguments: { source: expect.stringMatching(/^skill:docs-search/), uri: 'docs://page/install' },
        }),
      ]),
    );
  });

  it('answers a URI no source offers -32002 without asking any, and the workspace’s own file: URIs as before', async () => {
    const before = docs.requests.length + tickets.requests.length;
    expect(await refusedWith(client.readResource({ uri: 'docs://elsewhere/x' }))).toMatchObject({
      code: -32002,
      message: expect.stringMatching(/No resource 'docs:\/\/elsewhere\/x'/),
    });
    expect(docs.requests.length + tickets.requests.length).toBe(before);
    expect((await client.readResource({ uri: 'file:///notes.md' })).contents).toEqual([
      { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# notes\n' },
    ]);
  });

  it('relays the upstream’s own error for a read, with its code, audited as an error', async () => {
    docs.offer.read = () => {
      throw new Error('the page is gone');
    };
    try {
      const refused = await refusedWith(client.readResource({ uri: 'docs://guide/intro' }));
      expect(refused.code).toBe(ErrorCode.InternalError);
      expect(refused.message).toMatch(/the page is gone.*the MCP server at 127\.0\.0\.1/);
      expect((await rows('resources/read')).some((row) => row.status === 'error' && row.errorCode === 'upstream_rpc_-32603')).toBe(true);
    } finally {
      delete docs.offer.read;
    }
  });

  it('lists and gets prompts, the get audited, and completes a prompt argument through the source', async () => {
    expect((await client.listPrompts()).prompts).toEqual([
      { name: 'summarise', description: 'Summarise a page', arguments: [{ name: 'topic', required: true }] },
    ]);
    const got = await client.getPrompt({ name: 'summarise', arguments: { topic: 'setup' } });
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'summarise with {"topic":"setup"}' } }]);
    expect((await rows('prompts/get')).some((row) => row.status === 'ok' && (row.arguments as { name: string }).name === 'summarise')).toBe(
      true,
    );
    expect(await refusedWith(client.getPrompt({ name: 'nobody_offers_this' }))).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: expect.stringMatching(/No prompt 'nobody_offers_this'/),
    });
    const completed = await client.complete({ ref: { type: 'ref/prompt', name: 'summarise' }, argument: { name: 'topic', value: 'al' } });
    expect(completed.completion).toEqual({ values: ['alpha', 'alpine'], total: 2, hasMore: false });
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'docs://page/{slug}' },
      argument: { name: 'slug', value: 'b' },
    });
    expect(template.completion.values).toEqual(['beta']);
    expect(docs.requests).toEqual(
      expect.arrayContaining(['prompt summarise', 'complete summarise topic=al', 'complete docs://page/{slug} slug=b']),
    );
  });

  it('offers a source only to keys that may call one of its tools: another binding sees the workspace alone', async () => {
    const key = await agentKey({ tools: ['read_file', 'docs_search'] });
    const bound = await connectMcp(t, projectId, { Authorization: `Bearer ${key.key}` });
    try {
      const uris = [];
      for (let cursor: string | undefined, page = 0; page < 3; page++) {
        const listed = await bound.listResources(cursor ? { cursor } : {});
        uris.push(...listed.resources.map((r) => r.uri));
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      expect(uris).toEqual(['file:///notes.md', 'docs://guide/intro', 'docs://guide/setup']);
      expect(await refusedWith(bound.readResource({ uri: 'tickets://open' }))).toMatchObject({ code: -32002 });
    } finally {
      await bound.close();
    }
    const none = await agentKey({ tools: ['read_file'] });
    const plain = await connectMcp(t, projectId, { Authorization: `Bearer ${none.key}` });
    try {
      expect(plain.getServerCapabilities()).toEqual({
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
        completions: {},
        tasks: LEGACY_TASKS_CAPABILITY,
      });
      expect(await refusedWith(plain.readResource({ uri: 'docs://guide/intro' }))).toMatchObject({
        code: ErrorCode.InvalidParams,
        message: expect.stringMatching(/not a workspace file/),
      });
      expect(await refusedWith(plain.listPrompts())).toMatchObject({ code: ErrorCode.MethodNotFound });
    } finally {
      await plain.close();
    }
  });

  it('offers nothing of a source whose tools the project wants approved, nor on a toolset endpoint', async () => {
    await t.http
      .patch(`/v1/projects/${projectId}`)
      .set(tenant.auth)
      .send({ approvalRequired: ['@network'] })
      .expect(200);
    try {
      const approved = await connectMcp(t, projectId, tenant.auth);
      try {
        expect(approved.getServerCapabilities()?.prompts).toBeUndefined();
        expect(await refusedWith(approved.readResource({ uri: 'tickets://open' }))).toMatchObject({ code: ErrorCode.InvalidParams });
      } finally {
        await approved.close();
      }
    } finally {
      await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ approvalRequired: [] }).expect(200);
    }
    await t.http
      .post(`/v1/projects/${projectId}/toolsets`)
      .set(tenant.auth)
      .send({ slug: 'docs', name: 'Docs', mode: 'direct', tools: [{ select: 'docs_search' }] })
      .expect(201);
    const toolset = await connectMcp(t, projectId, tenant.auth, '/toolsets/docs/mcp');
    try {
      expect(toolset.getServerCapabilities()).toEqual({ tools: { listChanged: false }, tasks: LEGACY_TASKS_CAPABILITY });
    } finally {
      await toolset.close();
    }
  });

  describe('under protocol revision 2026-07-28', () => {
    const post = (method: string, params: Record<string, unknown>, name?: string) =>
      postModern(t, projectId, tenant.auth, method, params, name);

    it('discovers the same capabilities and answers reads, prompts and completions marked complete', async () => {
      expect((await post('server/discover', {})).body.result?.capabilities).toEqual({
        tools: { listChanged: false },
        resources: { subscribe: false, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
        extensions: MODERN_TASKS_CAPABILITY,
      });
      expect((await post('resources/read', { uri: 'docs://guide/setup' }, 'docs://guide/setup')).body.result).toMatchObject({
        contents: [{ uri: 'docs://guide/setup', text: 'docs_search says: docs://guide/setup' }],
        resultType: 'complete',
      });
      expect((await post('prompts/list', {})).body.result).toMatchObject({
        prompts: [{ name: 'summarise' }],
        resultType: 'complete',
        cacheScope: 'private',
      });
      expect((await post('prompts/get', { name: 'summarise', arguments: { topic: 'x' } }, 'summarise')).body.result).toMatchObject({
        messages: [{ role: 'user' }],
        resultType: 'complete',
      });
      expect((await post('prompts/get', { name: 'summarise', arguments: { topic: 3 } }, 'summarise')).body.error).toMatchObject({
        code: ErrorCode.InvalidParams,
        message: 'params.arguments must be a map of strings',
      });
      expect(
        (await post('completion/complete', { ref: { type: 'ref/prompt', name: 'summarise' }, argument: { name: 'topic', value: 'alpi' } }))
          .body.result,
      ).toMatchObject({
        completion: { values: ['alpine'] },
      });
    });
  });

  it('forgets a source disabled on the project: its resources and prompts are gone', async () => {
    const other = await t.createProject(tenant);
    const source = await enableSource(t, tenant, other.id, docs);
    const before = await connectMcp(t, other.id, tenant.auth);
    try {
      expect((await before.listPrompts()).prompts.map((p) => p.name)).toEqual(['summarise']);
    } finally {
      await before.close();
    }
    await t.http.delete(`/v1/projects/${other.id}/skills/${source.id}`).set(tenant.auth).expect(204);
    const after = await connectMcp(t, other.id, tenant.auth);
    try {
      expect(after.getServerCapabilities()?.prompts).toBeUndefined();
      expect(await refusedWith(after.readResource({ uri: 'docs://guide/intro' }))).toMatchObject({
        code: ErrorCode.InvalidParams,
        message: expect.stringMatching(/not a workspace file/),
      });
    } finally {
      await after.close();
    }
  });
});

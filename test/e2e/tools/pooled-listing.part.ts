import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { INLINE_LISTING_ENTRIES } from '../../../src/workspace/recursive-listing.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { connectMcp, mcpClientFor, postModern, type TextResult, textOf } from '../mcp/mcp-test-kit.js';
import { callTool } from './tool-test-kit.js';

// A recursive listing past the inline budget is walked on a worker thread and comes back as its JSON text,
// which the answers splice in as it is (common/json/json-text.ts). Every channel must answer the same
// listing the objects would have given: REST, a replay, a batch, MCP in each of its answer forms, and the
// result cap must still hold.
describe('a listing walked in the worker pool, on every channel', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let client: Client;

  const FILES = INLINE_LISTING_ENTRIES + 44;
  // Names JSON escapes and names of more bytes than characters, among plain ones.
  const names = Array.from({ length: FILES }, (_, i) =>
    i % 50 === 7 ? `f${String(i).padStart(3, '0')} "é\\ü".txt` : `f${String(i).padStart(3, '0')}.txt`,
  );
  const args = { path: 'tree', recursive: true, limit: 10_000 };
  let expected: { path: string; entries: Array<{ name: string; path: string; type: string }>; truncated: boolean };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const tree = path.join(t.workspaceOf(projectId), 'tree');
    await mkdir(path.join(tree, 'sub'), { recursive: true });
    await Promise.all(names.map((name) => writeFile(path.join(tree, 'sub', name), 'x')));
    const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expected = {
      path: 'tree',
      entries: [
        { name: 'sub', path: 'tree/sub', type: 'directory' },
        ...sorted.map((name) => ({ name, path: `tree/sub/${name}`, type: 'file' })),
      ],
      truncated: false,
    };
    client = await mcpClientFor(t, tenant, projectId);
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
  });

  it('answers REST with the listing, as JSON of the same type as every other answer', async () => {
    const res = await callTool(t, tenant, projectId, 'list_files', args).expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: expected });
    expect(res.body.result.entries).toHaveLength(FILES + 1);
    expect(res.text).toBe(JSON.stringify(res.body));
    // What either adapter's own JSON answers carry (a project read here).
    const project = await t.http.get(`/v1/projects/${projectId}`).set(tenant.auth).expect(200);
    expect(res.headers['content-type']).toBe(project.headers['content-type']);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
  });

  it('gives sizes and times with details, as a listing walked inline does', async () => {
    const res = await callTool(t, tenant, projectId, 'list_files', { ...args, details: true }).expect(200);
    const entries = res.body.result.entries as Array<{ path: string; size: number; modified: string }>;
    expect(entries.map((e) => e.path)).toEqual(expected.entries.map((e) => e.path));
    expect(entries.filter((e) => e.path.startsWith('tree/sub/')).every((e) => e.size === 1 && !Number.isNaN(Date.parse(e.modified)))).toBe(
      true,
    );
  });

  it('replays the same answer under an Idempotency-Key', async () => {
    const send = () =>
      t.http
        .post(`/v1/projects/${projectId}/tools/list_files/invoke`)
        .set(tenant.auth)
        .set('idempotency-key', 'pooled-listing-1')
        .send({ arguments: args });
    const first = await send().expect(200);
    const again = await send().expect(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.body.result).toEqual(expected);
  });

  it('answers it inside a batch', async () => {
    const res = await t.http
      .post(`/v1/projects/${projectId}/tools/batch`)
      .set(tenant.auth)
      .send({
        calls: [
          { id: 'big', tool: 'list_files', arguments: args },
          { id: 'small', tool: 'list_files', arguments: { path: 'tree' } },
        ],
      })
      .expect(200);
    expect(res.body.results[0]).toMatchObject({ id: 'big', status: 'ok', result: expected });
    expect(res.body.results[1]).toMatchObject({ id: 'small', status: 'ok' });
  });

  it('answers MCP with the listing as structuredContent and as text: plain, streamed with progress, 2026-07-28 and in a JSON-RPC batch', async () => {
    const plain = (await client.callTool({ name: 'list_files', arguments: args })) as TextResult & { structuredContent: unknown };
    expect(plain.isError).toBeFalsy();
    expect(plain.structuredContent).toEqual(expected);
    expect(JSON.parse(textOf(plain))).toEqual(expected);

    // A progressToken makes the answer an event stream.
    const progressed: unknown[] = [];
    const streamed = (await client.callTool({ name: 'list_files', arguments: args }, CallToolResultSchema, {
      onprogress: (p) => progressed.push(p),
    })) as TextResult & {
      structuredContent: unknown;
    };
    expect(streamed.structuredContent).toEqual(expected);
    expect(JSON.parse(textOf(streamed))).toEqual(expected);

    const modern = await postModern(t, projectId, tenant.auth, 'tools/call', { name: 'list_files', arguments: args }, 'list_files');
    expect(modern.status).toBe(200);
    expect(modern.body.result.structuredContent).toEqual(expected);

    // A JSON-RPC batch (revision 2025-03-26) is the MCP SDK's server to answer.
    const port = t.port;
    const batch = await fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-03-26',
        ...tenant.auth,
      },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_files', arguments: args } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_files', arguments: { path: 'tree' } } },
      ]),
    });
    const answers = (await batch.json()) as Array<{ id: number; result: { structuredContent: unknown; content: Array<{ text: string }> } }>;
    const big = answers.find((a) => a.id === 1)!;
    expect(big.result.structuredContent).toEqual(expected);
    expect(JSON.parse(big.result.content[0].text)).toEqual(expected);
  });

  it('answers it through a toolset that confines the tool to the tree, over REST and MCP', async () => {
    await t.http
      .post(`/v1/projects/${projectId}/toolsets`)
      .set(tenant.auth)
      .send({
        slug: 'tree-lister',
        name: 'Tree lister',
        mode: 'direct',
        tools: [{ select: 'list_files', name: 'list_tree', pathPrefix: 'tree' }],
      })
      .expect(201);
    // Paths relative to the toolset's directory, as the walk there gives them.
    const entries = expected.entries.map((e) => ({ ...e, path: e.path.slice('tree/'.length) }));
    const rest = await t.http
      .post(`/v1/projects/${projectId}/toolsets/tree-lister/tools/list_tree/invoke`)
      .set(tenant.auth)
      .send({ arguments: { recursive: true, limit: 10_000 } })
      .expect(200);
    expect(rest.body).toMatchObject({ tool: 'list_tree', status: 'ok', result: { entries, truncated: false } });
    const viaToolset = await connectMcp(t, projectId, tenant.auth, '/toolsets/tree-lister/mcp');
    try {
      const result = (await viaToolset.callTool({ name: 'list_tree', arguments: { recursive: true, limit: 10_000 } })) as TextResult & {
        structuredContent: unknown;
      };
      expect(result.structuredContent).toEqual(rest.body.result);
      expect(JSON.parse(textOf(result))).toEqual(rest.body.result);
    } finally {
      await viaToolset.close();
    }
  });

  it('audits each call', async () => {
    const rows = (
      await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'list_files', limit: 100 }).set(tenant.auth).expect(200)
    ).body.items as Array<{
      status: string;
    }>;
    expect(rows.length).toBeGreaterThanOrEqual(8);
    expect(rows.every((row) => row.status === 'ok')).toBe(true);
  });

  it('still drops a listing past the result cap, naming it', async () => {
    const capped = await createTestApp({ env: { RESULT_MAX_BYTES: '1024' } });
    try {
      const owner = await capped.createTenant();
      const id = (await capped.createProject(owner)).id;
      const tree = path.join(capped.workspaceOf(id), 'tree');
      await mkdir(tree);
      await Promise.all(names.map((name) => writeFile(path.join(tree, name), 'x')));
      const res = await callTool(capped, owner, id, 'list_files', args).expect(200);
      expect(res.body.status).toBe('error');
      expect(res.body.error.message).toMatch(/1024 bytes|1,024 bytes|RESULT_MAX_BYTES/);
    } finally {
      await capped.close();
    }
  });
});

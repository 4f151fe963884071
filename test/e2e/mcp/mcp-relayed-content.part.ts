import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { ConformanceUpstream, RED_PIXEL_PNG, SILENT_WAV } from './conformance-upstream.js';
import { mcpClientFor } from './mcp-test-kit.js';

// What a tenant's upstream MCP server answers reaches an MCP client of Toolgate as that server sent it:
// images, audio and embedded resources byte for byte, the progress it reports, and a call without arguments.
describe('an upstream MCP server’s answers, relayed through a project’s MCP endpoint', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let client: Client;
  const upstream = new ConformanceUpstream();

  beforeAll(async () => {
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    const tools = [
      'test_simple_text',
      'test_image_content',
      'test_audio_content',
      'test_multiple_content_types',
      'test_tool_with_progress',
    ];
    const imported = await postSkill(t, tenant, {
      name: uniqueName('relay'),
      version: '1.0.0',
      description: 'An upstream',
      source: { type: 'mcp', url: upstream.url, tools },
    });
    expect(imported.status).toBe(201);
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
    client = await mcpClientFor(t, tenant, projectId);
  });
  afterAll(async () => {
    await client?.close();
    await t.close();
    await upstream.stop();
  });

  it('hands on image, audio and embedded-resource content unchanged, with no structuredContent the upstream did not send', async () => {
    const image = await client.callTool({ name: 'test_image_content', arguments: {} });
    expect(image.content).toEqual([{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }]);
    expect(image.structuredContent).toBeUndefined();
    expect(image.isError ?? false).toBe(false);
    const audio = await client.callTool({ name: 'test_audio_content', arguments: {} });
    expect(audio.content).toEqual([{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }]);
    const mixed = await client.callTool({ name: 'test_multiple_content_types', arguments: {} });
    expect(mixed.content).toEqual([
      { type: 'text', text: 'Three kinds of content:' },
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"kind":"mixed","items":3}' },
      },
    ]);
    // The invocation is audited like any other call, with its id in _meta.
    const id = mixed._meta?.['dev.toolgate/invocationId'] as string;
    const row = await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200);
    expect(row.body).toMatchObject({ tool: 'test_multiple_content_types', channel: 'mcp', status: 'ok' });
  });

  it('answers the same call over REST as JSON: the upstream content under `content`', async () => {
    const res = await t.http
      .post(`/v1/projects/${projectId}/tools/test_image_content/invoke`)
      .set(tenant.auth)
      .send({ arguments: {} })
      .expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }] } });
  });

  it('takes a tools/call without arguments as a call with none', async () => {
    const before = upstream.calls.filter((name) => name === 'test_simple_text').length;
    const result = await client.callTool({ name: 'test_simple_text' });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'A plain text answer from the upstream server' }] });
    expect(result.isError ?? false).toBe(false);
    expect(upstream.calls.filter((name) => name === 'test_simple_text').length).toBe(before + 1);
  });

  it('relays the progress the upstream tool reports, each notification above the last, its numbers in the message', async () => {
    const reports: Progress[] = [];
    const result = await client.request(
      { method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } },
      CallToolResultSchema,
      { onprogress: (progress) => reports.push(progress) },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'Reported progress to 100' }]);
    expect(reports.map((report) => report.message)).toEqual([
      'test_tool_with_progress: 0 of 100',
      'test_tool_with_progress: 50 of 100',
      'test_tool_with_progress: 100 of 100',
    ]);
    expect(reports.map((report) => report.progress)).toEqual([1, 2, 3]);
    expect(upstream.progressTokens.at(-1)).toBeDefined();
  });

  it('asks the upstream for no progress when the client did not', async () => {
    // Without a progressToken the answer is plain JSON: nothing was streamed.
    const port = t.port;
    const res = await fetch(`http://127.0.0.1:${port}/v1/projects/${projectId}/mcp`, {
      method: 'POST',
      headers: { ...tenant.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } }),
    });
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(((await res.json()) as { result: { content: unknown } }).result.content).toEqual([
      { type: 'text', text: 'Reported progress to 100' },
    ]);
    expect(upstream.progressTokens.at(-1)).toBeUndefined();
  });
});

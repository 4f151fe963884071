import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { connectMcp, refusedWith, type TextResult, textOf } from '../mcp/mcp-test-kit.js';
import { EventStream } from '../tools/tool-test-kit.js';
import { commandTool, installSkill, skillOf, STRING_ARG } from '../skills/skill-test-kit.js';

interface AuditRow {
  id: string;
  tool: string;
  toolset: string | null;
  exposedTool: string | null;
  status: string;
  channel: string;
  arguments: Record<string, unknown> | null;
}

const DOCS_READER = {
  slug: 'docs-reader',
  name: 'Docs reader',
  mode: 'direct',
  tools: [
    {
      select: 'read_file',
      name: 'read_doc',
      title: 'Read a document',
      description: 'Read one document of the handbook',
      pathPrefix: 'docs',
    },
    { select: 'fetch_url', fixedArguments: { method: 'GET' } },
    { select: 'list_*' },
  ],
};

describe('toolsets: curated tools served over REST and MCP', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let projectId: string;
  let workspace: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    other = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    workspace = t.workspaceOf(projectId);
    await mkdir(path.join(workspace, 'docs'));
    await writeFile(path.join(workspace, 'docs', 'intro.md'), 'hello from the docs\n');
    await writeFile(path.join(workspace, 'docs', 'guide.md'), 'one\ntwo\nthree\n');
    await writeFile(path.join(workspace, 'secret.txt'), 'not for the docs reader\n');
    await symlink('../secret.txt', path.join(workspace, 'docs', 'leak.md'));
  });
  afterAll(() => t.close());

  const base = () => `/v1/projects/${projectId}/toolsets`;
  const invoke = (slug: string, tool: string, args: unknown, auth = tenant.auth) =>
    t.http.post(`${base()}/${slug}/tools/${tool}/invoke`).set(auth).send({ arguments: args });
  const audit = async (id: string) =>
    (await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(tenant.auth).expect(200)).body as AuditRow;

  it('creates a toolset, lists and reads it, naming the tools it exposes', async () => {
    const created = await t.http.post(base()).set(tenant.auth).send(DOCS_READER).expect(201);
    expect(created.body).toMatchObject({ slug: 'docs-reader', mode: 'direct', exposedTools: ['read_doc', 'fetch_url', 'list_files'] });
    const listed = await t.http.get(base()).set(tenant.auth).expect(200);
    expect(listed.body.items.map((i: { slug: string }) => i.slug)).toEqual(['docs-reader']);
    await t.http.get(`${base()}/docs-reader`).set(tenant.auth).expect(200);
    const again = await t.http.post(base()).set(tenant.auth).send(DOCS_READER).expect(409);
    expect(again.body.error.code).toBe('toolset_slug_taken');
  });

  it('refuses renames that collide, overrides on a wildcard, a prefix on a non-file tool and fixed arguments that do not fit', async () => {
    const body = (tools: unknown[]) => ({ slug: 'bad', name: 'Bad', mode: 'direct', tools });
    const collision = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'read_file', name: 'write_file' }]))
      .expect(409);
    expect(collision.body.error).toMatchObject({ code: 'tool_name_collision' });
    expect(collision.body.error.message).toContain("'write_file' is already provided by the built-in tools");
    const twice = await t.http
      .post(base())
      .set(tenant.auth)
      .send(
        body([
          { select: 'read_file', name: 'doc' },
          { select: 'list_files', name: 'doc' },
        ]),
      )
      .expect(409);
    expect(twice.body.error.message).toContain('tools[0]');
    const wildcard = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'read_*', name: 'reader' }]))
      .expect(422);
    expect(wildcard.body.error.message).toContain("apply to a single tool, and 'read_*' selects several");
    const prefix = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'fetch_url', pathPrefix: 'docs' }]))
      .expect(422);
    expect(prefix.body.error.message).toContain('fetch_url is not one');
    const escape = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'read_file', pathPrefix: '../docs' }]))
      .expect(422);
    expect(escape.body.error.code).toBe('invalid_toolset');
    const fixed = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'fetch_url', fixedArguments: { method: 'BREW' } }]))
      .expect(422);
    expect(fixed.body.error.message).toContain('tools[0].fixedArguments does not fit fetch_url');
    const unknownParam = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'fetch_url', fixedArguments: { verb: 'GET' } }]))
      .expect(422);
    expect(unknownParam.body.error.message).toContain('verb is not a parameter of fetch_url');
    const missing = await t.http
      .post(base())
      .set(tenant.auth)
      .send(body([{ select: 'read_fil' }]))
      .expect(422);
    expect(missing.body.error.message).toContain('read_file');
  });

  it('lists the tools as the model sees them, in every format: renamed, fixed arguments gone from the schema', async () => {
    const openai = await t.http.get(`${base()}/docs-reader/tools`).query({ format: 'openai' }).set(tenant.auth).expect(200);
    const fns = openai.body.tools.map(
      (tool: {
        function: { name: string; description: string; parameters: { properties: Record<string, unknown>; required?: string[] } };
      }) => tool.function,
    );
    expect(fns.map((f: { name: string }) => f.name)).toEqual(['read_doc', 'fetch_url', 'list_files']);
    expect(fns[0].description).toBe('Read one document of the handbook');
    expect(Object.keys(fns[1].parameters.properties)).not.toContain('method');
    const mcp = await t.http.get(`${base()}/docs-reader/tools`).query({ format: 'mcp' }).set(tenant.auth).expect(200);
    expect(mcp.body.tools[0]).toMatchObject({ name: 'read_doc', title: 'Read a document' });
    const anthropic = await t.http.get(`${base()}/docs-reader/tools`).query({ format: 'anthropic' }).set(tenant.auth).expect(200);
    expect(anthropic.body.tools[0].name).toBe('read_doc');
  });

  it('confines a prefixed tool to its directory: paths relative to it, no way out by .., absolute paths or symlinks', async () => {
    const ok = await invoke('docs-reader', 'read_doc', { path: 'intro.md' }).expect(200);
    expect(ok.body).toMatchObject({ tool: 'read_doc', status: 'ok', result: { path: 'intro.md', content: 'hello from the docs\n' } });
    const row = await audit(ok.body.invocationId);
    expect(row).toMatchObject({ tool: 'read_file', toolset: 'docs-reader', exposedTool: 'read_doc', status: 'ok' });
    for (const escape of ['../secret.txt', 'leak.md', path.join(workspace, 'secret.txt')]) {
      const res = await invoke('docs-reader', 'read_doc', { path: escape });
      expect({ escape, code: res.body.error?.code }).toEqual({ escape, code: 'path_outside_workspace' });
      expect(JSON.stringify(res.body)).not.toContain('not for the docs reader');
    }
  });

  it('names the exposed tool and parameters in a refusal, and audits it with the toolset', async () => {
    const res = await invoke('docs-reader', 'read_doc', { path: 5 }).expect(422);
    expect(res.body.error.message).toMatch(/^Invalid arguments for read_doc: \/path must be string, got number/);
    expect(res.body.error.message).toContain('Usage: read_doc(path: string');
    const page = await t.http
      .get(`/v1/projects/${projectId}/invocations`)
      .query({ status: 'invalid_arguments' })
      .set(tenant.auth)
      .expect(200);
    expect(page.body.items.at(-1)).toMatchObject({ tool: 'read_file', toolset: 'docs-reader', exposedTool: 'read_doc' });
    // The model cannot set a fixed argument: it is not a parameter it was shown.
    const fixed = await invoke('docs-reader', 'fetch_url', { url: 'https://example.com/', method: 'DELETE' }).expect(422);
    expect(fixed.body.error.message).toContain('Invalid arguments for fetch_url: unknown parameter: method');
    // A tool the toolset does not offer is not there.
    const absent = await invoke('docs-reader', 'write_file', { path: 'x', content: 'y' }).expect(404);
    expect(absent.body.error.code).toBe('tool_not_found');
  });

  describe('names every tool as the toolset shows it, in what the model reads', () => {
    // A tool whose schema ties one parameter to another: a task (kind fixed by the toolset) needs a due date.
    const TRACK_SCHEMA = {
      type: 'object',
      properties: { kind: { type: 'string', enum: ['note', 'task'] }, text: { type: 'string' }, due: { type: 'string' } },
      required: ['kind', 'text'],
      additionalProperties: false,
      if: { properties: { kind: { const: 'task' } }, required: ['kind', 'text'] },
      then: { required: ['due'] },
    };
    let client: Client;
    beforeAll(async () => {
      await installSkill(t, tenant, projectId, skillOf([commandTool('track', ['printf', '%s', '{{text}}'], TRACK_SCHEMA)]));
      const tools = [
        { select: 'read_file', name: 'read_doc', pathPrefix: 'docs' },
        { select: 'track', name: 'add_task', fixedArguments: { kind: 'task' } },
        { select: 'write_file', name: 'save_doc', pathPrefix: 'docs' },
      ];
      await t.http.post(base()).set(tenant.auth).send({ slug: 'curated', name: 'Curated', mode: 'direct', tools }).expect(201);
      await t.http
        .post(base())
        .set(tenant.auth)
        .send({ slug: 'curated-search', name: 'Curated, searched', mode: 'search', tools })
        .expect(201);
      client = await connectMcp(t, projectId, tenant.auth, '/toolsets/curated/mcp');
    });
    afterAll(() => client?.close());

    it('refuses arguments the real schema rejects under the exposed name and usage, without the fixed arguments', async () => {
      const shown = 'Invalid arguments for add_task: missing required parameter: due. Usage: add_task(text: string, due?: string)';
      const rest = await invoke('curated', 'add_task', { text: 'ship it' }).expect(422);
      expect(rest.body.error).toMatchObject({
        code: 'invalid_arguments',
        message: shown,
        tool: 'add_task',
        usage: 'add_task(text: string, due?: string)',
      });
      const searched = await invoke('curated-search', 'call_tool', { name: 'add_task', arguments: { text: 'ship it' } }).expect(422);
      expect(searched.body.error.message).toBe(shown);
      const mcp = (await client.callTool({ name: 'add_task', arguments: { text: 'ship it' } })) as TextResult;
      expect(mcp.isError).toBe(true);
      expect(textOf(mcp)).toBe(shown);
      for (const text of [JSON.stringify(rest.body), JSON.stringify(searched.body), JSON.stringify(mcp)]) {
        expect(text).not.toMatch(/\btrack\b|kind/);
      }
      // The audit row still names the real tool beside the one the model called.
      const page = await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'track' }).set(tenant.auth).expect(200);
      expect(page.body.items.at(-1)).toMatchObject({
        tool: 'track',
        toolset: 'curated',
        exposedTool: 'add_task',
        status: 'invalid_arguments',
      });
    });

    it('answers a run under the exposed name, with hints that name the exposed tools', async () => {
      const rest = await invoke('curated', 'read_doc', { path: 'guide.md', limit: 1 }).expect(200);
      expect(rest.body).toMatchObject({ tool: 'read_doc', status: 'ok', result: { content: 'one\n', truncated: true, nextOffset: 2 } });
      expect(rest.body.result.hint).toBe('Showing lines 1-1 of 3; call read_doc again with offset: 2 to read on');
      const mcp = (await client.callTool({ name: 'read_doc', arguments: { path: 'guide.md', limit: 1 } })) as TextResult;
      expect(textOf(mcp)).toContain('call read_doc again with offset: 2');
      expect(JSON.stringify(mcp)).not.toContain('read_file');
      expect(await audit(rest.body.invocationId)).toMatchObject({ tool: 'read_file', toolset: 'curated', exposedTool: 'read_doc' });
      // A file named like a tool is data, not a name to change.
      await writeFile(path.join(workspace, 'docs', 'read_file.md'), 'a\nb\n');
      const named = await invoke('curated', 'read_doc', { path: 'read_file.md', limit: 1 }).expect(200);
      expect(named.body.result.path).toBe('read_file.md');
    });

    it('suggests only the names the toolset shows for a tool it does not have', async () => {
      const rest = await invoke('curated', 'read_dco', { path: 'guide.md' }).expect(404);
      expect(rest.body.error.message).toBe("No tool named 'read_dco' in this toolset. Did you mean 'read_doc'?");
      const real = await invoke('curated', 'read_file', { path: 'guide.md' }).expect(404);
      expect(real.body.error.details.suggestions).not.toContain('read_file');
      expect(real.body.error.message).toContain('in this toolset');
      await expect(client.callTool({ name: 'read_dco', arguments: {} })).rejects.toThrow(
        "No tool named 'read_dco' in this toolset. Did you mean 'read_doc'?",
      );
    });

    it('tells the model of a parked call by the exposed name, over REST and MCP', async () => {
      await t.http
        .patch(`/v1/projects/${projectId}`)
        .set(tenant.auth)
        .send({ approvalRequired: ['@writes'] })
        .expect(200);
      try {
        const rest = await invoke('curated', 'save_doc', { path: 'draft.md', content: 'draft' }).expect(202);
        expect(rest.body).toMatchObject({ tool: 'save_doc', status: 'pending_approval' });
        const mcp = (await client.callTool({ name: 'save_doc', arguments: { path: 'draft.md', content: 'draft' } })) as TextResult;
        expect(textOf(mcp)).toMatch(/^This call of save_doc awaits approval/);
        expect(JSON.stringify(mcp)).not.toContain('write_file');
        expect(await audit(rest.body.invocationId)).toMatchObject({
          tool: 'write_file',
          exposedTool: 'save_doc',
          status: 'pending_approval',
        });
      } finally {
        await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ approvalRequired: [] }).expect(200);
      }
    });

    it("describes a confined tool's paths as relative to its directory, not to the workspace", async () => {
      const listed = await t.http.get(`${base()}/curated/tools`).set(tenant.auth).expect(200);
      const readDoc = listed.body.tools.find((tool: { name: string }) => tool.name === 'read_doc');
      expect(readDoc.inputSchema.properties.path.description).toBe(
        "Path relative to the tool's root directory (an absolute path must lie inside it)",
      );
      expect(JSON.stringify(listed.body.tools)).not.toContain('relative to the project workspace');
    });
  });

  describe('a call parked through a toolset', () => {
    const FILING = {
      slug: 'filing',
      name: 'Filing',
      mode: 'direct',
      tools: [
        { select: 'write_file', name: 'file_note', pathPrefix: 'docs/notes', fixedArguments: { createDirs: true } },
        { select: 'move_file', name: 'refile', pathPrefix: 'docs' },
      ],
    };
    let events: EventStream;
    beforeAll(async () => {
      await mkdir(path.join(workspace, 'docs', 'notes'));
      await t.http.post(base()).set(tenant.auth).send(FILING).expect(201);
      await t.http
        .patch(`/v1/projects/${projectId}`)
        .set(tenant.auth)
        .send({ approvalRequired: ['@writes'] })
        .expect(200);
      events = await EventStream.open(t.port, projectId, tenant);
    });
    afterAll(async () => {
      events?.close();
      await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ approvalRequired: [] }).expect(200);
    });
    const invocation = async (id: string, auth = tenant.auth) =>
      (await t.http.get(`/v1/projects/${projectId}/invocations/${id}`).set(auth).expect(200)).body;

    it('shows the approver the arguments that will run: paths in the workspace, fixed arguments included', async () => {
      const parked = await invoke('filing', 'file_note', { path: 'today.md', content: 'call the printer' }).expect(202);
      const id = parked.body.invocationId as string;
      const willRun = { path: 'docs/notes/today.md', content: 'call the printer', createDirs: true };
      for (const auth of [tenant.auth, tenant.deciderAuth]) {
        expect(await invocation(id, auth)).toMatchObject({
          tool: 'write_file',
          toolset: 'filing',
          exposedTool: 'file_note',
          approval: { status: 'pending', pathPrefix: 'docs/notes', pendingArguments: willRun },
        });
      }

      // Approved, it runs there, and answers as the call was made.
      const approved = await t.http
        .post(`/v1/projects/${projectId}/invocations/${id}/approve`)
        .set(tenant.deciderAuth)
        .send({})
        .expect(200);
      expect(approved.body.outcome).toMatchObject({ tool: 'file_note', status: 'ok', result: { path: 'today.md', created: true } });
      expect(await readFile(path.join(workspace, 'docs', 'notes', 'today.md'), 'utf8')).toBe('call the printer');
      const result = await events.next((e) => e.event === 'tool.result' && e.data.invocationId === id);
      expect(result.data).toMatchObject({ tool: 'write_file', toolset: 'filing', exposedTool: 'file_note', status: 'ok' });
      const after = await invocation(id);
      expect(after).toMatchObject({
        tool: 'write_file',
        toolset: 'filing',
        exposedTool: 'file_note',
        status: 'ok',
        approval: { status: 'approved', pathPrefix: 'docs/notes' },
      });
      expect(after.approval.pendingArguments).toBeUndefined();
    });

    it('shows a path that climbs out of the directory as asked, and a denial answers under the exposed name', async () => {
      const parked = await invoke('filing', 'refile', { source: 'intro.md', destination: '../escaped.md' }).expect(202);
      const id = parked.body.invocationId as string;
      expect((await invocation(id)).approval.pendingArguments).toEqual({ source: 'docs/intro.md', destination: 'docs/../escaped.md' });
      const denied = await t.http
        .post(`/v1/projects/${projectId}/invocations/${id}/deny`)
        .set(tenant.deciderAuth)
        .send({ reason: 'leaves the docs' })
        .expect(200);
      expect(denied.body.outcome).toMatchObject({ tool: 'refile', status: 'denied' });
      const event = await events.next((e) => e.event === 'tool.denied' && e.data.invocationId === id);
      expect(event.data).toMatchObject({ tool: 'move_file', toolset: 'filing', exposedTool: 'refile' });
    });

    it('gives a call not made through a toolset no directory', async () => {
      const parked = await t.http
        .post(`/v1/projects/${projectId}/tools/write_file/invoke`)
        .set(tenant.auth)
        .send({ arguments: { path: 'plain.md', content: 'x' } })
        .expect(202);
      expect((await invocation(parked.body.invocationId as string)).approval).toMatchObject({
        pathPrefix: null,
        pendingArguments: { path: 'plain.md', content: 'x' },
      });
    });
  });

  describe('in search mode', () => {
    beforeAll(async () => {
      await t.http
        .post(base())
        .set(tenant.auth)
        .send({ slug: 'everything', name: 'Everything', mode: 'search', tools: [{ select: '@all' }] })
        .expect(201);
    });

    it('shows the model two tools, search_tools and call_tool', async () => {
      const res = await t.http.get(`${base()}/everything/tools`).set(tenant.auth).expect(200);
      expect(res.body.tools.map((tool: { name: string }) => tool.name)).toEqual(['search_tools', 'call_tool']);
    });

    it('finds tools by what they do, with their schemas', async () => {
      const res = await invoke('everything', 'search_tools', { query: 'move or rename a file', limit: 3 }).expect(200);
      const found = res.body.result.tools as Array<{ name: string; inputSchema: object }>;
      expect(found.length).toBeLessThanOrEqual(3);
      expect(found[0].name).toBe('move_file');
      expect(found[0].inputSchema).toMatchObject({ type: 'object' });
      const fetch = await invoke('everything', 'search_tools', { query: 'http request to a url' }).expect(200);
      expect(fetch.body.result.tools[0].name).toBe('fetch_url');
    });

    it('runs call_tool as a direct call of the tool it names: validated, audited and refused alike', async () => {
      const ok = await invoke('everything', 'call_tool', { name: 'write_file', arguments: { path: 'notes.txt', content: 'hi' } }).expect(
        200,
      );
      expect(ok.body).toMatchObject({ tool: 'write_file', status: 'ok' });
      expect(await audit(ok.body.invocationId)).toMatchObject({ tool: 'write_file', toolset: 'everything', exposedTool: 'write_file' });
      const invalid = await invoke('everything', 'call_tool', { name: 'write_file', arguments: { path: 'x' } }).expect(422);
      expect(invalid.body.error.message).toContain('Invalid arguments for write_file: missing required parameter: content');
      const unknown = await invoke('everything', 'call_tool', { name: 'wrte_file', arguments: {} }).expect(404);
      expect(unknown.body.error).toMatchObject({ code: 'tool_not_found' });
      expect(unknown.body.error.message).toContain('write_file');
      const malformed = await invoke('everything', 'call_tool', { arguments: {} }).expect(422);
      expect(malformed.body.error.message).toContain('Invalid arguments for call_tool');
      const nested = await invoke('everything', 'call_tool', { name: 'call_tool', arguments: { name: 'write_file' } }).expect(404);
      expect(nested.body.error.code).toBe('tool_not_found');
    });

    it("answers call_tool naming an unknown tool over MCP as call_tool's error result with the closest names; an unknown tools/call name stays -32602", async () => {
      const client = await connectMcp(t, projectId, tenant.auth, '/toolsets/everything/mcp');
      try {
        const result = (await client.callTool({ name: 'call_tool', arguments: { name: 'wrte_file', arguments: {} } })) as TextResult;
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(/^No tool named 'wrte_file' in this toolset\. Did you mean 'write_file'/);
        expect(result.structuredContent).toMatchObject({
          status: 'refused',
          error: { code: 'tool_not_found', details: { suggestions: expect.arrayContaining(['write_file']) } },
        });
        expect(await refusedWith(client.callTool({ name: 'wrte_file', arguments: {} }))).toEqual({
          code: -32602,
          message: expect.stringContaining("Did you mean 'write_file'"),
        });
      } finally {
        await client.close();
      }
    });

    it('relays the closest names of an unknown tool named in call_tool to the model through the OpenAI Agents SDK', async () => {
      const { MCPServerStreamableHttp, RunContext, getAllMcpTools, invokeFunctionTool } = await import('@openai/agents-core');
      const server = new MCPServerStreamableHttp({
        name: 'toolgate',
        url: `http://127.0.0.1:${t.port}${base()}/everything/mcp`,
        requestInit: { headers: tenant.auth },
      });
      await server.connect();
      try {
        const callTool = (await getAllMcpTools({ mcpServers: [server] })).find((tool) => tool.name === 'call_tool');
        if (callTool?.type !== 'function') throw new Error('call_tool is not among the MCP tools the SDK took');
        const output = await invokeFunctionTool({
          tool: callTool,
          runContext: new RunContext(),
          input: JSON.stringify({ name: 'wrte_file', arguments: {} }),
        });
        expect(JSON.stringify(output)).toContain("No tool named 'wrte_file' in this toolset. Did you mean 'write_file'");
      } finally {
        await server.close();
      }
    });

    it('keeps a call_tool under an Idempotency-Key like a direct call: run once, replayed after', async () => {
      const body = { arguments: { name: 'write_file', arguments: { path: 'keyed-once.txt', content: 'once' } } };
      const send = () =>
        t.http.post(`${base()}/everything/tools/call_tool/invoke`).set(tenant.auth).set('Idempotency-Key', 'call-tool-1').send(body);
      const first = await send().expect(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      await writeFile(path.join(workspace, 'keyed-once.txt'), 'changed by hand');
      const again = await send().expect(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.invocationId).toBe(first.body.invocationId);
      expect(await readFile(path.join(workspace, 'keyed-once.txt'), 'utf8')).toBe('changed by hand');
    });

    it('parks a call_tool of a tool that needs approval, as a direct call would be', async () => {
      await t.http
        .patch(`/v1/projects/${projectId}`)
        .set(tenant.auth)
        .send({ approvalRequired: ['@writes'] })
        .expect(200);
      try {
        const parked = await invoke('everything', 'call_tool', { name: 'delete_file', arguments: { path: 'notes.txt' } }).expect(202);
        expect(parked.body).toMatchObject({ tool: 'delete_file', status: 'pending_approval' });
        expect(await audit(parked.body.invocationId)).toMatchObject({
          tool: 'delete_file',
          toolset: 'everything',
          status: 'pending_approval',
        });
        // search_tools only reads the toolset's definitions: never parked, even under @all.
        await t.http
          .patch(`/v1/projects/${projectId}`)
          .set(tenant.auth)
          .send({ approvalRequired: ['@all'] })
          .expect(200);
        await invoke('everything', 'search_tools', { query: 'delete' }).expect(200);
      } finally {
        await t.http.patch(`/v1/projects/${projectId}`).set(tenant.auth).send({ approvalRequired: [] }).expect(200);
      }
    });

    it('rebuilds its index when the project gains a skill and when the toolset changes', async () => {
      await installSkill(
        t,
        tenant,
        projectId,
        skillOf([
          commandTool('translate_text', ['printf', '%s', '{{text}}'], STRING_ARG('text'), { description: 'Translate a text into French' }),
        ]),
      );
      const found = await invoke('everything', 'search_tools', { query: 'french translation' }).expect(200);
      expect(found.body.result.tools[0].name).toBe('translate_text');
      await t.http
        .put(`${base()}/everything`)
        .set(tenant.auth)
        .send({ slug: 'everything', name: 'Files', mode: 'search', tools: [{ select: 'read_*' }] })
        .expect(200);
      const after = await invoke('everything', 'search_tools', { query: 'french translation' }).expect(200);
      expect(after.body.result.tools.map((tool: { name: string }) => tool.name)).not.toContain('translate_text');
    });
  });

  describe('over MCP', () => {
    let client: Client;
    beforeAll(async () => {
      client = await connectMcp(t, projectId, tenant.auth, `/toolsets/docs-reader/mcp`);
    });
    afterAll(() => client?.close());

    it('lists the toolset and calls its tools by their exposed names, audited with channel mcp', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['read_doc', 'fetch_url', 'list_files']);
      const result = (await client.callTool({ name: 'read_doc', arguments: { path: 'intro.md' } })) as TextResult;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('hello from the docs');
      const refused = (await client.callTool({ name: 'read_doc', arguments: { path: '../secret.txt' } })) as TextResult;
      expect(refused.isError).toBe(true);
      const page = await t.http.get(`/v1/projects/${projectId}/invocations`).query({ tool: 'read_file' }).set(tenant.auth).expect(200);
      expect(page.body.items.at(-1)).toMatchObject({ channel: 'mcp', toolset: 'docs-reader', exposedTool: 'read_doc' });
    });
  });

  describe('a key bound to a toolset', () => {
    let bound: { Authorization: string };
    beforeAll(async () => {
      const res = await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ name: 'docs-agent', role: 'agent', projectIds: [projectId], toolset: 'docs-reader' })
        .expect(201);
      expect(res.body.toolset).toBe('docs-reader');
      bound = { Authorization: `Bearer ${res.body.key as string}` };
    });

    it('uses its toolset, and no other route', async () => {
      await t.http.get(`${base()}/docs-reader/tools`).set(bound).expect(200);
      await invoke('docs-reader', 'read_doc', { path: 'intro.md' }, bound).expect(200);
      const project = await t.http
        .post(`/v1/projects/${projectId}/tools/read_file/invoke`)
        .set(bound)
        .send({ arguments: { path: 'secret.txt' } })
        .expect(403);
      expect(project.body.error.code).toBe('forbidden_for_toolset_key');
      expect((await t.http.get(`/v1/projects/${projectId}/tools`).set(bound).expect(403)).body.error.code).toBe(
        'forbidden_for_toolset_key',
      );
      expect((await t.http.post(`/v1/projects/${projectId}/mcp`).set(bound).send({}).expect(403)).body.error.code).toBe(
        'forbidden_for_toolset_key',
      );
      const otherSet = await invoke('everything', 'call_tool', { name: 'read_file', arguments: { path: 'secret.txt' } }, bound).expect(404);
      expect(otherSet.body.error.code).toBe('toolset_not_found');
    });

    it('is refused for a toolset that does not exist, and for a role other than agent', async () => {
      const missing = await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ role: 'agent', projectIds: [projectId], toolset: 'nope' })
        .expect(404);
      expect(missing.body.error.code).toBe('toolset_not_found');
      await t.http
        .post('/v1/api-keys')
        .set(tenant.auth)
        .send({ role: 'approver', projectIds: [projectId], toolset: 'docs-reader' })
        .expect(400);
    });
  });

  it("answers another tenant's toolsets like missing ones, on every route", async () => {
    const missing = await t.http.get(`${base()}/no-such-set`).set(tenant.auth).expect(404);
    const foreign = await t.http.get(`${base()}/docs-reader`).set(other.auth).expect(404);
    expect(foreign.body.error.code).toBe('project_not_found');
    expect(missing.body.error.code).toBe('toolset_not_found');
    await t.http.get(`${base()}/docs-reader/tools`).set(other.auth).expect(404);
    await t.http
      .post(`${base()}/docs-reader/tools/read_doc/invoke`)
      .set(other.auth)
      .send({ arguments: { path: 'intro.md' } })
      .expect(404);
    await t.http.delete(`${base()}/docs-reader`).set(other.auth).expect(404);
    await t.http.put(`${base()}/docs-reader`).set(other.auth).send(DOCS_READER).expect(404);
  });

  it('deletes a toolset: its routes answer toolset_not_found at once, and the keys bound to it are revoked', async () => {
    await t.http
      .post(base())
      .set(tenant.auth)
      .send({ ...DOCS_READER, slug: 'short-lived' })
      .expect(201);
    const made = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [projectId], toolset: 'short-lived' })
      .expect(201);
    const bound = { Authorization: `Bearer ${made.body.key as string}` };
    await t.http.get(`${base()}/short-lived/tools`).set(bound).expect(200);
    await t.http.delete(`${base()}/short-lived`).set(tenant.auth).expect(204);
    const gone = await t.http.get(`${base()}/short-lived/tools`).set(tenant.auth).expect(404);
    expect(gone.body.error.code).toBe('toolset_not_found');
    // A wider toolset made later under the same slug gives the old key nothing.
    await t.http
      .post(base())
      .set(tenant.auth)
      .send({ slug: 'short-lived', name: 'Everything', mode: 'direct', tools: [{ select: '@all' }] })
      .expect(201);
    const refused = await t.http
      .post(`${base()}/short-lived/tools/read_file/invoke`)
      .set(bound)
      .send({ arguments: { path: 'secret.txt' } });
    expect(refused.status).toBe(401);
    const keys = (await t.http.get('/v1/api-keys').set(tenant.auth).expect(200)).body.items as Array<{ id: string }>;
    expect(keys.map((k) => k.id)).not.toContain(made.body.id);
  });

  it('renames a toolset: the keys bound to the old slug are revoked, so a toolset made again under it gives them nothing', async () => {
    await t.http
      .post(base())
      .set(tenant.auth)
      .send({ ...DOCS_READER, slug: 'renamed-away' })
      .expect(201);
    const made = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [projectId], toolset: 'renamed-away' })
      .expect(201);
    const bound = { Authorization: `Bearer ${made.body.key as string}` };
    await t.http.get(`${base()}/renamed-away/tools`).set(bound).expect(200);
    await t.http
      .put(`${base()}/renamed-away`)
      .set(tenant.auth)
      .send({ ...DOCS_READER, slug: 'renamed-to' })
      .expect(200);
    await t.http
      .post(base())
      .set(tenant.auth)
      .send({ slug: 'renamed-away', name: 'Everything', mode: 'direct', tools: [{ select: '@all' }] })
      .expect(201);
    expect(
      (
        await t.http
          .post(`${base()}/renamed-away/tools/read_file/invoke`)
          .set(bound)
          .send({ arguments: { path: 'secret.txt' } })
      ).status,
    ).toBe(401);
    expect((await t.http.get(`${base()}/renamed-to/tools`).set(bound)).status).toBe(401);
    // The same body under its own slug is no rename: a key bound to it keeps working.
    const kept = await t.http
      .post('/v1/api-keys')
      .set(tenant.auth)
      .send({ role: 'agent', projectIds: [projectId], toolset: 'renamed-to' })
      .expect(201);
    await t.http
      .put(`${base()}/renamed-to`)
      .set(tenant.auth)
      .send({ ...DOCS_READER, slug: 'renamed-to' })
      .expect(200);
    await t.http
      .get(`${base()}/renamed-to/tools`)
      .set({ Authorization: `Bearer ${kept.body.key as string}` })
      .expect(200);
    await t.http.delete(`${base()}/renamed-away`).set(tenant.auth).expect(204);
    await t.http.delete(`${base()}/renamed-to`).set(tenant.auth).expect(204);
  });

  it('holds a project to 50 toolsets: the next answers 403 too_many_toolsets, and one deleted makes room', async () => {
    const own = (await t.createProject(tenant)).id;
    const at = `/v1/projects/${own}/toolsets`;
    const toolset = (i: number) => ({ slug: `set-${i}`, name: `Set ${i}`, mode: 'direct', tools: [{ select: 'read_file' }] });
    for (let i = 0; i < 50; i++) await t.http.post(at).set(tenant.auth).send(toolset(i)).expect(201);
    const refused = await t.http.post(at).set(tenant.auth).send(toolset(50)).expect(403);
    expect(refused.body.error).toMatchObject({ code: 'too_many_toolsets', details: { limit: 50 } });
    expect((await t.http.get(at).set(tenant.auth).expect(200)).body.items).toHaveLength(50);
    // Another project of the tenant has its own 50.
    await t.http.post(base()).set(tenant.auth).send(toolset(50)).expect(201);
    await t.http.delete(`${base()}/set-50`).set(tenant.auth).expect(204);
    await t.http.delete(`${at}/set-0`).set(tenant.auth).expect(204);
    await t.http.post(at).set(tenant.auth).send(toolset(50)).expect(201);
  }, 60_000);

  // 50 per project alone let one tenant keep 100 projects x 50 toolsets of about 1 MiB each: 5 GB of the
  // database. A tenant's toolsets in all its projects are held to its maxToolsets, each to 256 KiB.
  it('holds a tenant to its maxToolsets across its projects, and each toolset to 256 KiB as stored', async () => {
    const owner = await t.createTenant();
    await t.setBudgets(owner, { maxToolsets: 3 });
    const projects = [(await t.createProject(owner)).id, (await t.createProject(owner)).id];
    const toolset = (i: number) => ({ slug: `set-${i}`, name: `Set ${i}`, mode: 'direct', tools: [{ select: 'read_file' }] });
    // Four at once across two projects: the count is taken under the tenant's lock, so three are made.
    const made = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        t.http
          .post(`/v1/projects/${projects[i % 2]}/toolsets`)
          .set(owner.auth)
          .send(toolset(i))
          .then((r) => r),
      ),
    );
    expect(made.map((r) => r.status).sort()).toEqual([201, 201, 201, 403]);
    const refused = made.find((r) => r.status === 403)!;
    expect(refused.body.error).toMatchObject({
      code: 'tenant_budget_exceeded',
      details: { budget: 'maxToolsets', limit: 3, inUse: 3, asked: 1 },
    });
    expect(refused.body.error.message).toMatch(/maxToolsets budget is 3/);
    const seen = (await t.http.get('/v1/usage').set(owner.auth).expect(200)).body;
    expect(seen.budgets.maxToolsets).toBe(3);
    expect(seen.usage.maxToolsets).toBe(3);
    // Another tenant is not counted with it.
    await t.http.post(base()).set(tenant.auth).send(toolset(99)).expect(201);
    await t.http.delete(`${base()}/set-99`).set(tenant.auth).expect(204);
    // One deleted makes room, in either project.
    const [first] = made.filter((r) => r.status === 201).map((r) => r.body as { projectId: string; slug: string });
    await t.http.delete(`/v1/projects/${first.projectId}/toolsets/${first.slug}`).set(owner.auth).expect(204);
    await t.http.post(`/v1/projects/${projects[1]}/toolsets`).set(owner.auth).send(toolset(9)).expect(201);

    // Large: 100 entries of 3,000-character descriptions is about 300 KiB; on POST and on PUT alike.
    const large = {
      slug: 'large',
      name: 'Large',
      mode: 'direct',
      tools: Array.from({ length: 100 }, (_, i) => ({ select: 'read_file', name: `read_${i}`, description: 'd'.repeat(3000) })),
    };
    const tooLarge = await t.http.post(base()).set(tenant.auth).send(large).expect(413);
    expect(tooLarge.body.error).toMatchObject({ code: 'toolset_too_large', details: { limit: 256 * 1024 } });
    expect(tooLarge.body.error.details.bytes).toBeGreaterThan(256 * 1024);
    expect(tooLarge.body.error.message).toMatch(/Shorten its descriptions/);
    await t.http.post(base()).set(tenant.auth).send(toolset(98)).expect(201);
    await t.http
      .put(`${base()}/set-98`)
      .set(tenant.auth)
      .send({ ...large, slug: 'set-98' })
      .expect(413);
    await t.http.delete(`${base()}/set-98`).set(tenant.auth).expect(204);
  }, 60_000);
});

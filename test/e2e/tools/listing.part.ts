import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';

const BUILTINS = [
  'read_file',
  'write_file',
  'list_files',
  'delete_file',
  'shell_exec',
  'fetch_url',
  'edit_file',
  'search_files',
  'move_file',
  'read_multiple_files',
];

interface NativeTool {
  name: string;
  title: string;
  description: string;
  outputSchema: Record<string, unknown>;
  inputSchema: { type: string; properties: Record<string, unknown>; required?: string[]; additionalProperties: unknown };
  annotations: { readOnly: boolean; destructive: boolean; idempotent: boolean; openWorld: boolean };
  timeoutMs: number;
  source: string;
}

// One app for both parts: an app and its database cost a few seconds of a test file's time to start.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('tool listing', () => {
  let tenant: TestTenant;
  let projectId: string;
  let native: NativeTool[];

  const list = (format?: string) =>
    t.http
      .get(`/v1/projects/${projectId}/tools`)
      .query(format ? { format } : {})
      .set(tenant.auth);
  const getTool = (name: string, format?: string) =>
    t.http
      .get(`/v1/projects/${projectId}/tools/${name}`)
      .query(format ? { format } : {})
      .set(tenant.auth);

  beforeAll(async () => {
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    native = (await list().expect(200)).body.tools as NativeTool[];
  });

  it('lists every built-in tool with its schema, annotations, timeout and source', () => {
    expect(native.map((tool) => tool.name).sort()).toEqual([...BUILTINS].sort());
    for (const tool of native) {
      expect(tool).toEqual({
        name: tool.name,
        title: expect.any(String),
        description: expect.any(String),
        inputSchema: expect.objectContaining({ type: 'object', properties: expect.any(Object) }),
        outputSchema: expect.objectContaining({ type: 'object', properties: expect.any(Object), required: expect.any(Array) }),
        annotations: {
          readOnly: expect.any(Boolean),
          destructive: expect.any(Boolean),
          idempotent: expect.any(Boolean),
          openWorld: expect.any(Boolean),
        },
        timeoutMs: expect.any(Number),
        source: 'builtin',
      });
      expect(tool.description.length).toBeGreaterThan(20);
      expect(tool.timeoutMs).toBeGreaterThan(0);
    }
    const byName = Object.fromEntries(native.map((tool) => [tool.name, tool]));
    expect(byName.read_file.annotations).toEqual({ readOnly: true, destructive: false, idempotent: true, openWorld: false });
    expect(byName.delete_file.annotations).toMatchObject({ readOnly: false, destructive: true });
    // It sends POST, PUT and DELETE too: clients auto-approve what says it is read-only.
    expect(byName.fetch_url.annotations).toEqual({ readOnly: false, destructive: true, idempotent: false, openWorld: true });
    expect(byName.shell_exec.annotations).toMatchObject({ readOnly: false, openWorld: true });
    // A read-only tool is never destructive.
    for (const tool of native.filter((tool) => tool.annotations.readOnly))
      expect({ name: tool.name, destructive: tool.annotations.destructive }).toEqual({ name: tool.name, destructive: false });
    expect(byName.read_file.inputSchema.required).toEqual(['path']);
  });

  it('closes every built-in schema with additionalProperties: false', () => {
    for (const tool of native) {
      expect({ tool: tool.name, additionalProperties: tool.inputSchema.additionalProperties }).toEqual({
        tool: tool.name,
        additionalProperties: false,
      });
    }
  });

  it('answers the OpenAI shape: type function with name, description, parameters and strict', async () => {
    const tools = (await list('openai').expect(200)).body.tools as Array<{ function: { strict: unknown } }>;
    expect(tools).toHaveLength(native.length);
    for (const [i, tool] of tools.entries()) {
      const { name, description, inputSchema } = native[i];
      expect(tool).toEqual({ type: 'function', function: { name, description, parameters: inputSchema, strict: expect.any(Boolean) } });
      // Strict mode needs every parameter required; each built-in has optional ones, so none may claim it.
      const allRequired = Object.keys(inputSchema.properties).every((p) => (inputSchema.required ?? []).includes(p));
      expect({ name, strict: tool.function.strict }).toEqual({ name, strict: false });
      expect(allRequired).toBe(false);
    }
  });

  it('answers the Anthropic shape: name, description and input_schema', async () => {
    const tools = (await list('anthropic').expect(200)).body.tools;
    expect(tools).toEqual(native.map(({ name, description, inputSchema }) => ({ name, description, input_schema: inputSchema })));
  });

  it('answers the MCP shape with the MCP hint names for the annotations', async () => {
    const tools = (await list('mcp').expect(200)).body.tools;
    expect(tools).toEqual(
      native.map(({ name, title, description, inputSchema, outputSchema, annotations }) => ({
        name,
        title,
        description,
        inputSchema,
        outputSchema,
        annotations: {
          readOnlyHint: annotations.readOnly,
          destructiveHint: annotations.destructive,
          idempotentHint: annotations.idempotent,
          openWorldHint: annotations.openWorld,
        },
      })),
    );
  });

  it('answers one tool in each format, the same as its entry in the list', async () => {
    for (const format of ['native', 'openai', 'anthropic', 'mcp']) {
      const listed = (await list(format).expect(200)).body.tools as unknown[];
      for (const [i, name] of native.map((tool) => tool.name).entries()) {
        const one = await getTool(name, format).expect(200);
        expect({ format, name, body: one.body }).toEqual({ format, name, body: listed[i] });
      }
    }
    expect((await getTool('shell_exec').expect(200)).body).toEqual(native.find((tool) => tool.name === 'shell_exec'));
  });

  it('refuses an unknown format with 400 naming the accepted ones, on the list and on one tool', async () => {
    for (const res of [await list('gemini').expect(400), await getTool('read_file', 'gemini').expect(400)]) {
      expect(res.body).toEqual({
        error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
        requestId: expect.any(String),
      });
      expect(res.body.error.message).toMatch(/format/);
      expect(res.body.error.message).toMatch(/openai/);
      expect(res.body.error.message).toMatch(/anthropic/);
      expect(res.body.error.message).toMatch(/mcp/);
    }
  });

  it('answers an unknown tool name with 404 tool_not_found suggesting the closest tool', async () => {
    const res = await getTool('reed_file').expect(404);
    expect(res.body.error.code).toBe('tool_not_found');
    expect(res.body.error.message).toContain("'read_file'");
    expect(res.body.error.details.suggestions[0]).toBe('read_file');
  });

  it('answers 404 project_not_found for a project that does not exist, and 401 without a key', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const res = await t.http.get(`/v1/projects/${missing}/tools`).set(tenant.auth).expect(404);
    expect(res.body.error.code).toBe('project_not_found');
    await t.http.get(`/v1/projects/${projectId}/tools`).expect(401);
  });
});

interface OpenApiSchema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
}
interface OpenApiMedia {
  schema: OpenApiSchema;
}
interface OpenApiOperation {
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; schema: OpenApiSchema }>;
  requestBody?: { content: Record<string, OpenApiMedia> };
  responses: Record<string, { content?: Record<string, OpenApiMedia>; headers?: Record<string, unknown> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, OpenApiSchema> };
}

describe('the OpenAPI document for tools', () => {
  let doc: OpenApiDocument;

  // Follows $ref pointers into components, so assertions read the schema a client generator sees.
  const resolve = (schema: OpenApiSchema | undefined): OpenApiSchema => {
    if (!schema) throw new Error('schema missing');
    return schema.$ref ? resolve(doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]) : schema;
  };
  const jsonBody = (content: Record<string, OpenApiMedia> | undefined) => resolve(content?.['application/json']?.schema);
  const properties = (schema: OpenApiSchema) => schema.properties ?? {};
  const operation = (route: string, method: string) => doc.paths[route][method];

  beforeAll(async () => {
    doc = (await t.http.get('/openapi.json').expect(200)).body as OpenApiDocument;
  });

  it('lists the tool, invocation and event routes, each secured', () => {
    const routes = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).map(([m, op]) => ({ route: `${m.toUpperCase()} ${p}`, secured: (op.security ?? []).length > 0 })),
    );
    expect(routes).toEqual(
      expect.arrayContaining(
        [
          'GET /v1/projects/{projectId}/tools',
          'GET /v1/projects/{projectId}/tools/{toolName}',
          'POST /v1/projects/{projectId}/tools/{toolName}/invoke',
          'GET /v1/projects/{projectId}/events',
          'GET /v1/projects/{projectId}/invocations',
          'GET /v1/projects/{projectId}/invocations/{invocationId}',
        ].map((route) => ({ route, secured: true })),
      ),
    );
    const format = operation('/v1/projects/{projectId}/tools', 'get').parameters?.find((p) => p.name === 'format');
    expect(format?.schema.enum).toEqual(['native', 'openai', 'openai-responses', 'anthropic', 'mcp']);
  });

  it('describes the listing body, its ETag, If-None-Match and the 304 answer', () => {
    const listing = operation('/v1/projects/{projectId}/tools', 'get');
    // One listing shape per format, told apart by `format`: the native tool, OpenAI's (Chat Completions and
    // Responses), Anthropic's and MCP's.
    const body = listing.responses['200'].content?.['application/json']?.schema as {
      oneOf: OpenApiSchema[];
      discriminator: { propertyName: string; mapping: Record<string, string> };
    };
    expect(body.discriminator.propertyName).toBe('format');
    const lists = body.oneOf.map((branch) => resolve(branch));
    expect(lists.map((list) => [properties(list).format.enum, properties(list).tools.items?.$ref])).toEqual(
      [
        ['native', 'ToolDto'],
        ['openai', 'OpenAiToolDto'],
        ['openai-responses', 'OpenAiResponsesToolDto'],
        ['anthropic', 'AnthropicToolDto'],
        ['mcp', 'McpToolDto'],
      ].map(([format, name]) => [[format], `#/components/schemas/${name}`]),
    );
    expect(Object.keys(listing.responses['200'].headers ?? {})).toEqual(['ETag']);
    expect(listing.responses['304']).toBeDefined();
    expect(listing.parameters?.find((p) => p.name === 'If-None-Match')?.in).toBe('header');
  });

  it('describes the invocation result and the 422 invalid-arguments body with its issues and usage', () => {
    const invoke = operation('/v1/projects/{projectId}/tools/{toolName}/invoke', 'post');
    expect(Object.keys(invoke.responses)).toEqual(expect.arrayContaining(['200', '400', '403', '404', '422']));

    const result = jsonBody(invoke.responses['200'].content);
    expect(Object.keys(properties(result))).toEqual(
      expect.arrayContaining(['invocationId', 'tool', 'status', 'result', 'error', 'durationMs']),
    );
    expect(properties(result).status.enum).toEqual(['ok', 'error', 'timeout', 'authorization_required']);
    expect(Object.keys(properties(resolve(properties(result).error))).sort()).toEqual(['code', 'message', 'retryable']);

    // The one error shape, whose error carries the tool, the issues and the usage line of an invalid_arguments.
    const invalid = jsonBody(invoke.responses['422'].content);
    expect(invoke.responses['422'].content?.['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponseDto');
    expect(invalid.required).toEqual(expect.arrayContaining(['error', 'requestId']));
    const error = resolve(properties(invalid).error);
    expect(error.required).toEqual(['code', 'message']);
    expect(Object.keys(properties(error))).toEqual(expect.arrayContaining(['tool', 'issues', 'usage']));
    expect(properties(error).issues.type).toBe('array');
    const issue = resolve(properties(error).issues.items);
    expect(Object.keys(properties(issue)).sort()).toEqual(['expected', 'keyword', 'message', 'path', 'received']);
    expect(issue.required).toEqual(expect.arrayContaining(['path', 'keyword', 'message']));

    const body = jsonBody(invoke.requestBody?.content);
    expect(Object.keys(properties(body)).sort()).toEqual(['arguments', 'timeoutMs']);
  });

  it('describes the invocation log entries and the event stream', () => {
    const list = operation('/v1/projects/{projectId}/invocations', 'get');
    const entry = resolve(properties(jsonBody(list.responses['200'].content)).items.items);
    expect(Object.keys(properties(entry))).toEqual(
      expect.arrayContaining(['id', 'tool', 'status', 'event', 'errorCode', 'arguments', 'argumentsTruncated', 'durationMs']),
    );
    expect(properties(entry).status.enum).toEqual([
      'ok',
      'error',
      'timeout',
      'invalid_arguments',
      'denied',
      'pending_approval',
      'expired',
      'authorization_required',
      'input_required',
    ]);
    expect((list.parameters ?? []).map((p) => p.name)).toEqual(expect.arrayContaining(['tool', 'status', 'limit', 'cursor']));
    const events = operation('/v1/projects/{projectId}/events', 'get').responses['200'] as { description?: string };
    expect(events.description).toEqual(expect.stringMatching(/tool\.started.*tool\.completed.*tool\.error/));
  });
});

import http from 'node:http';
import { eventually } from '../../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import {
  callTool,
  expectError,
  httpTool,
  installSkill,
  postSkill,
  Receiver,
  type RegisteredSkill,
  signatureIsValid,
  skillOf,
  type SkillBody,
} from './skill-test-kit.js';

const FORECAST_INPUT = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, description: 'City name' },
    days: { type: 'integer', minimum: 1, maximum: 7 },
  },
  required: ['city'],
  additionalProperties: false,
};
const FORECAST_OUTPUT = { type: 'object', properties: { city: { type: 'string' }, summary: { type: 'string' } } };

describe('skills with an http executor', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let endpoint: Receiver;
  let privateEndpoint: Receiver;
  let skill: RegisteredSkill;
  let body: SkillBody;

  beforeAll(async () => {
    endpoint = await new Receiver().start();
    // Listens on loopback too, but its port is not in FETCH_ALLOW_HOSTS.
    privateEndpoint = await new Receiver().start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${endpoint.port}` } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;

    endpoint.on('/forecast', (req) => {
      const args = JSON.parse(req.body) as { city: string; days?: number };
      return { body: JSON.stringify({ city: args.city, summary: `sunny for ${args.days ?? 1} day(s)` }) };
    });
    endpoint.on('/motd', () => ({ contentType: 'text/plain; charset=utf-8', body: 'Hello from the endpoint' }));
    endpoint.on('/broken', () => ({ status: 503, body: JSON.stringify({ message: 'upstream weather service is down' }) }));
    endpoint.on('/picky', () => ({ status: 400, contentType: 'text/plain', body: 'city must be a real place' }));
    endpoint.on('/slow', () => ({ delayMs: 5000, body: '{}' }));
    privateEndpoint.on('/internal', () => ({ body: JSON.stringify({ secret: 'internal data' }) }));

    body = skillOf([
      {
        ...httpTool('forecast', endpoint.url('/forecast'), FORECAST_INPUT),
        outputSchema: FORECAST_OUTPUT,
        annotations: { readOnly: true },
      },
      {
        ...httpTool('forecast_sync', endpoint.url('/forecast'), FORECAST_INPUT),
        mode: 'sync',
        executor: { type: 'http', url: endpoint.url('/forecast'), method: 'PUT', headers: { 'x-api-key': 'key-123' } },
      },
      httpTool('motd', endpoint.url('/motd'), { type: 'object', properties: {} }),
      httpTool('broken', endpoint.url('/broken'), { type: 'object', properties: {} }),
      httpTool('picky', endpoint.url('/picky'), { type: 'object', properties: {} }),
      { ...httpTool('slow', endpoint.url('/slow'), { type: 'object', properties: {} }), timeoutMs: 500 },
      { ...httpTool('slow_sync', endpoint.url('/slow'), { type: 'object', properties: {} }), mode: 'sync' },
    ]);
    skill = await installSkill(t, tenant, projectId, body);
  });
  afterAll(async () => {
    await t?.close();
    await endpoint?.close();
    await privateEndpoint?.close();
  });

  const list = (format: string) => t.http.get(`/v1/projects/${projectId}/tools`).query({ format }).set(tenant.auth).expect(200);
  const source = () => `skill:${body.name}@1.0.0`;

  it('lists the skill’s tools next to the built-ins in the native format, with their source and annotations', async () => {
    const tools = (await list('native')).body.tools as Array<Record<string, unknown>>;
    expect(tools.map((tool) => tool.name)).toEqual([
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
      ...body.tools.map((tool) => tool.name),
    ]);
    expect(tools.find((tool) => tool.name === 'forecast')).toEqual({
      name: 'forecast',
      description: body.tools[0].description,
      inputSchema: FORECAST_INPUT,
      outputSchema: FORECAST_OUTPUT,
      // Read-only, so not destructive (MCP's destructiveHint means something only for a tool that writes).
      annotations: { readOnly: true, destructive: false, idempotent: false, openWorld: true },
      timeoutMs: 30_000,
      source: source(),
    });
    expect(tools.find((tool) => tool.name === 'slow')).toMatchObject({ timeoutMs: 500, source: source() });
  });

  it('lists the skill’s tools in the OpenAI, Anthropic and MCP shapes', async () => {
    const find = (tools: Array<Record<string, unknown>>, name: string) =>
      tools.find((tool) => (tool.name ?? (tool.function as { name: string }).name) === name);
    const description = body.tools[0].description;

    expect(find((await list('openai')).body.tools, 'forecast')).toEqual({
      type: 'function',
      function: { name: 'forecast', description, parameters: FORECAST_INPUT, strict: false },
    });
    expect(find((await list('anthropic')).body.tools, 'forecast')).toEqual({ name: 'forecast', description, input_schema: FORECAST_INPUT });
    expect(find((await list('mcp')).body.tools, 'forecast')).toEqual({
      name: 'forecast',
      description,
      inputSchema: FORECAST_INPUT,
      outputSchema: FORECAST_OUTPUT,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    });
    const one = await t.http.get(`/v1/projects/${projectId}/tools/forecast`).query({ format: 'anthropic' }).set(tenant.auth).expect(200);
    expect(one.body).toEqual({ name: 'forecast', description, input_schema: FORECAST_INPUT });
  });

  it('posts the validated arguments as JSON, signed with the skill’s secret, and answers the endpoint’s JSON as the result', async () => {
    const before = endpoint.to('/forecast').length;
    const res = await callTool(t, tenant, projectId, 'forecast', { city: 'Lisbon', days: 3 }).expect(200);
    expect(res.body).toEqual({
      invocationId: expect.any(String),
      tool: 'forecast',
      status: 'ok',
      result: { city: 'Lisbon', summary: 'sunny for 3 day(s)' },
      durationMs: expect.any(Number),
    });

    const received = endpoint.to('/forecast').slice(before);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ city: 'Lisbon', days: 3 });
    expect(request.headers['x-toolgate-invocation-id']).toBe(res.body.invocationId);
    expect(request.headers['x-toolgate-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(signatureIsValid(skill.signingSecret, request.body, request.headers['x-toolgate-signature'])).toBe(true);
    // The signature covers this body with this secret only.
    expect(signatureIsValid(skill.signingSecret, `${request.body} `, request.headers['x-toolgate-signature'])).toBe(false);
    expect(signatureIsValid(`${skill.signingSecret}x`, request.body, request.headers['x-toolgate-signature'])).toBe(false);
  });

  it('refuses bad arguments with 422 invalid_arguments and the usage line, and the endpoint receives nothing', async () => {
    const before = endpoint.requests.length;
    const cases: Array<[unknown, RegExp]> = [
      [{}, /city/],
      [{ city: 'Lisbon', days: 30 }, /days/],
      [{ city: 'Lisbon', wind: true }, /wind/],
      [{ city: 42 }, /city/],
    ];
    for (const [args, problem] of cases) {
      const error = expectError(await callTool(t, tenant, projectId, 'forecast', args), 422, 'invalid_arguments');
      expect({ args, message: error.message }).toEqual({ args, message: expect.stringMatching(problem) });
      expect(error.message).toContain('Usage: forecast(city: string, days?: integer');
    }
    expect(endpoint.requests.length).toBe(before);
  });

  it('answers a text reply as the result, marked not truncated', async () => {
    const res = await callTool(t, tenant, projectId, 'motd', {}).expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { text: 'Hello from the endpoint', truncated: false } });
  });

  it('answers 200 with status error carrying the endpoint’s message when it answers non-2xx', async () => {
    const broken = await callTool(t, tenant, projectId, 'broken', {}).expect(200);
    expect(broken.body).toMatchObject({ tool: 'broken', status: 'error', error: { code: 'endpoint_error', retryable: true } });
    expect(broken.body.error.message).toContain('503');
    expect(broken.body.error.message).toContain('upstream weather service is down');
    expect(broken.body.result).toBeUndefined();

    const picky = await callTool(t, tenant, projectId, 'picky', {}).expect(200);
    expect(picky.body).toMatchObject({ status: 'error', error: { code: 'endpoint_error', retryable: false } });
    expect(picky.body.error.message).toContain('city must be a real place');
  });

  const internalTools = () => [
    httpTool('internal', privateEndpoint.url('/internal'), { type: 'object', properties: {} }),
    { ...httpTool('internal_sync', privateEndpoint.url('/internal'), { type: 'object', properties: {} }), mode: 'sync' as const },
  ];

  it('refuses at registration an endpoint on a private address that is not in FETCH_ALLOW_HOSTS, and that server receives nothing', async () => {
    const refused = expectError(await postSkill(t, tenant, skillOf(internalTools())), 403, 'url_blocked');
    expect(refused.message).toContain(`127.0.0.1:${privateEndpoint.port}`);
    expect(privateEndpoint.requests).toEqual([]);
  });

  it('runs a sync-mode tool in the worker pool with its method and headers, signed the same way', async () => {
    const before = endpoint.to('/forecast').length;
    const res = await callTool(t, tenant, projectId, 'forecast_sync', { city: 'Oslo' }).expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { city: 'Oslo', summary: 'sunny for 1 day(s)' } });
    const [request] = endpoint.to('/forecast').slice(before);
    expect(request).toMatchObject({ method: 'PUT', headers: expect.objectContaining({ 'x-api-key': 'key-123' }) });
    expect(JSON.parse(request.body)).toEqual({ city: 'Oslo' });
    expect(signatureIsValid(skill.signingSecret, request.body, request.headers['x-toolgate-signature'])).toBe(true);
  });

  it('stops waiting for an endpoint at the tool’s timeout: status timeout, and the connection is closed', async () => {
    const before = endpoint.to('/slow').length;
    const res = await callTool(t, tenant, projectId, 'slow', {}).expect(200);
    expect(res.body).toMatchObject({ tool: 'slow', status: 'timeout', error: { code: 'timeout' } });
    expect(res.body.error.message).toContain('500 ms');
    await eventually(() =>
      expect(
        endpoint
          .to('/slow')
          .slice(before)
          .map((r) => r.abandoned),
      ).toEqual([true]),
    );
  });

  it('honours a shorter timeout asked by the caller in sync mode too', async () => {
    const before = endpoint.to('/slow').length;
    const res = await callTool(t, tenant, projectId, 'slow_sync', {}, { timeoutMs: 300 }).expect(200);
    expect(res.body).toMatchObject({ tool: 'slow_sync', status: 'timeout', error: { code: 'timeout' } });
    expect(res.body.error.message).toContain('300 ms');
    await eventually(() =>
      expect(
        endpoint
          .to('/slow')
          .slice(before)
          .map((r) => r.abandoned),
      ).toEqual([true]),
    );
  });

  it('closes the connection to the endpoint when the caller goes away (sync mode)', async () => {
    const port = t.port;
    endpoint.on('/hang', () => ({ delayMs: 20_000, body: '{}' }));
    const hang = skillOf([{ ...httpTool('hang', endpoint.url('/hang'), { type: 'object', properties: {} }), mode: 'sync' }]);
    await installSkill(t, tenant, projectId, hang);

    const client = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/v1/projects/${projectId}/tools/hang/invoke`,
      headers: { ...tenant.auth, 'content-type': 'application/json' },
    });
    client.on('error', () => undefined);
    client.end(JSON.stringify({ arguments: {} }));
    await eventually(() => expect(endpoint.to('/hang')).toHaveLength(1), 100, 50);
    expect(endpoint.to('/hang')[0].abandoned).toBe(false);
    client.destroy();
    await eventually(() => expect(endpoint.to('/hang')[0].abandoned).toBe(true), 60, 50);
  });

  it('keeps the signing secret across a new version, and calls the endpoint the new version names', async () => {
    endpoint.on('/forecast-v2', (req) => ({ body: JSON.stringify({ version: 2, args: JSON.parse(req.body) }) }));
    const next = {
      ...body,
      version: '2.0.0',
      tools: [{ ...body.tools[0], executor: { type: 'http', url: endpoint.url('/forecast-v2') } }],
    };
    await t.http.put(`/v1/skills/${skill.id}`).set(tenant.auth).send(next).expect(200);

    const res = await callTool(t, tenant, projectId, 'forecast', { city: 'Porto' }).expect(200);
    expect(res.body).toMatchObject({ status: 'ok', result: { version: 2, args: { city: 'Porto' } } });
    const [request] = endpoint.to('/forecast-v2');
    expect(signatureIsValid(skill.signingSecret, request.body, request.headers['x-toolgate-signature'])).toBe(true);
    const listed = (await list('native')).body.tools as Array<{ name: string; source: string }>;
    expect(listed.find((tool) => tool.name === 'forecast')!.source).toBe(`skill:${body.name}@2.0.0`);
    // The tools the new version dropped are gone from the project.
    expect(listed.map((tool) => tool.name)).not.toContain('motd');
    expectError(await callTool(t, tenant, projectId, 'motd', {}), 404, 'tool_not_found');
  });

  // The second instance shares this suite's database; closing it must leave that database open.
  it('refuses at call time an endpoint registered where its private address was open, and that server receives nothing', async () => {
    const opener = await createTestApp({
      database: t.database,
      env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${endpoint.port},127.0.0.1:${privateEndpoint.port}` },
    });
    try {
      // A project this instance has not looked at yet, so it reads the skill's tools from the database.
      const elsewhere = (await t.createProject(tenant)).id;
      await installSkill(opener, tenant, elsewhere, skillOf(internalTools()));
      for (const tool of ['internal', 'internal_sync']) {
        const error = expectError(await callTool(t, tenant, elsewhere, tool, {}), 403, 'url_blocked');
        expect(error.message).toContain(`127.0.0.1:${privateEndpoint.port}`);
      }
      expect(privateEndpoint.requests).toEqual([]);
    } finally {
      await opener.close();
    }
    const after = await callTool(t, tenant, projectId, 'forecast', { city: 'Oslo' }).expect(200);
    expect(after.body.status).toBe('ok');
    await t.http.get(`/v1/projects/${projectId}/invocations/${after.body.invocationId}`).set(tenant.auth).expect(200);
  });
});

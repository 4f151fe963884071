import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { callTool, enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { CONFORMANCE_TOOLS, ConformanceUpstream, MIRRORED_HEADER_TOOL } from './conformance-upstream.js';
import { connectMcp, postModern, textOf, type TextResult } from './mcp-test-kit.js';

// Multi round-trip requests (MCP revision 2026-07-28, SEP-2322) relayed between a project's MCP endpoint and
// an MCP source of that revision (conformance-upstream.ts, whose tools ask for input: input-required-fixtures.ts).
// The requestState a client gets is Toolgate's, sealed: it opens only for the request it was given for
// (tenant, project, key, tool, arguments), and the source's own state inside it goes back to the source only.

const ELICITS = { elicitation: {} };
const TOOLS = [
  'book_table',
  'test_input_required_result_elicitation',
  'test_input_required_result_multi_round',
  'test_missing_capability',
  'test_simple_text',
  MIRRORED_HEADER_TOOL.name,
];

interface Installed {
  tenant: TestTenant;
  projectId: string;
}

describe('multi round-trip requests relayed to an MCP source of revision 2026-07-28', () => {
  let t: TestApp;
  const upstream = new ConformanceUpstream();
  let a: Installed;
  let b: Installed;

  const install = async (): Promise<Installed> => {
    const tenant = await t.createTenant();
    const projectId = (await t.createProject(tenant)).id;
    const imported = await postSkill(t, tenant, {
      name: uniqueName('asks'),
      version: '1.0.0',
      description: 'Tools that ask for input',
      source: { type: 'mcp', url: upstream.url, tools: TOOLS },
    });
    expect({ status: imported.status, body: imported.status === 201 ? 'imported' : imported.body }).toEqual({
      status: 201,
      body: 'imported',
    });
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
    return { tenant, projectId };
  };

  beforeAll(async () => {
    upstream.tools = [...CONFORMANCE_TOOLS, MIRRORED_HEADER_TOOL];
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    a = await install();
    b = await install();
  });
  afterAll(async () => {
    await t?.close();
    await upstream.stop();
  });

  const capabilitiesMeta = (capabilities: Record<string, unknown>) => ({ 'io.modelcontextprotocol/clientCapabilities': capabilities });
  const book = (who: Installed, params: Record<string, unknown> = {}, auth = who.tenant.auth) =>
    postModern(
      t,
      who.projectId,
      auth,
      'tools/call',
      { name: 'book_table', arguments: { seats: 2 }, _meta: capabilitiesMeta(ELICITS), ...params },
      'book_table',
    );
  const upstreamRounds = (name: string) => upstream.modernRequests.filter((r) => r.method === 'tools/call' && r.name === name);
  const auditRow = async (who: Installed, invocationId: string) =>
    (await t.http.get(`/v1/projects/${who.projectId}/invocations/${invocationId}`).set(who.tenant.auth).expect(200)).body as {
      status: string;
      errorCode: string | null;
      channel: string;
    };

  it('relays the source’s request for input, then the client’s answers and the source’s own state back: each round audited', async () => {
    const first = await book(a);
    expect(first.status).toBe(200);
    expect(first.body.result).toEqual({
      resultType: 'input_required',
      inputRequests: { guest: { method: 'elicitation/create', params: expect.objectContaining({ message: 'Who is the table for?' }) } },
      requestState: expect.any(String),
      _meta: { 'dev.toolgate/invocationId': expect.any(String) },
    });
    const state = first.body.result.requestState as string;
    const second = await book(a, { inputResponses: { guest: { action: 'accept', content: { name: 'Ada' } } }, requestState: state });
    expect(second.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { seats: 2, guest: 'Ada', stateCameBack: true },
    });
    const [asked, answered] = upstreamRounds('book_table').slice(-2);
    expect(asked).toMatchObject({ capabilities: ELICITS });
    expect(asked.requestState).toBeUndefined();
    // The source got its own state back (signed by it: stateCameBack above); the client saw only Toolgate's,
    // which holds the source's sealed, not readable.
    expect(answered).toMatchObject({ inputResponses: ['guest'], requestState: expect.any(String) });
    expect(state).not.toContain(answered.requestState!.split('.')[0]);
    // Each round is its own call: the first is audited as input_required, the second as ok.
    expect(await auditRow(a, first.body.result._meta['dev.toolgate/invocationId'] as string)).toMatchObject({
      status: 'input_required',
      errorCode: 'input_required',
      channel: 'mcp',
    });
    expect(await auditRow(a, second.body.result._meta['dev.toolgate/invocationId'] as string)).toMatchObject({ status: 'ok' });
  });

  it('refuses a retry whose state was changed (-32602), and the source never sees it', async () => {
    const state = (await book(a)).body.result.requestState as string;
    const before = upstreamRounds('book_table').length;
    for (const tampered of [`${state}-TAMPERED`, state.slice(0, -3), state.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), 'made-up']) {
      const retry = await book(a, {
        inputResponses: { guest: { action: 'accept', content: { name: 'Mallory' } } },
        requestState: tampered,
      });
      expect({ tampered, error: retry.body.error }).toEqual({
        tampered,
        error: { code: -32602, message: 'params.requestState is not one this server gave, or was changed' },
      });
    }
    expect(upstreamRounds('book_table').length).toBe(before);
  });

  it('refuses a state presented by another tenant, or by another key of the same project', async () => {
    const state = (await book(a)).body.result.requestState as string;
    const answers = { inputResponses: { guest: { action: 'accept', content: { name: 'Eve' } } }, requestState: state };
    // Tenant B has the same tool from the same source, and calls it with the same arguments.
    const foreign = await book(b, answers);
    expect(foreign.body.error).toEqual({ code: -32602, message: 'params.requestState was given to another key, project or end user' });
    const agent = await t.http
      .post('/v1/api-keys')
      .set(a.tenant.auth)
      .send({ name: 'another', role: 'agent', projectIds: [a.projectId] })
      .expect(201);
    const otherKey = await book(a, answers, { Authorization: `Bearer ${agent.body.key as string}` });
    expect(otherKey.body.error).toEqual({ code: -32602, message: 'params.requestState was given to another key, project or end user' });
  });

  it('refuses a state presented for another tool or other arguments', async () => {
    const state = (await book(a)).body.result.requestState as string;
    const otherArguments = await book(a, { arguments: { seats: 12 }, requestState: state });
    expect(otherArguments.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('other arguments') });
    const otherTool = await postModern(
      t,
      a.projectId,
      a.tenant.auth,
      'tools/call',
      { name: 'test_input_required_result_elicitation', arguments: { seats: 2 }, requestState: state, _meta: capabilitiesMeta(ELICITS) },
      'test_input_required_result_elicitation',
    );
    expect(otherTool.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('another tool') });
  });

  it('refuses inputResponses that are not answers, and a requestState that is not a string (-32602)', async () => {
    for (const [params, message] of [
      [{ inputResponses: null }, /params\.inputResponses must be an object/],
      [{ inputResponses: ['x'] }, /params\.inputResponses must be an object/],
      [{ inputResponses: { guest: 'Ada' } }, /params\.inputResponses\["guest"\] must be an object/],
      [{ requestState: 42 }, /params\.requestState must be the string/],
    ] as const) {
      const res = await book(a, params);
      expect(res.body.error).toEqual({ code: -32602, message: expect.stringMatching(message) });
    }
  });

  it('tells the source what the client declared, and does not relay a request for input the client did not declare', async () => {
    // The fixture asks for an elicitation whatever it is told: a client without elicitation gets the tool's error.
    const res = await postModern(
      t,
      a.projectId,
      a.tenant.auth,
      'tools/call',
      { name: 'test_input_required_result_elicitation', arguments: {}, _meta: capabilitiesMeta({ sampling: {}, experimental: { x: {} } }) },
      'test_input_required_result_elicitation',
    );
    expect(res.body.result).toMatchObject({
      resultType: 'complete',
      isError: true,
      _meta: { 'dev.toolgate/error': { error: { code: 'undeclared_input' } } },
    });
    expect(res.body.result.content[0].text).toMatch(
      /asked the client for elicitation\/create \('user_name'\), but the client did not declare elicitation/,
    );
    // Only the capabilities a source may ask input of go on.
    expect(upstreamRounds('test_input_required_result_elicitation').at(-1)?.capabilities).toEqual({ sampling: {} });
  });

  it('hands on a source’s refusal of a capability the client did not declare (-32021, HTTP 400), with what to declare', async () => {
    const call = (capabilities: Record<string, unknown>) =>
      postModern(
        t,
        a.projectId,
        a.tenant.auth,
        'tools/call',
        { name: 'test_missing_capability', arguments: {}, _meta: capabilitiesMeta(capabilities) },
        'test_missing_capability',
      );
    const refused = await call(ELICITS);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      id: 7,
      error: {
        code: -32021,
        message: expect.stringContaining('Missing required client capability'),
        data: { requiredCapabilities: { sampling: {} } },
      },
    });
    const rows = (
      await t.http
        .get(`/v1/projects/${a.projectId}/invocations`)
        .query({ tool: 'test_missing_capability', limit: 10 })
        .set(a.tenant.auth)
        .expect(200)
    ).body.items as Array<{ status: string; errorCode: string }>;
    expect(rows[0]).toMatchObject({ status: 'error', errorCode: 'missing_client_capability' });
    // Declared, the source asks the client's model.
    const asked = await call({ sampling: {} });
    expect(asked.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { answer: { method: 'sampling/createMessage' } },
    });
  });

  it('under an Idempotency-Key: the round that asked keeps no answer, the retry with answers runs, and a repeat of it is replayed', async () => {
    const keyed = { _meta: { ...capabilitiesMeta(ELICITS), 'dev.toolgate/idempotencyKey': 'booking-1' } };
    const asked = await book(a, keyed);
    expect(asked.body.result.resultType).toBe('input_required');
    const retry = {
      ...keyed,
      inputResponses: { guest: { action: 'accept', content: { name: 'Grace' } } },
      requestState: asked.body.result.requestState as string,
    };
    const done = await book(a, retry);
    expect(done.body.result).toMatchObject({ resultType: 'complete', structuredContent: { guest: 'Grace' } });
    const before = upstreamRounds('book_table').length;
    const again = await book(a, retry);
    expect(again.body.result).toMatchObject({ structuredContent: { guest: 'Grace' }, _meta: { 'dev.toolgate/idempotentReplayed': true } });
    expect(upstreamRounds('book_table').length).toBe(before);
  });

  it('relays a prompt’s request for input, and refuses a tampered state for it', async () => {
    const get = (params: Record<string, unknown>) =>
      postModern(
        t,
        a.projectId,
        a.tenant.auth,
        'prompts/get',
        { name: 'test_input_required_result_prompt', _meta: capabilitiesMeta(ELICITS), ...params },
        'test_input_required_result_prompt',
      );
    const asked = await get({});
    expect(asked.body.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_context: { method: 'elicitation/create' } },
      requestState: expect.any(String),
    });
    const state = asked.body.result.requestState as string;
    expect((await get({ requestState: `${state}x` })).body.error).toMatchObject({ code: -32602 });
    const done = await get({
      inputResponses: { user_context: { action: 'accept', content: { context: 'weekend' } } },
      requestState: state,
    });
    expect(done.body.result).toMatchObject({
      resultType: 'complete',
      messages: [{ content: { text: 'Answer with this in mind: weekend' } }],
    });
    const rows = (
      await t.http.get(`/v1/projects/${a.projectId}/invocations`).query({ tool: 'prompts/get', limit: 10 }).set(a.tenant.auth).expect(200)
    ).body.items as Array<{ status: string }>;
    expect(rows.map((row) => row.status)).toEqual(expect.arrayContaining(['input_required', 'ok']));
  });

  it('answers a REST caller, whom a source cannot ask for input, with an error that says who can', async () => {
    const res = await callTool(t, a.tenant, a.projectId, 'book_table', { seats: 2 }).expect(200);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'input_required', retryable: false } });
    expect(res.body.error.message).toMatch(
      /asked for input from the client .* which only an MCP client of protocol revision 2026-07-28 can give: call the tool through the project's MCP endpoint at that revision/,
    );
    expect(res.body.inputRequired).toBeUndefined();
    expect(await auditRow(a, res.body.invocationId as string)).toMatchObject({
      status: 'error',
      errorCode: 'input_required',
      channel: 'rest',
    });
  });

  it('answers an MCP client of 2025-11-25 the same way, as the tool’s error', async () => {
    const client = await connectMcp(t, a.projectId, a.tenant.auth);
    try {
      const result = (await client.callTool({ name: 'book_table', arguments: { seats: 2 } })) as TextResult & { isError?: boolean };
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/only an MCP client of protocol revision 2026-07-28 can give/);
    } finally {
      await client.close();
    }
  });

  it('calls a tool whose source refuses the call for headers it wants mirrored (-32020) as before: it ran once', async () => {
    const res = await postModern(
      t,
      a.projectId,
      a.tenant.auth,
      'tools/call',
      { name: MIRRORED_HEADER_TOOL.name, arguments: { region: 'Lofoten' } },
      MIRRORED_HEADER_TOOL.name,
    );
    expect(res.body.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Sunny in Lofoten' }] });
    expect(upstreamRounds(MIRRORED_HEADER_TOOL.name)).toHaveLength(1);
    expect(upstream.calls.filter((name) => name === MIRRORED_HEADER_TOOL.name)).toHaveLength(1);
  });

  it('asks the source what it speaks once, and calls a tool that asks nothing at 2026-07-28 as any other', async () => {
    const res = await postModern(
      t,
      a.projectId,
      a.tenant.auth,
      'tools/call',
      { name: 'test_simple_text', arguments: {} },
      'test_simple_text',
    );
    expect(res.body.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'A plain text answer from the upstream server' }],
    });
    expect(upstreamRounds('test_simple_text').length).toBeGreaterThan(0);
    // One server/discover for every call of the tenant's (what a source speaks is kept; tenant B's calls
    // were refused before any reached the source).
    expect(upstream.modernRequests.filter((r) => r.method === 'server/discover')).toHaveLength(1);
  });
});

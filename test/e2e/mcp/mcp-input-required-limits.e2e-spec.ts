import { eventually } from '../../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { enableSkill, postSkill, uniqueName } from '../skills/skill-test-kit.js';
import { CONFORMANCE_TOOLS, ConformanceUpstream } from './conformance-upstream.js';
import { postModern } from './mcp-test-kit.js';

// Multi round-trip requests (MCP revision 2026-07-28) held to Toolgate's limits: a source's request for input
// nested past the cap on results is the tool's error, refused before it is parsed (no other tenant waits on
// it); a client's answers and capabilities nested past the depth of arguments are refused as invalid params;
// a retry under an Idempotency-Key that answers otherwise is another payload; and a requestState goes back
// only to the source that gave it.

const ELICITS = { elicitation: {} };
const TOOLS = ['book_table', 'deep_input_request', 'test_input_required_result_elicitation'];
const ERROR_META = 'dev.toolgate/error';

interface Installed {
  tenant: TestTenant;
  projectId: string;
}

describe('multi round-trip requests within limits', () => {
  let t: TestApp;
  const upstream = new ConformanceUpstream();
  let a: Installed;

  const install = async (url = upstream.url, tools = TOOLS, into?: Installed): Promise<Installed & { skillId: string }> => {
    const tenant = into?.tenant ?? (await t.createTenant());
    const projectId = into?.projectId ?? (await t.createProject(tenant)).id;
    const imported = await postSkill(t, tenant, {
      name: uniqueName('asks'),
      version: '1.0.0',
      description: 'Tools that ask for input',
      source: { type: 'mcp', url, tools },
    });
    expect({ status: imported.status, body: imported.status === 201 ? 'imported' : imported.body }).toEqual({
      status: 201,
      body: 'imported',
    });
    expect((await enableSkill(t, tenant, projectId, imported.body.id as string)).status).toBe(201);
    return { tenant, projectId, skillId: imported.body.id as string };
  };

  beforeAll(async () => {
    upstream.tools = [...CONFORMANCE_TOOLS];
    await upstream.start();
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` } });
    a = await install();
  });
  afterAll(async () => {
    await t?.close();
    await upstream.stop();
  });

  const meta = (capabilities: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    ...extra,
  });
  const callTool = (who: Installed, name: string, params: Record<string, unknown> = {}) =>
    postModern(t, who.projectId, who.tenant.auth, 'tools/call', { name, arguments: {}, _meta: meta(ELICITS), ...params }, name);
  const toolCalls = (name: string) => upstream.modernRequests.filter((r) => r.method === 'tools/call' && r.name === name);
  // The audit row of a call, by the invocation its result names (written as the call ends, not before it answers).
  const auditRow = (who: Installed, result: { _meta?: Record<string, unknown> }) =>
    eventually(async () => {
      const res = await t.http
        .get(`/v1/projects/${who.projectId}/invocations/${String(result._meta?.['dev.toolgate/invocationId'])}`)
        .set(who.tenant.auth);
      expect(res.status).toBe(200);
      return res.body as { status: string; errorCode: string | null };
    });

  // A request whose text is written by hand: JSON.stringify cannot write what these nest.
  const postText = async (who: Installed, name: string, paramsText: string) => {
    const res = await fetch(`http://127.0.0.1:${t.port}/v1/projects/${who.projectId}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
        ...who.tenant.auth,
      },
      body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":${paramsText}}`,
    });
    return {
      status: res.status,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      body: (await res.json()) as { id?: unknown; result?: Record<string, any>; error?: { code: number; message: string } },
    };
  };
  const nested = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
  const protocolMeta = (capabilities: string) =>
    `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":${capabilities}}`;

  describe('a source’s request for input nested past the cap on results (256 levels)', () => {
    it('is the tool’s error result_too_deep, answered as JSON-RPC with the request’s id and audited so', async () => {
      for (const levels of [300, 100_000]) {
        const res = await callTool(a, 'deep_input_request', { arguments: { levels } });
        expect({ levels, status: res.status, id: (res.body as { id?: unknown }).id }).toEqual({ levels, status: 200, id: 7 });
        expect(res.body.result).toMatchObject({ isError: true, _meta: { [ERROR_META]: { error: { code: 'result_too_deep' } } } });
        expect(res.body.result.content[0].text).toMatch(/nested more than 256 levels deep/);
        expect(await auditRow(a, res.body.result)).toMatchObject({ status: 'error', errorCode: 'result_too_deep' });
      }
    });

    it('is relayed within the cap, as a tool result would be', async () => {
      const res = await callTool(a, 'deep_input_request', { arguments: { levels: 200 } });
      expect(res.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { q: { method: 'elicitation/create' } } });
      expect(await auditRow(a, res.body.result)).toMatchObject({ status: 'input_required', errorCode: 'input_required' });
    });

    it('is refused before it is parsed: another tenant’s requests do not wait on it', async () => {
      const victim = await t.createTenant();
      const statuses: number[] = [];
      const victimRequest = async () => {
        const started = performance.now();
        statuses.push((await t.http.get('/v1/projects').set(victim.auth)).status);
        return performance.now() - started;
      };
      const baseline: number[] = [];
      for (let i = 0; i < 5; i++) baseline.push(await victimRequest());
      // About 1.4 MB nested 690,000 levels, four at a time, three rounds each (as the report that found it).
      const answers: unknown[] = [];
      const deepCalls = Array.from({ length: 4 }, async () => {
        const took: number[] = [];
        for (let i = 0; i < 3; i++) {
          const started = performance.now();
          answers.push((await callTool(a, 'deep_input_request', { arguments: { levels: 690_000 } })).body);
          took.push(performance.now() - started);
        }
        return took;
      });
      let running = true;
      const during: number[] = [];
      const sampling = (async () => {
        while (running) {
          during.push(await victimRequest());
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const deep = (await Promise.all(deepCalls)).flat();
      running = false;
      await sampling;
      const median = [...baseline].sort((x, y) => x - y)[2];
      const worst = Math.max(...during);
      // The median beside the deep answers, not the worst sample: one sample on a shared machine running other
      // suites may meet a garbage collection (595 ms once, on Fastify under CI's load); parsed, the answers held
      // the event loop for about a second each, so most samples waited (2,789 ms at worst, before).
      const typical = [...during].sort((x, y) => x - y)[Math.floor(during.length / 2)];
      // Judged against a floor of 100 ms: beside CI's other suites, the PostgreSQL pass once took a median of
      // 297 ms here (a ratio of 5.9 to a 50 ms floor) with every answer refused from its text. Parsed, each
      // answer held the event loop for about a second (above).
      const ratio = typical / Math.max(median, 100);
      console.log(
        `another tenant's GET /v1/projects: ${median.toFixed(1)} ms alone, at worst ${worst.toFixed(1)} ms (${during.length} samples) while 12 answers nested 690,000 levels were refused ` +
          `(each in ${Math.min(...deep).toFixed(0)}-${Math.max(...deep).toFixed(0)} ms), median ${typical.toFixed(1)} ms; ratio of the median to a 100 ms floor ${ratio.toFixed(1)}`,
      );
      // Parsed, each answer held the event loop for about a second; refused from its text, a few milliseconds.
      expect(ratio).toBeLessThan(8);
      expect(new Set(statuses)).toEqual(new Set([200]));
      // Refused from its text, before any parse: the guarded fetch's words, not those of the caps after a parse.
      const fromText = expect.stringMatching(/^The tool ran, but its result from the MCP server at .* is nested more than 256 levels deep/);
      for (const answer of answers)
        expect(answer).toMatchObject({
          id: 7,
          result: { isError: true, _meta: { [ERROR_META]: { error: { code: 'result_too_deep', message: fromText } } } },
        });
    }, 120_000);
  });

  describe('a client’s round nested past the depth of arguments (64 levels)', () => {
    it('is refused as invalid params naming the field, and nothing reaches the source', async () => {
      const before = toolCalls('test_input_required_result_elicitation').length;
      for (const levels of [65, 100_000]) {
        const responses = await postText(
          a,
          'test_input_required_result_elicitation',
          `{"name":"test_input_required_result_elicitation","arguments":{},"inputResponses":{"user_name":${nested(levels - 1)}},${protocolMeta('{"elicitation":{}}')}}`,
        );
        expect({ levels, body: responses.body }).toEqual({
          levels,
          body: {
            jsonrpc: '2.0',
            id: 9,
            error: { code: -32602, message: 'params.inputResponses nest more than 64 levels deep; flatten them' },
          },
        });
        const capabilities = await postText(
          a,
          'test_input_required_result_elicitation',
          `{"name":"test_input_required_result_elicitation","arguments":{},${protocolMeta(`{"elicitation":${nested(levels - 1)}}`)}}`,
        );
        expect({ levels, body: capabilities.body }).toEqual({
          levels,
          body: {
            jsonrpc: '2.0',
            id: 9,
            error: { code: -32602, message: 'params._meta["io.modelcontextprotocol/clientCapabilities"] nests more than 64 levels deep' },
          },
        });
        const state = await postText(
          a,
          'test_input_required_result_elicitation',
          `{"name":"test_input_required_result_elicitation","arguments":{},"requestState":${nested(levels)},${protocolMeta('{"elicitation":{}}')}}`,
        );
        expect(state.body.error).toEqual({ code: -32602, message: expect.stringMatching(/^params\.requestState must be the string/) });
      }
      expect(toolCalls('test_input_required_result_elicitation').length).toBe(before);
      // At 64 levels, the answers go on.
      const within = await postText(
        a,
        'test_input_required_result_elicitation',
        `{"name":"test_input_required_result_elicitation","arguments":{},"inputResponses":{"user_name":${nested(63)}},${protocolMeta('{"elicitation":{}}')}}`,
      );
      expect(within.body.result).toMatchObject({ resultType: 'input_required' });
      expect(toolCalls('test_input_required_result_elicitation').length).toBe(before + 1);
    });
  });

  it('under an Idempotency-Key: a retry that answers otherwise is refused as the key reused, not given the first answer', async () => {
    const keyed = { _meta: meta(ELICITS, { 'dev.toolgate/idempotencyKey': 'booking-answers' }) };
    const book = (params: Record<string, unknown>) => callTool(a, 'book_table', { arguments: { seats: 2 }, ...keyed, ...params });
    const asked = await book({});
    const state = asked.body.result.requestState as string;
    const accepted = await book({ inputResponses: { guest: { action: 'accept', content: { name: 'Grace' } } }, requestState: state });
    expect(accepted.body.result).toMatchObject({ structuredContent: { guest: 'Grace' } });
    const before = toolCalls('book_table').length;
    for (const params of [{ inputResponses: { guest: { action: 'accept', content: { name: 'Mallory' } } }, requestState: state }, {}]) {
      const other = await book(params);
      expect(other.body.result).toMatchObject({ isError: true, _meta: { [ERROR_META]: { error: { code: 'idempotency_key_reused' } } } });
    }
    expect(toolCalls('book_table').length).toBe(before);
    // The same retry is still the same call.
    const again = await book({ inputResponses: { guest: { action: 'accept', content: { name: 'Grace' } } }, requestState: state });
    expect(again.body.result).toMatchObject({ structuredContent: { guest: 'Grace' }, _meta: { 'dev.toolgate/idempotentReplayed': true } });
  });

  it('sends a requestState back only to the source that gave it: a tool re-pointed between the rounds gets none', async () => {
    // One project, the tool first from source B (the same server at another address), then from source A.
    const b = await install(`${upstream.url}?source=b`, ['book_table']);
    const asked = await callTool(b, 'book_table', { arguments: { seats: 3 } });
    const state = asked.body.result.requestState as string;
    expect(state).toEqual(expect.any(String));
    expect((await t.http.delete(`/v1/projects/${b.projectId}/skills/${b.skillId}`).set(b.tenant.auth)).status).toBeLessThan(300);
    await install(upstream.url, ['book_table'], b);
    const before = toolCalls('book_table').length;
    const retry = await callTool(b, 'book_table', {
      arguments: { seats: 3 },
      inputResponses: { guest: { action: 'accept', content: { name: 'Eve' } } },
      requestState: state,
    });
    expect(retry.body.result).toMatchObject({ isError: true, _meta: { [ERROR_META]: { error: { code: 'request_state_mismatch' } } } });
    expect(retry.body.result.content[0].text).toMatch(/params\.requestState was given by another source of 'book_table'/);
    expect(toolCalls('book_table').length).toBe(before);
    // Without the state, the tool of source A asks again.
    expect((await callTool(b, 'book_table', { arguments: { seats: 3 } })).body.result).toMatchObject({ resultType: 'input_required' });
  });

  it('does not send a form-mode request for input to a client that declared URL-mode elicitation only', async () => {
    const urlOnly = await callTool(a, 'test_input_required_result_elicitation', { _meta: meta({ elicitation: { url: {} } }) });
    expect(urlOnly.body.result).toMatchObject({ isError: true, _meta: { [ERROR_META]: { error: { code: 'undeclared_input' } } } });
    expect(urlOnly.body.result.content[0].text).toMatch(/form-mode elicitation \('user_name'\).*not elicitation\.form/);
    for (const elicitation of [{}, { form: {} }, { form: {}, url: {} }]) {
      const res = await callTool(a, 'test_input_required_result_elicitation', { _meta: meta({ elicitation }) });
      expect({ elicitation, result: res.body.result }).toMatchObject({ elicitation, result: { resultType: 'input_required' } });
    }
  });
});

import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Response } from 'supertest';
import { enableTracing, shutdownTracing } from '../../src/common/tracing/tracer.js';
import { DATABASE_DRIVER, type DatabaseDriver } from '../../src/database/database-driver.js';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';
import { createTestDatabase } from '../support/test-database.js';
import { enableSkill, httpTool, installSkill, listSkills, postSkill, Receiver, skillOf, uniqueName } from '../e2e/skills/skill-test-kit.js';
import { EventStream } from '../e2e/tools/tool-test-kit.js';
import { mcpClientFor, textOf, type TextResult } from '../e2e/mcp/mcp-test-kit.js';
import { UpstreamMcpServer } from '../e2e/mcp/upstream-mcp-server.js';
import { expectRefusal, invoke } from './security-helpers.js';

// docs/security-model.md 95-97: one redaction, everywhere. A secret planted in a call (a writeOnly parameter, an
// Authorization header, an env value, a URL's ?api_key=) reaches the tool or the upstream, and no channel a
// tenant, an operator or a model reads back: audit rows, their export, SSE events, stored outcomes of parked
// and idempotent calls, logs, trace spans with their exception events, MCP results and the answers
// themselves. Tracing is on for the whole file (an in-memory exporter), so every call here is traced.

const hex = (bytes = 12) => randomBytes(bytes).toString('hex');
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Row {
  id: string;
  tool: string;
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  arguments: unknown;
  redactedPaths: string[] | null;
}

describe('redaction of a call, in every channel', () => {
  const exporter = new InMemorySpanExporter();
  const receiver = new Receiver();
  const upstream = new UpstreamMcpServer();
  let t: TestApp;
  let tenant: TestTenant;
  let direct: string;
  let gated: string;
  let mcp: Client;
  const streams: EventStream[] = [];
  // Everything the service answered, over REST and MCP, to search with the other channels.
  const answers: string[] = [];
  const answered = (res: Response) => (answers.push(res.text), res);
  const planted: string[] = [];
  const plant = (value: string) => (planted.push(value), value);

  const TOKEN = plant(`tok-${hex()}`);
  const SKILL_AUTH = plant(`skill-auth-${hex()}`);
  const MCP_AUTH = plant(`mcp-auth-${hex()}`);
  const URL_KEY = plant(`urlkey-${hex()}`);

  const rowsOf = async (projectId: string): Promise<Row[]> =>
    (await t.http.get(`/v1/projects/${projectId}/invocations`).query({ limit: 100 }).set(tenant.auth).expect(200)).body.items as Row[];
  const exportOf = async (projectId: string): Promise<string> => {
    const res = await t.http
      .get(`/v1/projects/${projectId}/invocations/export`)
      .set(tenant.auth)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (chunk: string) => (text += chunk));
        r.on('end', () => done(null, text));
      });
    expect(res.status).toBe(200);
    return res.body as string;
  };
  const sql = <T>(text: string, params: unknown[] = []) => t.app.get<DatabaseDriver>(DATABASE_DRIVER).query<T>(text, params);
  const spansText = () =>
    JSON.stringify(
      exporter.getFinishedSpans().map((s: ReadableSpan) => ({
        name: s.name,
        attributes: s.attributes,
        status: s.status,
        events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
      })),
    );
  // Every channel, as one text. Read after every parked call was decided (while one waits, admin and
  // approver keys are shown its arguments as they will run, by design).
  const everyChannel = async (): Promise<string> => {
    const texts: string[] = [...answers];
    for (const projectId of [direct, gated]) {
      const rows = await rowsOf(projectId);
      texts.push(JSON.stringify(rows), await exportOf(projectId));
      for (const row of rows)
        texts.push((await t.http.get(`/v1/projects/${projectId}/invocations/${row.id}`).set(tenant.auth).expect(200)).text);
    }
    texts.push(JSON.stringify(await sql('SELECT outcome::text AS outcome FROM parked_calls')));
    texts.push(JSON.stringify(await sql('SELECT outcome FROM idempotency_keys')));
    texts.push(JSON.stringify(streams.map((s) => s.events)), JSON.stringify(t.logs), spansText());
    return texts.join('\n');
  };
  // Messages quote values cut short ("got 'tok-3f9a…'"): a value counts as found when its first 16
  // characters are.
  const expectAbsent = (text: string, values: readonly string[]) => {
    for (const value of values) expect({ value, found: text.includes(value.slice(0, 16)) }).toEqual({ value, found: false });
  };
  const mcpCall = async (name: string, args: Record<string, unknown>): Promise<TextResult> => {
    const result = (await mcp.callTool({ name, arguments: args })) as TextResult;
    answers.push(JSON.stringify(result));
    return result;
  };
  const eventOf = (stream: EventStream, type: string, invocationId: string) =>
    stream.next((e) => e.event === type && e.data.invocationId === invocationId);

  beforeAll(async () => {
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    enableTracing(() => provider.shutdown());
    await receiver.start();
    await upstream.start();
    // An endpoint that echoes what it got, body and Authorization header, in a 400: the tool's error.
    receiver.on('/echo-fail', (req) => ({
      status: 400,
      body: JSON.stringify({ received: JSON.parse(req.body) as unknown, authorization: req.headers.authorization }),
    }));
    receiver.on('/slow', () => ({ body: '{"late":true}', delayMs: 3000 }));
    receiver.on('/ok', () => ({ body: '{"ok":true}' }));
    receiver.on('/huge', () => ({ body: 'x'.repeat(4 * 1024 * 1024 + 16) }));
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: `127.0.0.1:${receiver.port},127.0.0.1:${upstream.port}` } });
    tenant = await t.createTenant();
    const shell = { shellEnabled: true, shellAllowlist: ['sh', 'sleep'] };
    direct = (await t.createProject(tenant, shell)).id;
    gated = (await t.createProject(tenant, { ...shell, approvalRequired: ['@all'] })).id;

    const vaultInput = {
      type: 'object',
      properties: { account: { type: 'string' }, apiToken: { type: 'string', writeOnly: true, pattern: '^tok-[0-9a-f]+$' } },
      required: ['account', 'apiToken'],
      additionalProperties: false,
    };
    const withAuth = (url: string) => ({ type: 'http', url, headers: { Authorization: `Bearer ${SKILL_AUTH}` } });
    const vault = await installSkill(
      t,
      tenant,
      direct,
      skillOf([
        { ...httpTool('vault_call', receiver.url('/echo-fail'), vaultInput), executor: withAuth(receiver.url('/echo-fail')) },
        { ...httpTool('vault_slow', receiver.url('/slow'), vaultInput), executor: withAuth(receiver.url('/slow')) },
      ]),
    );
    expect((await enableSkill(t, tenant, gated, vault.id)).status).toBe(201);
    const source = {
      type: 'mcp',
      url: `${upstream.url}?api_key=${URL_KEY}`,
      headers: { Authorization: `Bearer ${MCP_AUTH}` },
      tools: ['echo', 'flood'],
    };
    const imported = answered(
      await postSkill(t, tenant, { name: uniqueName('upstream'), version: '1.0.0', description: 'Tools of an MCP server', source }),
    );
    expect(imported.status).toBe(201);
    expect((await enableSkill(t, tenant, direct, imported.body.id as string)).status).toBe(201);

    const port = t.port;
    streams.push(await EventStream.open(port, direct, tenant), await EventStream.open(port, gated, tenant));
    mcp = await mcpClientFor(t, tenant, direct);
  });
  afterAll(async () => {
    await mcp?.close();
    for (const stream of streams) stream.close();
    await t?.close();
    await shutdownTracing();
    await upstream.stop();
    await receiver.close();
  });

  describe('[sec-95] one planted secret, absent from every channel', () => {
    const ENV = plant(`env-${hex()}`);
    const BAD_TOKEN = plant(`tok-${hex()}Z${hex()}`);
    const FETCH_AUTH = plant(`fetch-auth-${hex()}`);
    const FETCH_KEY = plant(`fetchkey-${hex()}`);
    let lastCall = '';

    it('[sec-95] approved: the error of an http skill that echoes its body and headers is redacted in the decision, the stored outcome and tool.result', async () => {
      const parked = answered(await invoke(t, tenant, gated, 'vault_call', { account: 'acme', apiToken: TOKEN }));
      expect(parked.status).toBe(202);
      const id = parked.body.invocationId as string;
      const decision = answered(await t.http.post(`/v1/projects/${gated}/invocations/${id}/approve`).set(tenant.deciderAuth).send({}));
      expect(decision.status).toBe(200);
      const { outcome } = decision.body as { outcome: { status: string; error: { code: string; message: string } } };
      expect(outcome).toMatchObject({ status: 'error', error: { code: 'endpoint_error' } });
      // The endpoint got the real values, and its echo is still readable, redacted.
      const received = receiver.to('/echo-fail').at(-1)!;
      expect(JSON.parse(received.body)).toEqual({ account: 'acme', apiToken: TOKEN });
      expect(received.headers.authorization).toBe(`Bearer ${SKILL_AUTH}`);
      expect(outcome.error.message).toContain('"account":"acme"');
      expect(outcome.error.message).toContain('"apiToken":"[redacted]"');
      expectAbsent(JSON.stringify(outcome), [TOKEN, SKILL_AUTH]);

      const stored = await sql<{ outcome: string }>('SELECT outcome::text AS outcome FROM parked_calls WHERE id = $1', [id]);
      expect(stored[0].outcome).toContain('endpoint_error');
      expectAbsent(stored[0].outcome, [TOKEN, SKILL_AUTH]);
      const byId = await t.http.get(`/v1/projects/${gated}/invocations/${id}`).set(tenant.auth).expect(200);
      expect(byId.body.outcome).toEqual(outcome);
      const event = await eventOf(streams[1], 'tool.result', id);
      expect(event.data.error).toEqual({ code: 'endpoint_error', message: outcome.error.message, retryable: false });

      // An approved command with an env value: it ran, nothing of the value stays.
      const command = answered(
        await invoke(t, tenant, gated, 'shell_exec', { argv: ['sh', '-c', 'test -n "$TG_PLANTED"'], env: { TG_PLANTED: ENV } }),
      );
      expect(command.status).toBe(202);
      const ran = answered(
        await t.http.post(`/v1/projects/${gated}/invocations/${command.body.invocationId}/approve`).set(tenant.deciderAuth).send({}),
      );
      expect(ran.body.outcome).toMatchObject({ status: 'ok', result: { exitCode: 0 } });
    });

    it('[sec-95] refused: the caller, the MCP client, the audit and the validate span learn which rule failed, never the value', async () => {
      const refused = answered(await invoke(t, tenant, direct, 'vault_call', { account: 'acme', apiToken: BAD_TOKEN }));
      const { message } = expectRefusal(refused, 422, 'invalid_arguments');
      expect(message).toContain("/apiToken must match the pattern ^tok-[0-9a-f]+$, got '[redacted]");
      expectAbsent(refused.text, [BAD_TOKEN]);

      const overMcp = await mcpCall('vault_call', { account: 'acme', apiToken: BAD_TOKEN });
      expect(overMcp.isError).toBe(true);
      expect(textOf(overMcp)).toContain("got '[redacted]");

      // The refusal is an exception event of the validate span, as redacted as the answer.
      const exceptions = exporter
        .getFinishedSpans()
        .filter((s) => s.name === 'toolgate.validate')
        .flatMap((s) => s.events.filter((e) => e.name === 'exception'));
      const refusal = exceptions.find((e) => String(e.attributes?.['exception.message']).includes('/apiToken must match the pattern'));
      expect(refusal?.attributes).toMatchObject({
        'exception.message': expect.stringContaining("got '[redacted]"),
        'exception.stacktrace': expect.stringContaining("got '[redacted]"),
      });
      expectAbsent(spansText(), [BAD_TOKEN]);
    });

    it('[sec-95] failed upstream: the answer over REST and MCP, the stored idempotent answer and its replay are redacted alike', async () => {
      const key = `sec95-${hex(4)}`;
      const call = () => invoke(t, tenant, direct, 'vault_call', { account: 'acme', apiToken: TOKEN }).set('Idempotency-Key', key);
      const first = answered(await call());
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ status: 'error', error: { code: 'endpoint_error' } });
      expect(first.body.error.message).toContain('"apiToken":"[redacted]"');
      expectAbsent(first.text, [TOKEN, SKILL_AUTH]);
      const replay = answered(await call());
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      // Stored under the sending API key's id and the client's key.
      const stored = await sql<{ outcome: string | null }>("SELECT outcome FROM idempotency_keys WHERE key LIKE '%:' || $1", [key]);
      expect(stored).toHaveLength(1);
      expectAbsent(String(stored[0].outcome), [TOKEN, SKILL_AUTH]);

      const overMcp = await mcpCall('vault_call', { account: 'acme', apiToken: TOKEN });
      expect(overMcp).toMatchObject({ isError: true, structuredContent: { status: 'error', error: { code: 'endpoint_error' } } });
      expect(textOf(overMcp)).toContain('"apiToken":"[redacted]"');
    });

    it('[sec-95] timed out: a writeOnly value, an env value, an Authorization header and a URL key stay out of the timeout', async () => {
      const slow = answered(await invoke(t, tenant, direct, 'vault_slow', { account: 'acme', apiToken: TOKEN }, { timeoutMs: 300 }));
      expect(slow.body).toMatchObject({ status: 'timeout', error: { code: 'timeout' } });
      const command = answered(
        await invoke(t, tenant, direct, 'shell_exec', { argv: ['sleep', '5'], env: { TG_PLANTED: ENV } }, { timeoutMs: 300 }),
      );
      expect(command.body).toMatchObject({ status: 'timeout' });
      const fetched = answered(
        await invoke(t, tenant, direct, 'fetch_url', {
          url: receiver.url(`/slow?api_key=${FETCH_KEY}&q=1`),
          headers: { Authorization: `Bearer ${FETCH_AUTH}` },
          timeoutMs: 300,
        }),
      );
      expect(fetched.body).toMatchObject({ status: 'timeout', error: { code: 'timeout' } });
      lastCall = fetched.body.invocationId as string;
      // The message still says where it went, with the key masked.
      expect(fetched.body.error.message).toBe(`No response from ${receiver.url('/slow?api_key=[redacted]&q=1')} within 300 ms`);
      const row = (await rowsOf(direct)).find((r) => r.id === fetched.body.invocationId)!;
      expect(row).toMatchObject({
        arguments: { url: receiver.url('/slow?api_key=[redacted]&q=1'), headers: { Authorization: '[redacted]' }, timeoutMs: 300 },
        redactedPaths: ['/url', '/headers/Authorization'],
        errorMessage: fetched.body.error.message,
      });
    });

    it('[sec-95] traced: every call above left spans, and no span, attribute or exception event holds a planted value', async () => {
      expectAbsent(spansText(), planted);
      const spans = exporter.getFinishedSpans();
      expect(spans.filter((s) => s.name === 'toolgate.execute').length).toBeGreaterThanOrEqual(6);
      expect(spans.some((s) => s.events.some((e) => e.name === 'exception'))).toBe(true);
    });

    it('[sec-95] no planted value in the audit rows, the export, the events, the stored outcomes, the logs, the spans, the MCP results or the answers', async () => {
      // The last call's event has arrived: every event before it has too.
      await eventOf(streams[0], 'tool.error', lastCall);
      expectAbsent(await everyChannel(), planted);
    });
  });

  describe('[sec-96] credentials by name and by format, redacted in the audit and the export', () => {
    const V = {
      goog: plant(`goog-${hex()}`),
      dd: plant(`dd-${hex()}`),
      apim: plant(`apim-${hex()}`),
      query: plant(`query-${hex()}`),
      password: plant(`pw-${hex()}`),
      openai: plant(`sk-proj-${hex(20)}`),
      github: plant(`ghp_${hex(18)}`),
      aws: plant(`AKIA${hex(8).toUpperCase()}`),
      jwt: plant(`${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ sub: hex(8) })}.${hex(16)}`),
      inline: plant(`inline-${hex()}`),
    };
    let rows: Row[];

    beforeAll(async () => {
      const calls = [
        answered(
          await invoke(t, tenant, direct, 'fetch_url', {
            url: receiver.url(`/ok?api_key=${V.query}&q=shoes`),
            method: 'POST',
            headers: { 'X-Goog-Api-Key': V.goog, 'DD-API-KEY': V.dd, 'Ocp-Apim-Subscription-Key': V.apim, Accept: 'application/json' },
            body: JSON.stringify({ user: 'ann', password: V.password }),
          }),
        ),
        answered(
          await invoke(t, tenant, direct, 'shell_exec', {
            argv: ['sh', '-c', `OPENAI_API_KEY=${V.inline} true`],
            env: { OPENAI_API_KEY: V.openai },
          }),
        ),
        answered(
          await invoke(t, tenant, direct, 'write_file', {
            path: 'keys.txt',
            content: `openai ${V.openai}\ngithub ${V.github}\naws ${V.aws}\njwt ${V.jwt}\n`,
          }),
        ),
      ];
      for (const res of calls) expect({ status: res.status, tool: res.body.status }).toEqual({ status: 200, tool: 'ok' });
      rows = await rowsOf(direct);
    });

    it('[sec-96] the tools got the real values', () => {
      const received = receiver.to('/ok').at(-1)!;
      expect(received.url).toBe(`/ok?api_key=${V.query}&q=shoes`);
      expect([received.headers['x-goog-api-key'], received.headers['dd-api-key'], received.headers['ocp-apim-subscription-key']]).toEqual([
        V.goog,
        V.dd,
        V.apim,
      ]);
      expect(JSON.parse(received.body)).toEqual({ user: 'ann', password: V.password });
    });

    it('[sec-96] the audit keeps the shape and the harmless parts, with each credential replaced and its place named', () => {
      expect(rows.find((r) => r.tool === 'fetch_url' && r.status === 'ok')).toMatchObject({
        arguments: {
          url: receiver.url('/ok?api_key=[redacted]&q=shoes'),
          method: 'POST',
          headers: {
            'X-Goog-Api-Key': '[redacted]',
            'DD-API-KEY': '[redacted]',
            'Ocp-Apim-Subscription-Key': '[redacted]',
            Accept: 'application/json',
          },
          body: '{"user":"ann","password":"[redacted]"}',
        },
        redactedPaths: ['/url', '/headers/X-Goog-Api-Key', '/headers/DD-API-KEY', '/headers/Ocp-Apim-Subscription-Key', '/body'],
      });
      expect(rows.find((r) => r.tool === 'shell_exec' && r.status === 'ok')).toMatchObject({
        arguments: { argv: ['sh', '-c', 'OPENAI_API_KEY=[redacted] true'], env: { OPENAI_API_KEY: '[redacted]' } },
        redactedPaths: ['/argv/2', '/env/OPENAI_API_KEY'],
      });
      expect(rows.find((r) => r.tool === 'write_file')).toMatchObject({
        arguments: { path: 'keys.txt', content: 'openai [redacted]\ngithub [redacted]\naws [redacted]\njwt [redacted]\n' },
        redactedPaths: ['/content'],
      });
    });

    it('[sec-96] keyword, path and author are not credentials: a skill taking them is audited as called', async () => {
      const input = {
        type: 'object',
        properties: { keyword: { type: 'string' }, path: { type: 'string' }, author: { type: 'string' } },
        additionalProperties: false,
      };
      await installSkill(t, tenant, direct, skillOf([httpTool('search_docs', receiver.url('/ok'), input)]));
      const args = { keyword: 'rotate api keys', path: 'docs/auth/session-tokens.md', author: 'ann' };
      const res = answered(await invoke(t, tenant, direct, 'search_docs', args));
      expect(res.body.status).toBe('ok');
      expect((await rowsOf(direct)).find((r) => r.id === res.body.invocationId)).toMatchObject({ arguments: args, redactedPaths: [] });
    });

    it('[sec-96] no value appears in the listing or the export', async () => {
      expectAbsent(`${JSON.stringify(await rowsOf(direct))}\n${await exportOf(direct)}`, Object.values(V));
    });
  });

  describe('[sec-97] an MCP source URL with a credential in its query', () => {
    it('[sec-97] is shown masked by GET /v1/skills (its headers too), and the upstream gets the real URL', async () => {
      const skills = (await t.http.get('/v1/skills').set(tenant.auth).expect(200)).body.items as Array<{
        tools: Array<{ name: string; executor: Record<string, unknown> }>;
      }>;
      const executor = skills.flatMap((s) => s.tools).find((tool) => tool.name === 'echo')!.executor;
      expect(executor).toEqual({
        type: 'mcp',
        url: `${upstream.url}?api_key=[stored encrypted]`,
        headers: { Authorization: '[stored encrypted]' },
        tool: 'echo',
      });
      expectAbsent(JSON.stringify(await listSkills(t, tenant)), [URL_KEY, MCP_AUTH]);

      const res = answered(await invoke(t, tenant, direct, 'echo', { text: 'hi' }));
      expect(res.body).toMatchObject({ status: 'ok', result: { echo: 'hi' } });
      expect(upstream.requestUrls).toContain(`/mcp?api_key=${URL_KEY}`);
    });

    it('[sec-97] rests sealed in the database, like the header values', async () => {
      const rows = await sql<{ tools: string }>('SELECT tools::text AS tools FROM skills WHERE tools::text LIKE \'%"mcp"%\'');
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expectAbsent(row.tools, [URL_KEY, MCP_AUTH]);
        expect(row.tools).toMatch(/"url": "tgenc:v1:/);
      }
    });

    it('[sec-97] is never quoted whole in an error: upstream_too_large at call time, over REST and MCP, and in the audit', async () => {
      const res = answered(await invoke(t, tenant, direct, 'flood', {}));
      expect(res.body).toMatchObject({ status: 'error', error: { code: 'upstream_too_large' } });
      expect(res.body.error.message).toContain(`${upstream.url}?api_key=[redacted]`);
      const row = (await rowsOf(direct)).find((r) => r.id === res.body.invocationId)!;
      expect(row.errorMessage).toBe(res.body.error.message);
      const overMcp = await mcpCall('flood', {});
      expect(textOf(overMcp)).toContain('?api_key=[redacted]');
      expectAbsent(await everyChannel(), [URL_KEY, MCP_AUTH]);
    });

    it('[sec-97] is never quoted whole in a refused registration (too large an answer, a blocked address)', async () => {
      const hugeKey = plant(`hugekey-${hex()}`);
      const huge = answered(
        await postSkill(t, tenant, {
          name: uniqueName('huge'),
          version: '1.0.0',
          description: 'x',
          source: { type: 'mcp', url: receiver.url(`/huge?api_key=${hugeKey}`) },
        }),
      );
      expect(huge.status).toBeGreaterThanOrEqual(400);
      expect(huge.body.error.message).toContain(receiver.url('/huge?api_key=[redacted]'));
      const blockedKey = plant(`blockedkey-${hex()}`);
      const blocked = answered(
        await postSkill(t, tenant, {
          name: uniqueName('blocked'),
          version: '1.0.0',
          description: 'x',
          source: { type: 'mcp', url: `http://10.0.0.1:81/mcp?api_key=${blockedKey}` },
        }),
      );
      expectRefusal(blocked, 403, 'url_blocked');
      expect(blocked.body.error.message).toContain('http://10.0.0.1:81/mcp?api_key=[redacted]');
      expectAbsent(`${huge.text}\n${blocked.text}\n${JSON.stringify(t.logs)}\n${spansText()}`, [hugeKey, blockedKey]);
    });

    it('[sec-97] a source URL stored in clear by an earlier version is sealed at the next start', async () => {
      const database = await createTestDatabase();
      // Both apps use this database; the test closes it at the end.
      const closeDriver = database.driver.close.bind(database.driver);
      database.driver.close = () => Promise.resolve();
      const env = { FETCH_ALLOW_HOSTS: `127.0.0.1:${upstream.port}` };
      const legacyKey = plant(`legacykey-${hex()}`);
      let app = await createTestApp({ database, env });
      try {
        const owner = await app.createTenant();
        const body = {
          name: uniqueName('legacy'),
          version: '1.0.0',
          description: 'x',
          source: { type: 'mcp', url: `${upstream.url}?api_key=${legacyKey}`, tools: ['echo'] },
        };
        expect((await postSkill(app, owner, body)).status).toBe(201);
        // What an earlier version stored: the signing secret sealed, the executor's URL in clear.
        await app.app
          .get<DatabaseDriver>(DATABASE_DRIVER)
          .query(`UPDATE skills SET tools = jsonb_set(tools, '{0,executor,url}', to_jsonb($1::text)) WHERE name = $2`, [
            `${upstream.url}?api_key=${legacyKey}`,
            body.name,
          ]);
        await app.close();
        app = await createTestApp({ database, env });
        const [row] = await app.app
          .get<DatabaseDriver>(DATABASE_DRIVER)
          .query<{ tools: string }>('SELECT tools::text AS tools FROM skills WHERE name = $1', [body.name]);
        expectAbsent(row.tools, [legacyKey]);
        expect(row.tools).toMatch(/"url": "tgenc:v1:/);
      } finally {
        await app.close();
        await closeDriver();
        await database.close();
      }
    });
  });
});

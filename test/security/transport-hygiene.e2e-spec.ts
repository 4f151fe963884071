import { jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo, isIP } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { TestApp, TestTenant } from '../support/test-app.js';
import { eventually } from '../support/eventually.js';
import { AuditTrail, expectRefusal, invoke, invokeRaw } from './security-helpers.js';

// docs/security-model.md, cases 71-76 (transport hygiene), over real HTTP against the real app: the MCP endpoint's
// Origin and Host checks, caps on open event streams, slow clients cut at their timeouts, hostile bodies
// (nesting, invalid UTF-8), names that read as other names, what the public health routes tell, and skill
// endpoints at refused addresses. Name resolution is scripted for names under .sec-test.example (as in
// fetch-url.e2e-spec.ts); the rest go to the system resolver.

const realDns = await import('node:dns/promises');
const SCRIPTED: Record<string, string[]> = {
  'loopback.sec-test.example': ['127.0.0.1'],
  'metadata.sec-test.example': ['169.254.169.254'],
};
const scriptedLookup = async (hostname: string, options?: { all?: boolean }) => {
  const script = SCRIPTED[hostname.toLowerCase()];
  // Stands for a name nobody has published yet (until a test scripts it).
  if (!script && hostname.toLowerCase() === 'nowhere.sec-test.example')
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  if (!script) return realDns.lookup(hostname, options as never);
  const answers = script.map((address) => ({ address, family: isIP(address) }));
  return options?.all ? answers : answers[0];
};
jest.unstable_mockModule('node:dns/promises', () => ({
  ...realDns,
  default: { ...realDns.default, lookup: scriptedLookup },
  lookup: scriptedLookup,
}));
const { createTestApp } = await import('../support/test-app.js');

const ALLOWED_ORIGIN = 'https://agent.example.com';
const MCP_ACCEPT = { Accept: 'application/json, text/event-stream' };
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

// A plain listener that counts the connections made to it: a refused address must see none.
class Victim {
  connections = 0;
  port = 0;
  private readonly server = http.createServer((_req, res) => res.end('{}'));

  async start(host: string): Promise<this> {
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((resolve) => this.server.listen(0, host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface OpenedStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  close(): void;
}

// GET .../events on a connection of its own; a 200 stays open until closed, any other answer is read whole.
function openStream(port: number, projectId: string, auth: Record<string, string>): Promise<OpenedStream> {
  return new Promise((resolve, reject) => {
    const req = http.get({
      host: '127.0.0.1',
      port,
      path: `/v1/projects/${projectId}/events`,
      agent: false,
      headers: { ...auth, accept: 'text/event-stream' },
    });
    req.once('error', reject);
    req.once('response', (res) => {
      const close = () => req.destroy();
      if (res.statusCode === 200) {
        res.on('error', () => undefined);
        return resolve({ status: 200, headers: res.headers, body: '', close });
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, close }));
    });
  });
}

// POSTs the bytes exactly as given (a client library would re-encode a string as UTF-8).
function postBytes(
  port: number,
  url: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: url,
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': body.length },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

// A raw connection that sends `parts` one after another, `gapMs` apart, and resolves with everything the
// server answered once it closed the connection.
function slowClient(port: number, parts: string[], gapMs: number): { closed: Promise<string> } {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    }),
  );
  socket.once('connect', () => {
    let i = 0;
    const next = () => {
      if (i >= parts.length || socket.destroyed) return;
      socket.write(parts[i++]);
      timer = setTimeout(next, gapMs);
    };
    next();
  });
  // A connection the server never closes fails the test at its timeout; the guard only keeps it from leaking.
  setTimeout(() => socket.destroy(), 20_000).unref();
  return { closed };
}

const answerOf = (raw: string) => {
  const [head, ...rest] = raw.split('\r\n\r\n');
  return { statusLine: head.split('\r\n')[0], body: rest.join('\r\n\r\n') };
};

describe('transport hygiene', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let other: TestTenant;
  let projectId: string;
  let otherProjectId: string;
  let ws: string;
  let audit: AuditTrail;
  let port: number;
  let opened: Victim;

  const mcp = (headers: Record<string, string>, body: unknown, project = projectId) =>
    t.http
      .post(`/v1/projects/${project}/mcp`)
      .set(tenant.auth)
      .set(MCP_ACCEPT)
      .set(headers)
      .send(body as object);
  const toolsList = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
  const writeCall = (file: string) => ({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'write_file', arguments: { path: file, content: 'x' } },
  });

  beforeAll(async () => {
    opened = await new Victim().start('127.0.0.1');
    t = await createTestApp({
      env: { MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN, SSE_MAX_STREAMS_PER_TENANT: '30', FETCH_ALLOW_HOSTS: `127.0.0.1:${opened.port}` },
    });
    tenant = await t.createTenant();
    other = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
    otherProjectId = (await t.createProject(other)).id;
    ws = t.workspaceOf(projectId);
    audit = new AuditTrail(t, tenant, projectId);
    port = t.port;
  });
  afterAll(async () => {
    await t?.close();
    await opened?.close();
  });

  describe('[sec-71] the MCP endpoint checks Origin and Host', () => {
    it('[sec-71] refuses a foreign Origin with 403 origin_not_allowed, and nothing runs', async () => {
      const before = (await audit.rows()).length;
      for (const origin of ['https://evil.example', 'http://127.0.0.1:1', 'null', `http://localhost:${port}.evil.example`]) {
        const res = await mcp({ Origin: origin }, writeCall('from-evil.txt'));
        const { message } = expectRefusal(res, 403, 'origin_not_allowed');
        expect(message).toContain('MCP_ALLOWED_ORIGINS');
      }
      expect(existsSync(path.join(ws, 'from-evil.txt'))).toBe(false);
      expect((await audit.rows()).length).toBe(before);
    });

    it('[sec-71] refuses a Host that is not one of the service’s names (DNS rebinding) with 403 host_not_allowed, and nothing runs', async () => {
      const before = (await audit.rows()).length;
      // The rebinding page sends its own name as Host, and as Origin: the two agree, the name is not ours.
      for (const host of [`attacker.example:${port}`, 'attacker.example', `127.0.0.1.nip.io:${port}`]) {
        const res = await mcp({ Host: host, Origin: `http://${host}` }, writeCall('rebound.txt'));
        const { message } = expectRefusal(res, 403, 'host_not_allowed');
        expect(message).toContain('ALLOWED_HOSTS');
      }
      expect(existsSync(path.join(ws, 'rebound.txt'))).toBe(false);
      expect((await audit.rows()).length).toBe(before);
    });

    it('[sec-71] answers a client without Origin, the service’s own origin and one in MCP_ALLOWED_ORIGINS, on its own names', async () => {
      const cases: Array<Record<string, string>> = [
        {},
        { Origin: `http://127.0.0.1:${port}` },
        { Origin: ALLOWED_ORIGIN },
        { Host: `localhost:${port}`, Origin: `http://localhost:${port}` },
        { Host: `[::1]:${port}` },
      ];
      for (const headers of cases) {
        const res = await mcp(headers, toolsList);
        expect({ headers, status: res.status }).toEqual({ headers, status: 200 });
        expect(res.body.result.tools.length).toBeGreaterThanOrEqual(10);
      }
      // The REST routes are not browser-facing in the same way and keep answering any Host.
      await t.http.get('/v1/projects').set(tenant.auth).set('Host', 'attacker.example').expect(200);
    });

    it('[sec-71] with ALLOWED_HOSTS set, answers those names (and subdomains of a *. entry) only', async () => {
      const named = await createTestApp({ env: { ALLOWED_HOSTS: 'toolgate.example.com,*.corp.example' } });
      try {
        const someone = await named.createTenant();
        const project = (await named.createProject(someone)).id;
        const call = (host: string) =>
          named.http.post(`/v1/projects/${project}/mcp`).set(someone.auth).set(MCP_ACCEPT).set('Host', host).send(toolsList);
        expect((await call('toolgate.example.com')).status).toBe(200);
        expect((await call('TOOLGATE.example.com.:8443')).status).toBe(200);
        expect((await call('gw.corp.example')).status).toBe(200);
        expectRefusal(await call('127.0.0.1'), 403, 'host_not_allowed');
        expectRefusal(await call('corp.example.evil.example'), 403, 'host_not_allowed');
      } finally {
        await named.close();
      }
    });
  });

  describe('[sec-72] open event streams and slow clients', () => {
    it('[sec-72] 300 streams on one key: 20 open, the rest 429 too_many_streams with Retry-After; the tenant cap holds across its keys; other tenants keep answering', async () => {
      const streams = await Promise.all(Array.from({ length: 300 }, () => openStream(port, projectId, tenant.auth)));
      const secondKey = await t.http.post(`/v1/admin/tenants/${tenant.id}/api-keys`).set(t.admin).send({ name: 'second' }).expect(201);
      const second = { Authorization: `Bearer ${secondKey.body.key}` };
      const more: OpenedStream[] = [];
      try {
        expect(streams.filter((s) => s.status === 200)).toHaveLength(20);
        const refused = streams.filter((s) => s.status !== 200);
        expect(refused).toHaveLength(280);
        for (const s of refused) {
          expect(s.status).toBe(429);
          expect(s.headers['retry-after']).toMatch(/^\d+$/);
          expect(JSON.parse(s.body)).toMatchObject({
            error: { code: 'too_many_streams', message: expect.stringContaining('SSE_MAX_STREAMS_PER_KEY') },
          });
        }
        // The tenant's cap (30 here) counts every key of the tenant.
        for (let i = 0; i < 10; i++) more.push(await openStream(port, projectId, second));
        expect(more.map((s) => s.status)).toEqual(Array(10).fill(200));
        const overTenant = await openStream(port, projectId, second);
        expect(overTenant.status).toBe(429);
        expect(JSON.parse(overTenant.body).error.message).toContain('SSE_MAX_STREAMS_PER_TENANT');

        const theirs = await openStream(port, otherProjectId, other.auth);
        expect(theirs.status).toBe(200);
        theirs.close();
        await t.http.get('/v1/projects').set(other.auth).expect(200);
      } finally {
        for (const s of [...streams, ...more]) s.close();
      }
      // Closed streams give their slots back.
      await eventually(
        async () => {
          const again = await Promise.all(Array.from({ length: 20 }, () => openStream(port, projectId, tenant.auth)));
          again.forEach((s) => s.close());
          expect(again.map((s) => s.status)).toEqual(Array(20).fill(200));
        },
        40,
        100,
      );
    }, 60_000);

    describe('with a 1 s header and a 2 s request timeout', () => {
      let slow: TestApp;
      let slowPort: number;
      let slowTenant: TestTenant;
      let slowOther: TestTenant;
      let slowProject: string;

      beforeAll(async () => {
        slow = await createTestApp({ env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000' } });
        slowTenant = await slow.createTenant();
        slowOther = await slow.createTenant();
        slowProject = (await slow.createProject(slowTenant)).id;
        slowPort = slow.port;
      });
      afterAll(() => slow?.close());

      it('[sec-72] closes a connection that sends its headers slowly with 408 request_timeout, while other tenants keep answering', async () => {
        const drip = 'GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '.split('');
        const clients = Array.from({ length: 5 }, () => slowClient(slowPort, drip, 300));
        // Meanwhile the service answers another tenant.
        await slow.http.get('/v1/projects').set(slowOther.auth).expect(200);
        for (const client of clients) {
          const { statusLine, body } = answerOf(await client.closed);
          expect(statusLine).toBe('HTTP/1.1 408 Request Timeout');
          expect(JSON.parse(body)).toMatchObject({ error: { code: 'request_timeout' } });
        }
        await slow.http.get('/v1/projects').set(slowOther.auth).expect(200);
      });

      it('[sec-72] closes a connection that sends its body slowly with 408, and the call never runs', async () => {
        const body = JSON.stringify({ arguments: { path: 'slow-body.txt', content: 'x'.repeat(40) } });
        const head =
          `POST /v1/projects/${slowProject}/tools/write_file/invoke HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: ${slowTenant.auth.Authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
        // The headers at once, then the body a byte at a time: never idle, never finished in time.
        const client = slowClient(slowPort, [head, ...body.split('')], 200);
        await slow.http.get('/v1/projects').set(slowOther.auth).expect(200);
        const { statusLine, body: answer } = answerOf(await client.closed);
        expect(statusLine).toBe('HTTP/1.1 408 Request Timeout');
        expect(JSON.parse(answer)).toMatchObject({ error: { code: 'request_timeout', message: expect.stringContaining('in time') } });
        expect(existsSync(path.join(slow.workspaceOf(slowProject), 'slow-body.txt'))).toBe(false);
        // A request sent at once is not affected.
        const fast = await slow.http
          .post(`/v1/projects/${slowProject}/tools/write_file/invoke`)
          .set(slowTenant.auth)
          .send(JSON.parse(body))
          .expect(200);
        expect(fast.body.status).toBe('ok');
      });
    });
  });

  describe('[sec-73] hostile bodies', () => {
    beforeEach(() => audit.skip());

    it('[sec-73] refuses arguments nested 200,000 deep with an Idempotency-Key as without: 422, audited, and the key stays free', async () => {
      const key = `deep-${randomUUID()}`;
      const deep = `{"arguments": {"path": "deep.txt", "content": "x", "deep": ${nested(200_000)}}}`;
      const keyed = await invokeRaw(t, tenant, projectId, 'write_file', deep).set('Idempotency-Key', key);
      expect(keyed.body.error?.message).toMatch(/nested more than \d+ levels/);
      expectRefusal(keyed, 422, 'invalid_arguments');
      expectRefusal(await invokeRaw(t, tenant, projectId, 'write_file', deep), 422, 'invalid_arguments');
      await eventually(() =>
        audit.expectRows('invalid_arguments', [
          { tool: 'write_file', errorCode: 'invalid_arguments' },
          { tool: 'write_file', errorCode: 'invalid_arguments' },
        ]),
      );
      expect(existsSync(path.join(ws, 'deep.txt'))).toBe(false);
      // A refusal stores no answer: the corrected retry with the same key runs.
      const retry = await invoke(t, tenant, projectId, 'write_file', { path: 'deep.txt', content: 'x' })
        .set('Idempotency-Key', key)
        .expect(200);
      expect(retry.body.status).toBe('ok');
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
    });

    it('[sec-73] refuses a JSON body that is not valid UTF-8 with 400 invalid_json instead of decoding it to U+FFFD', async () => {
      const url = `/v1/projects/${projectId}/tools/write_file/invoke`;
      const withBytes = (bytes: number[]) =>
        Buffer.concat([Buffer.from('{"arguments": {"path": "bad-'), Buffer.from(bytes), Buffer.from('.txt", "content": "x"}}')]);
      // 0xFF 0xFE never occur in UTF-8; C0 AF is an overlong '/', ED A0 80 half of a surrogate pair.
      for (const bytes of [
        [0xff, 0xfe],
        [0xc0, 0xaf],
        [0xed, 0xa0, 0x80],
      ]) {
        const res = await postBytes(port, url, tenant.auth, withBytes(bytes));
        expect({ bytes, status: res.status }).toEqual({ bytes, status: 400 });
        expect(res.body).toMatchObject({ error: { code: 'invalid_json', message: expect.stringContaining('UTF-8') } });
      }
      expect(existsSync(path.join(ws, 'bad-\ufffd\ufffd.txt'))).toBe(false);
      // The same on the MCP endpoint, which reads its body through the same parser.
      const mcpBody = Buffer.concat([
        Buffer.from('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "mcp-'),
        Buffer.from([0xff]),
        Buffer.from('.txt", "content": "x"}}}'),
      ]);
      const viaMcp = await postBytes(port, `/v1/projects/${projectId}/mcp`, { ...tenant.auth, ...MCP_ACCEPT }, mcpBody);
      expect(viaMcp).toMatchObject({ status: 400, body: { error: { code: 'invalid_json' } } });
      expect(existsSync(path.join(ws, 'mcp-\ufffd.txt'))).toBe(false);
      // Valid multi-byte UTF-8 is taken as written.
      const fine = await postBytes(
        port,
        url,
        tenant.auth,
        Buffer.from(JSON.stringify({ arguments: { path: 'café-😀.txt', content: 'x' } })),
      );
      expect(fine).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(existsSync(path.join(ws, 'café-😀.txt'))).toBe(true);
    });
  });

  describe('[sec-74] names that read as other names', () => {
    beforeEach(() => audit.skip());

    it.each([
      ['write_file', (name: string) => ({ path: name, content: 'x' })],
      ['move_file', (name: string) => ({ source: 'movable.txt', destination: name })],
      ['edit_file', (name: string) => ({ path: name, edits: [{ oldText: 'a', newText: 'b' }] })],
    ] as const)('[sec-74] %s refuses a name holding U+202E, U+2066 or a control character, naming the character', async (tool, args) => {
      await writeFile(path.join(ws, 'movable.txt'), 'a');
      const cases = [
        ['invoice\u202Efdp.exe', 'U+202E RIGHT-TO-LEFT OVERRIDE'],
        ['notes\u2066.txt', 'U+2066 LEFT-TO-RIGHT ISOLATE'],
        ['line\nbreak.txt', 'U+000A LINE FEED'],
        ['bell\u0007.txt', 'U+0007 BELL'],
        ['esc\u001b[31m.txt', 'U+001B ESCAPE'],
        ['del\u007f.txt', 'U+007F DELETE'],
        ['dir\u202A/inner.txt', 'U+202A LEFT-TO-RIGHT EMBEDDING'],
      ] as const;
      for (const [name, named] of cases) {
        const res = await invoke(t, tenant, projectId, tool, args(name));
        const { message } = expectRefusal(res, 400, 'invalid_path');
        expect({ name, message }).toEqual({ name, message: expect.stringContaining(named) });
        // The message itself carries no character that would reorder or rewrite what a person reads.
        expect(message).not.toMatch(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/);
        expect(existsSync(path.join(ws, name))).toBe(false);
      }
      expect(existsSync(path.join(ws, 'movable.txt'))).toBe(true);
      await audit.expectRows(
        'denied',
        cases.map(() => ({ tool, errorCode: 'invalid_path' })),
      );
    });

    it('[sec-74] still reads, moves away and deletes an entry that already has such a name (only new names are refused)', async () => {
      const legacy = 'legacy\u202Etxt.sh';
      await writeFile(path.join(ws, legacy), 'made by a command');
      const read = await invoke(t, tenant, projectId, 'read_file', { path: legacy }).expect(200);
      expect(read.body).toMatchObject({ status: 'ok', result: { content: 'made by a command' } });
      const moved = await invoke(t, tenant, projectId, 'move_file', { source: legacy, destination: 'renamed.sh' }).expect(200);
      expect(moved.body.status).toBe('ok');
      expect(existsSync(path.join(ws, 'renamed.sh'))).toBe(true);
    });
  });

  describe('[sec-75] the public health routes', () => {
    it('[sec-75] answer their status only: no versions, instance id, queue depths, errors or host names', async () => {
      const operator = (await t.http.get('/health/ready').set(t.admin).expect(200)).body as {
        commandSandbox: { version?: string };
        changeBus: { instanceId: string };
        auditQueue: { capacity: number };
      };
      expect(operator.changeBus.instanceId).toMatch(/^[0-9a-f]{8}$/);
      for (const auth of [{}, tenant.auth, { Authorization: 'Bearer not-the-admin-token-at-all' }]) {
        for (const route of ['/health/live', '/health/ready']) {
          const res = await t.http.get(route).set(auth).expect(200);
          expect({ route, body: res.body }).toEqual({ route, body: { status: 'ok' } });
          expect(res.text).not.toContain(operator.changeBus.instanceId);
          if (operator.commandSandbox.version) expect(res.text).not.toContain(operator.commandSandbox.version);
          expect(res.text).not.toMatch(/127\.0\.0\.1|localhost|postgres|pglite|bwrap|capacity|pending/i);
        }
      }
    });
  });

  describe('[sec-76] skill endpoints at refused addresses', () => {
    let loopback: Victim;
    let loopbackV6: Victim;

    beforeAll(async () => {
      loopback = await new Victim().start('127.0.0.1');
      loopbackV6 = await new Victim().start('::1');
    });
    afterAll(async () => {
      await loopback?.close();
      await loopbackV6?.close();
    });

    const httpSkill = (url: string) => ({
      name: `hook_${randomUUID().slice(0, 8)}`,
      version: '1.0.0',
      description: 'Posts to an endpoint',
      tools: [
        {
          name: 'hook',
          description: 'Posts its arguments',
          inputSchema: { type: 'object', properties: {} },
          executor: { type: 'http', url },
        },
      ],
    });
    const mcpSource = (url: string) => ({
      name: `mcp_${randomUUID().slice(0, 8)}`,
      version: '1.0.0',
      description: 'An MCP server',
      source: { type: 'mcp', url },
    });
    const register = (body: unknown) =>
      t.http
        .post('/v1/skills')
        .set(tenant.auth)
        .send(body as object);

    it('[sec-76] refuses an http skill or an MCP source at 127.0.0.1, 169.254.169.254 or [::1] at registration with url_blocked, and stores and contacts nothing', async () => {
      const before = (await t.http.get('/v1/skills').set(tenant.auth).expect(200)).body.items.length as number;
      const urls = [
        [`http://127.0.0.1:${loopback.port}/hook`, /loopback/],
        ['http://169.254.169.254/latest/meta-data/', /metadata/],
        [`http://[::1]:${loopbackV6.port}/hook`, /loopback/],
        // A name is judged by what it resolves to now.
        [`http://loopback.sec-test.example:${loopback.port}/hook`, /resolves to 127\.0\.0\.1/],
        ['http://metadata.sec-test.example/latest/', /169\.254\.169\.254/],
      ] as const;
      for (const [url, reason] of urls) {
        for (const body of [httpSkill(url), mcpSource(url)]) {
          const { message } = expectRefusal(await register(body), 403, 'url_blocked');
          expect({ url, message }).toEqual({ url, message: expect.stringMatching(reason) });
        }
      }
      // An mcp executor written out in `tools` is judged the same way.
      const mcpTool = httpSkill('');
      mcpTool.tools[0].executor = { type: 'mcp', url: `http://127.0.0.1:${loopback.port}/mcp`, tool: 'x' } as never;
      expectRefusal(await register(mcpTool), 403, 'url_blocked');
      expect(loopback.connections).toBe(0);
      expect(loopbackV6.connections).toBe(0);
      expect((await t.http.get('/v1/skills').set(tenant.auth).expect(200)).body.items).toHaveLength(before);
    });

    it('[sec-76] accepts an address FETCH_ALLOW_HOSTS opens, and a name that does not resolve yet; each call is judged again', async () => {
      await register(httpSkill(`http://127.0.0.1:${opened.port}/hook`)).expect(201);
      // Nothing to reach through it now; its calls are judged by what it resolves to then.
      const later = await register(httpSkill('http://nowhere.sec-test.example/hook')).expect(201);
      // A name that passed at registration and points at loopback by the time of the call is refused then.
      SCRIPTED['nowhere.sec-test.example'] = ['127.0.0.1'];
      try {
        await t.http.post(`/v1/projects/${projectId}/skills`).set(tenant.auth).send({ skillId: later.body.id }).expect(201);
        const { message } = expectRefusal(await invoke(t, tenant, projectId, 'hook', {}), 403, 'url_blocked');
        expect(message).toMatch(/resolves to 127\.0\.0\.1/);
      } finally {
        delete SCRIPTED['nowhere.sec-test.example'];
      }
      expect(opened.connections).toBe(0);
      expect(loopback.connections).toBe(0);
    });
  });
  describe('answers a browser or a cache must not keep or frame', () => {
    it('sends a new API key and a skill’s signing secret with Cache-Control: no-store', async () => {
      const own = await t.http.post('/v1/api-keys').set(tenant.auth).send({ name: 'rotation' }).expect(201);
      expect(own.headers['cache-control']).toBe('no-store');
      const issued = await t.http.post(`/v1/admin/tenants/${tenant.id}/api-keys`).set(t.admin).send({ name: 'ci' }).expect(201);
      expect(issued.headers['cache-control']).toBe('no-store');
      const skill = await t.http
        .post('/v1/skills')
        .set(tenant.auth)
        .send({
          name: `echo_${randomUUID().slice(0, 8)}`,
          version: '1.0.0',
          description: 'Echo',
          tools: [
            {
              name: 'say',
              description: 'Says hello',
              inputSchema: { type: 'object', properties: {} },
              executor: { type: 'command', argv: ['echo', 'hello'] },
            },
          ],
        })
        .expect(201);
      expect(skill.body.signingSecret).toMatch(/^tgs_/);
      expect(skill.headers['cache-control']).toBe('no-store');
    });

    it('serves /docs, its assets and /openapi.json with a CSP that forbids framing and foreign scripts, and nosniff', async () => {
      for (const url of ['/docs', '/docs/swagger-ui-init.js', '/docs/swagger-ui.css', '/openapi.json']) {
        const res = await t.http.get(url).redirects(1).expect(200);
        const csp = String(res.headers['content-security-policy']);
        expect({ url, csp }).toEqual({ url, csp: expect.stringContaining("frame-ancestors 'none'") });
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("default-src 'none'");
        expect(csp).not.toMatch(/script-src[^;]*unsafe/);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['referrer-policy']).toBe('no-referrer');
      }
    });
  });
});

import http from 'node:http';
import net from 'node:net';
import { createTestApp, type TestApp, type TestTenant } from '../support/test-app.js';

// docs/security-model.md, case 126: requests that were going to be refused had their bodies read first.
// Body parsers run before the guards, so 1 MB bodies posted with a made-up key (401), or by a tenant past
// its requests limit (429), were each read, checked and parsed on the event loop: another tenant's p99 went
// 117-138x in an outsider's flood. A large body is now read only for a request its key lets through.

interface RawAnswer {
  head: string;
  body: string;
  // Whether the service closed the connection, and how much of the declared body had been sent by then.
  closed: boolean;
}

// Declares a 1 MB JSON body, sends only its first bytes, and waits for the answer: one that comes had been
// decided without the body.
function postDeclaringLargeBody(t: TestApp, path: string, key: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: t.port });
    const received: Buffer[] = [];
    let closed = false;
    const finish = () => {
      const text = Buffer.concat(received).toString('utf8');
      const at = text.indexOf('\r\n\r\n');
      resolve({ head: text.slice(0, at), body: text.slice(at + 4), closed });
    };
    const timer = setTimeout(() => (socket.destroy(), finish()), 5_000);
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      finish();
    });
    socket.on('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${1024 * 1024}\r\n\r\n{"arguments": {"path": "`,
      );
    });
  });
}

describe('[sec-126] requests refused before their large bodies are read', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let project: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_REQUESTS: '12' } });
    tenant = await t.createTenant();
    project = (await t.createProject(tenant)).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 401 to a made-up key of the right form without reading the body, and closes the connection', async () => {
    const madeUp = `tg_${'0123456789ab'}_${'f'.repeat(64)}`;
    const answer = await postDeclaringLargeBody(t, `/v1/projects/${project}/tools/read_file/invoke`, madeUp);
    expect(answer.head).toMatch(/^HTTP\/1\.1 401/);
    expect(answer.head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: 'unauthorized', message: 'The API key is invalid or has been revoked' },
    });
    expect(JSON.parse(answer.body).requestId).toEqual(expect.any(String));
    expect(answer.closed).toBe(true);
  });

  it('answers 401 to a token of another form the same way', async () => {
    const path = `/v1/projects/${project}/tools/read_file/invoke`;
    const other = await postDeclaringLargeBody(t, path, 'tg_bogus_key_0000000000000000');
    expect(other.head).toMatch(/^HTTP\/1\.1 401/);
    expect(JSON.parse(other.body)).toMatchObject({ error: { code: 'unauthorized' } });
    expect(other.closed).toBe(true);
  });

  it('reads the body of a request its key lets through, large or not', async () => {
    const content = 'x'.repeat(200 * 1024);
    const res = await t.http
      .post(`/v1/projects/${project}/tools/write_file/invoke`)
      .set('Authorization', `Bearer ${tenant.key}`)
      .send({ arguments: { path: 'large.txt', content } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok' });
  });

  it('leaves a bad key at an MCP endpoint to the guard, whose 401 names where to sign in', async () => {
    const madeUp = `tg_${'abcdefabcdef'}_${'0'.repeat(64)}`;
    const res = await t.http
      .post(`/v1/projects/${project}/mcp`)
      .set('Authorization', `Bearer ${madeUp}`)
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { padding: 'p'.repeat(100 * 1024) } });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/resource_metadata=/);
  });

  it('answers 429 to a tenant past its requests limit without reading the body, with Retry-After', async () => {
    const list = () => t.http.get(`/v1/projects/${project}/tools`).set('Authorization', `Bearer ${tenant.key}`);
    let last = await list();
    for (let i = 0; i < 20 && last.status !== 429; i++) last = await list();
    expect(last.status).toBe(429);
    const answer = await postDeclaringLargeBody(t, `/v1/projects/${project}/tools/read_file/invoke`, tenant.key);
    expect(answer.head).toMatch(/^HTTP\/1\.1 429/);
    expect(answer.head).toMatch(/retry-after: \d+/i);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'rate_limited' } });
    expect(answer.closed).toBe(true);
    // A small request too, before Nest's pipeline: the same 429. With no body to leave unread, its
    // connection is kept, as any answer's is (closing it would cost a new connection per refusal).
    const agent = new http.Agent({ keepAlive: true });
    const small = await new Promise<{ status?: number; connection?: string; body: string }>((resolve, reject) => {
      const headers = { authorization: `Bearer ${tenant.key}` };
      http
        .get({ host: '127.0.0.1', port: t.port, path: `/v1/projects/${project}/tools`, agent, headers }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
        })
        .on('error', reject);
    });
    agent.destroy();
    expect(small.status).toBe(429);
    expect(small.connection).toBe('keep-alive');
    expect(JSON.parse(small.body)).toMatchObject({ error: { code: 'rate_limited' } });
  });
});

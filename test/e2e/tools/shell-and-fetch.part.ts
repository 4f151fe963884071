import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually } from '../../support/eventually.js';
import { createTestApp, type TestApp, type TestTenant } from '../../support/test-app.js';
import { expectNoProcess, uniqueSleep, waitForProcess } from '../../support/processes.js';
import { callTool, SHELL_PROJECT } from './tool-test-kit.js';

// The command of the timeout tests: a background child that would outlive its shell, its pid written down.
// Two sleeps of a unique length: one in the background, so the kill must reach more than the command itself.
const sleeperWithChild = (marker: string) => ['sh', '-c', `sleep ${marker} & sleep ${marker}`];

describe('shell_exec', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let ws: string;

  const shell = (args: Record<string, unknown>, options: { timeoutMs?: number } = {}) =>
    callTool(t, tenant, projectId, 'shell_exec', args, options);
  const ran = async (args: Record<string, unknown>) => {
    const res = await shell(args).expect(200);
    expect(res.body.status).toBe('ok');
    return res.body.result as { exitCode: number | null; signal: string | null; stdout: string; stderr: string; timedOut: boolean };
  };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant, SHELL_PROJECT)).id;
    ws = t.workspaceOf(projectId);
  });
  afterAll(() => t.close());

  it('runs a command and answers its exit code, stdout and stderr', async () => {
    expect(await ran({ argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'] })).toEqual({
      exitCode: 3,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      stdoutTruncated: false,
      stderrTruncated: false,
      killed: null,
      note: null,
      durationMs: expect.any(Number),
    });
  });

  it('[sec-27] passes each argv element as one literal argument, with no shell in between', async () => {
    const hostile = '; echo injected $(id) `id` | cat > pwned.txt';
    expect((await ran({ argv: ['echo', hostile] })).stdout).toBe(`${hostile}\n`);
    expect((await ran({ argv: ['printf', '%s\n', 'a b', '*'] })).stdout).toBe('a b\n*\n');
  });

  it('writes stdin to the command', async () => {
    expect((await ran({ argv: ['cat'], stdin: 'line 1\nline 2\n' })).stdout).toBe('line 1\nline 2\n');
  });

  it("[sec-31] passes the extra environment, and none of the service's own", async () => {
    process.env.TOOLGATE_PROBE_SECRET = 'must-not-leak';
    try {
      const result = await ran({ argv: ['sh', '-c', 'printf "%s|%s" "$GREETING" "$TOOLGATE_PROBE_SECRET"'], env: { GREETING: 'hello' } });
      expect(result.stdout).toBe('hello|');
    } finally {
      delete process.env.TOOLGATE_PROBE_SECRET;
    }
    const refused = await shell({ argv: ['echo'], env: { LD_PRELOAD: '/tmp/evil.so' } }).expect(400);
    expect(refused.body.error.code).toBe('invalid_env');
  });

  it('runs in the workspace, or in a directory of it given as cwd', async () => {
    await mkdir(path.join(ws, 'sub'), { recursive: true });
    await writeFile(path.join(ws, 'sub/notes.txt'), 'from sub\n');
    expect((await ran({ argv: ['cat', 'notes.txt'], cwd: 'sub' })).stdout).toBe('from sub\n');
    expect((await ran({ argv: ['cat', 'sub/notes.txt'] })).stdout).toBe('from sub\n');
    const outside = await shell({ argv: ['cat', 'passwd'], cwd: '/etc' }).expect(403);
    expect(outside.body.error.code).toBe('path_outside_workspace');
  });

  it('[sec-28] refuses a command that is not on the allow-list with 403, naming the allowed ones', async () => {
    const res = await shell({ argv: ['ls', '-la'] }).expect(403);
    expect(res.body.error).toEqual({
      code: 'command_not_allowed',
      message: expect.stringContaining('echo, sh, sleep, cat, printf'),
      details: { command: 'ls', allowed: SHELL_PROJECT.shellAllowlist },
    });
    expect((await shell({ argv: ['./sh', '-c', 'true'] }).expect(403)).body.error.code).toBe('command_not_allowed');
  });

  it('follows the project settings: disabled by default, enabled and narrowed with PATCH at once', async () => {
    const other = await t.createProject(tenant);
    const run = (argv: string[]) => callTool(t, tenant, other.id, 'shell_exec', { argv });
    expect((await run(['echo', 'hi']).expect(403)).body.error.code).toBe('shell_disabled');
    await t.http
      .patch(`/v1/projects/${other.id}`)
      .set(tenant.auth)
      .send({ shellEnabled: true, shellAllowlist: ['echo'] })
      .expect(200);
    expect((await run(['echo', 'hi']).expect(200)).body.result.stdout).toBe('hi\n');
    await t.http
      .patch(`/v1/projects/${other.id}`)
      .set(tenant.auth)
      .send({ shellAllowlist: ['printf'] })
      .expect(200);
    expect((await run(['echo', 'hi']).expect(403)).body.error.code).toBe('command_not_allowed');
    await t.http.patch(`/v1/projects/${other.id}`).set(tenant.auth).send({ shellEnabled: false }).expect(200);
    expect((await run(['printf', 'hi']).expect(403)).body.error.code).toBe('shell_disabled');
  });

  it('[sec-29] answers status timeout promptly at the request timeoutMs, and kills what the command started', async () => {
    const marker = uniqueSleep(30);
    const res = await shell({ argv: sleeperWithChild(marker) }, { timeoutMs: 500 }).expect(200);
    expect(res.body).toEqual({
      invocationId: expect.any(String),
      tool: 'shell_exec',
      status: 'timeout',
      error: { code: 'timeout', message: expect.stringContaining('500 ms'), retryable: true },
      durationMs: expect.any(Number),
    });
    expect(res.body.durationMs).toBeLessThan(5000);
    await expectNoProcess(marker);
  });

  it('answers status timeout when the command outlives the timeoutMs argument of shell_exec', async () => {
    const marker = uniqueSleep(30);
    const res = await shell({ argv: sleeperWithChild(marker), timeoutMs: 500 }).expect(200);
    await expectNoProcess(marker);
    expect(res.body.durationMs).toBeLessThan(5000);
    expect({ status: res.body.status, code: res.body.error?.code }).toEqual({ status: 'timeout', code: 'timeout' });
  });

  it('cancels the call when the client disconnects: the command is killed and the audit says so', async () => {
    const port = t.port;
    const marker = uniqueSleep(30);
    const argv = sleeperWithChild(marker);
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/v1/projects/${projectId}/tools/shell_exec/invoke`,
      headers: { ...tenant.auth, 'content-type': 'application/json' },
    });
    let answered = false;
    request.on('response', () => (answered = true));
    request.on('error', () => undefined);
    request.end(JSON.stringify({ arguments: { argv } }));
    // The command is running once both sleeps are; then the client goes away.
    await waitForProcess(marker, 2);
    request.destroy();
    expect(answered).toBe(false);

    await expectNoProcess(marker);
    const row = await eventually(async () => {
      const list = await t.http
        .get(`/v1/projects/${projectId}/invocations`)
        .query({ tool: 'shell_exec', limit: 100 })
        .set(tenant.auth)
        .expect(200);
      const found = (list.body.items as Array<{ arguments: { argv?: string[] }; status: string; errorCode: string | null }>).find(
        (item) => item.arguments?.argv?.[2] === argv[2],
      );
      expect(found).toBeDefined();
      return found!;
    });
    expect(['error/cancelled', 'timeout/timeout']).toContain(`${row.status}/${row.errorCode}`);
  });
});

describe('fetch_url', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let projectId: string;
  let server: http.Server;
  let forbiddenServer: http.Server;
  let base: string;
  let forbiddenBase: string;
  const forbiddenHits: string[] = [];

  const fetchUrl = (args: Record<string, unknown>) => callTool(t, tenant, projectId, 'fetch_url', args);
  const fetched = async (args: Record<string, unknown>) => {
    const res = await fetchUrl(args).expect(200);
    expect({ status: res.body.status, error: res.body.error }).toEqual({ status: 'ok', error: undefined });
    return res.body.result;
  };

  const start = async (handler: http.RequestListener) => {
    const s = http.createServer(handler);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return { s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  };
  const stop = (s: http.Server) => {
    s.closeAllConnections();
    return new Promise((resolve) => s.close(resolve));
  };

  beforeAll(async () => {
    const forbidden = await start((req, res) => {
      forbiddenHits.push(req.url ?? '');
      res.end('secret');
    });
    [forbiddenServer, forbiddenBase] = [forbidden.s, forbidden.url];
    const allowed = await start((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/hello') {
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'x-served-by': 'test' });
          return res.end('hello from the test server');
        }
        if (req.url === '/echo') {
          res.writeHead(201, { 'content-type': 'application/json' });
          const body = Buffer.concat(chunks).toString('utf8');
          return res.end(JSON.stringify({ method: req.method, contentType: req.headers['content-type'], body }));
        }
        if (req.url === '/moved') return res.writeHead(302, { location: '/hello' }).end();
        if (req.url === '/moved-away') return res.writeHead(302, { location: `${forbiddenBase}/secret` }).end();
        if (req.url === '/big') return res.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(200_000));
        if (req.url === '/hang') return; // never answers
        res.writeHead(404).end();
      });
    });
    [server, base] = [allowed.s, allowed.url];
    t = await createTestApp({ env: { FETCH_ALLOW_HOSTS: new URL(base).host } });
    tenant = await t.createTenant();
    projectId = (await t.createProject(tenant)).id;
  });
  afterAll(async () => {
    await t.close();
    await stop(server);
    await stop(forbiddenServer);
  });

  it('fetches text from an allowed server with its status and headers', async () => {
    const result = await fetched({ url: `${base}/hello` });
    expect(result).toMatchObject({
      url: `${base}/hello`,
      finalUrl: `${base}/hello`,
      status: 200,
      body: 'hello from the test server',
      bodyEncoding: 'utf8',
      truncated: false,
      redirects: [],
    });
    expect(result.headers['x-served-by']).toBe('test');
  });

  it('sends a POST with its body and headers', async () => {
    const result = await fetched({
      url: `${base}/echo`,
      method: 'POST',
      body: '{"q":"tools"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(result.status).toBe(201);
    expect(JSON.parse(result.body)).toEqual({ method: 'POST', contentType: 'application/json', body: '{"q":"tools"}' });
  });

  it('follows a redirect within the allowed server', async () => {
    const result = await fetched({ url: `${base}/moved` });
    expect(result).toMatchObject({
      status: 200,
      finalUrl: `${base}/hello`,
      redirects: [`${base}/hello`],
      body: 'hello from the test server',
    });
  });

  it('[sec-23] refuses a redirect to a server that is not allowed, without reaching it', async () => {
    const res = await fetchUrl({ url: `${base}/moved-away` }).expect(403);
    expect(res.body.error.code).toBe('url_blocked');
    expect(forbiddenHits).toEqual([]);
  });

  it.each([
    ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['loopback on a port that is not allowed', 'FORBIDDEN/secret'],
    ['loopback spelled as one number', 'http://2130706433/'],
  ])('[sec-18] refuses %s with 403 url_blocked', async (_what, url) => {
    const res = await fetchUrl({ url: url.replace('FORBIDDEN', forbiddenBase) }).expect(403);
    expect(res.body.error).toMatchObject({ code: 'url_blocked', message: expect.stringMatching(/^Refused to fetch /) });
    expect(forbiddenHits).toEqual([]);
  });

  it('[sec-24] refuses a non-http URL in the arguments', async () => {
    const res = await fetchUrl({ url: 'file:///etc/passwd' }).expect(422);
    expect(res.body.error.code).toBe('invalid_arguments');
  });

  it('cuts the body at maxBytes and marks it truncated', async () => {
    const result = await fetched({ url: `${base}/big`, maxBytes: 1000 });
    expect(result).toMatchObject({ bytes: 1000, truncated: true, body: 'z'.repeat(1000) });
  });

  it('answers status timeout when the server does not answer within the timeoutMs argument', async () => {
    const res = await fetchUrl({ url: `${base}/hang`, timeoutMs: 300 }).expect(200);
    expect(res.body).toMatchObject({
      status: 'timeout',
      error: { code: 'timeout', message: expect.stringContaining('300 ms'), retryable: true },
    });
  });
});

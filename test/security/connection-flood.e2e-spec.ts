import http from 'node:http';
import net from 'node:net';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

// docs/security-model.md, case 125: idle connections, no key needed. 24,000 of them used up the process's
// descriptors until the header timeout closed them (and the client opened them again): /health failed and
// every new client hung. Connections are now capped in total and per client address, and one that sends
// nothing is closed at the header timeout. The loopback network is all of 127/8: each address stands for a client.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

interface Idle {
  socket: net.Socket;
  closed: boolean;
  closedAfterMs: number | null;
}

describe('[sec-125] a flood of idle connections', () => {
  let t: TestApp;
  const opened: Idle[] = [];

  // A connection that sends nothing, from `from`.
  const idle = (from: string, received: Buffer[] = []): Promise<Idle> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const socket = net.connect({ host: '127.0.0.1', port: t.port, localAddress: from });
      const entry: Idle = { socket, closed: false, closedAfterMs: null };
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.once('close', () => {
        entry.closed = true;
        entry.closedAfterMs = performance.now() - started;
      });
      socket.once('connect', () => {
        opened.push(entry);
        resolve(entry);
      });
      socket.once('error', reject);
    });
  const flood = async (from: string, count: number) => {
    const sockets: Idle[] = [];
    for (let i = 0; i < count; i++) sockets.push(await idle(from));
    // A refused one is closed as it is accepted: give the closes time to arrive.
    await sleep(300);
    return { open: sockets.filter((s) => !s.closed), closed: sockets.filter((s) => s.closed) };
  };
  // GET /health/live on a fresh connection from `from`: its status, or the error that ended it.
  const live = (from: string): Promise<number | string> =>
    new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port: t.port, path: '/health/live', localAddress: from, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.setTimeout(5_000, () => req.destroy(new Error('no answer in 5 s')));
    });
  // The connection figures on /metrics (over a connection of 127.0.0.1's, which no flood below uses).
  const connectionMetrics = async () => {
    const m = parsePrometheusText((await t.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200)).text);
    return {
      open: sampleValue(m, 'toolgate_http_open_connections', {}),
      total: sampleValue(m, 'toolgate_http_connections_refused_total', { reason: 'total' }),
      perAddress: sampleValue(m, 'toolgate_http_connections_refused_total', { reason: 'per_address' }),
    };
  };
  const waitClosed = async (entry: Idle, withinMs: number) => {
    for (let waited = 0; waited < withinMs && !entry.closed; waited += 100) await sleep(100);
  };
  const closeAll = async () => {
    for (const entry of opened.splice(0)) entry.socket.destroy();
    await sleep(200);
  };

  beforeAll(async () => {
    t = await createTestApp({
      env: { HTTP_MAX_CONNECTIONS: '40', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '20', HTTP_HEADERS_TIMEOUT_MS: '1500', METRICS_TOKEN },
    });
  });

  afterAll(async () => {
    await closeAll();
    await t?.close();
  });

  afterEach(closeAll);

  it("[sec-125] closes one address's connections past HTTP_MAX_CONNECTIONS_PER_ADDRESS at once; another address is answered", async () => {
    const before = await connectionMetrics();
    const { open, closed } = await flood('127.0.0.3', 30);
    expect(open).toHaveLength(20);
    expect(closed).toHaveLength(10);
    expect(await live('127.0.0.2')).toBe(200);
    const during = await connectionMetrics();
    expect(during.perAddress - before.perAddress).toBe(10);
    expect(during.total - before.total).toBe(0);
    expect(during.open).toBeGreaterThanOrEqual(20);
    // The same address gets a place back as soon as one of its connections closes.
    open[0].socket.destroy();
    await sleep(200);
    expect(await live('127.0.0.3')).toBe(200);
  });

  it('[sec-125] holds HTTP_MAX_CONNECTIONS over many addresses; the places come back when the flood ends', async () => {
    const held = [...(await flood('127.0.0.3', 20)).open, ...(await flood('127.0.0.4', 20)).open];
    const past = await flood('127.0.0.5', 5);
    // Forty at most, whatever else was open (the test's own keep-alive connections count too).
    expect(held.length).toBeLessThanOrEqual(40);
    expect(held.length).toBeGreaterThanOrEqual(35);
    expect(past.open).toHaveLength(0);
    expect(await live('127.0.0.6')).not.toBe(200);
    await closeAll();
    expect(await live('127.0.0.6')).toBe(200);
    const after = await connectionMetrics();
    expect(after.total).toBeGreaterThanOrEqual(6);
    // The flood's connections are no longer counted as open.
    expect(after.open).toBeLessThan(10);
  });

  it('[sec-125] closes a connection that sends nothing at HTTP_HEADERS_TIMEOUT_MS', async () => {
    const silent = await idle('127.0.0.7');
    await waitClosed(silent, 5_000);
    process.stderr.write(
      `[sec-125] a connection that sent nothing was closed after ${Math.round(silent.closedAfterMs ?? -1)} ms (HTTP_HEADERS_TIMEOUT_MS 1500)\n`,
    );
    expect(silent.closed).toBe(true);
    expect(silent.closedAfterMs).toBeGreaterThanOrEqual(1400);
    expect(silent.closedAfterMs).toBeLessThan(1500 + 2000);
  }, 20_000);

  it('[sec-125] answers 408 and closes a connection that stops part-way through its request line, at HTTP_HEADERS_TIMEOUT_MS', async () => {
    const received: Buffer[] = [];
    const partial = await idle('127.0.0.8', received);
    partial.socket.write('GET /health/live HT');
    await waitClosed(partial, 5_000);
    process.stderr.write(
      `[sec-125] a connection that stopped in its request line was closed after ${Math.round(partial.closedAfterMs ?? -1)} ms (HTTP_HEADERS_TIMEOUT_MS 1500)\n`,
    );
    expect(partial.closed).toBe(true);
    expect(Buffer.concat(received).toString('latin1')).toMatch(/^HTTP\/1\.1 408 /);
    expect(partial.closedAfterMs).toBeLessThan(1500 + 2000);
  }, 20_000);
});

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migratedPgliteUrl } from '../../support/test-database.js';

// The compiled service as an operator starts it: its stdout on a pipe or on a terminal, and its traces
// sent by the real OTLP exporter to a collector on this machine.
const root = fileURLToPath(new URL('../../..', import.meta.url));
const main = path.join(root, 'dist/main.js');
const ADMIN_TOKEN = 'observability-admin-token-0123456789';

interface Service {
  port: number;
  pid: number;
  exited(): boolean;
  output(): string;
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe('the compiled service (dist/main.js)', () => {
  let cwd: string;
  const running: ChildProcess[] = [];

  beforeAll(() => {
    if (!existsSync(main)) throw new Error('dist/main.js is missing: run `npm run build` before these tests');
  });
  beforeEach(async () => {
    cwd = await mkdtemp(path.join(os.tmpdir(), 'toolgate-obs-'));
  });
  afterEach(async () => {
    for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(cwd, { recursive: true, force: true });
  });

  // Starts the service; with `tty`, under script(1), so its stdout is a terminal.
  async function start(env: Record<string, string>, tty = false): Promise<Service> {
    const port = await freePort();
    const fullEnv = {
      PATH: process.env.PATH ?? '',
      // Each service gets a database of its own, already migrated.
      DATABASE_URL: await migratedPgliteUrl(path.join(cwd, `db-${port}`)),
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_TOKEN,
      WORKSPACE_ROOT: path.join(cwd, 'workspaces'),
      COMMAND_SANDBOX: 'none',
      TERM: 'dumb',
      ...env,
    };
    const child = tty
      ? spawn('script', ['-qfec', `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(main)}`, '/dev/null'], { cwd, env: fullEnv })
      : spawn(process.execPath, [main], { cwd, env: fullEnv });
    running.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    // Without the PGlite dump (the PostgreSQL pass builds none) the service migrates an empty in-memory
    // database as it starts: about 13 s of this deadline on a busy machine.
    const deadline = Date.now() + 45_000;
    while (!output.includes('Toolgate is listening')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the service did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return {
      port,
      pid: child.pid!,
      exited: () => child.exitCode !== null || child.signalCode !== null,
      output: () => output,
      stop: async () => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        // script(1) passes a SIGTERM on and then waits two seconds before it exits: the service gets it directly.
        const service = tty ? Number((await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8')).trim()) : child.pid!;
        process.kill(service, 'SIGTERM');
        await exited;
      },
    };
  }

  const listeningLine = (output: string) => output.split(/\r?\n/).find((line) => line.includes('Toolgate is listening'))!;
  const isJsonObject = (line: string) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value === 'object' && value !== null;
    } catch {
      return false;
    }
  };

  // Every line, on either adapter: a line of another shape (a runtime warning, say) breaks a log pipeline.
  it.each(['express', 'fastify'])(
    'writes only JSON lines when stdout is not a terminal and LOG_FORMAT is unset (%s)',
    async (adapter) => {
      const service = await start({ HTTP_ADAPTER: adapter });
      await service.stop();
      const line = JSON.parse(listeningLine(service.output())) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 'info', msg: 'Toolgate is listening', port: service.port, tracing: 'none' });
      const notJson = service
        .output()
        .split(/\r?\n/)
        .filter((text) => text.trim() !== '' && !isJsonObject(text));
      expect(notJson).toEqual([]);
    },
    70_000,
  );

  it('writes readable lines on a terminal when LOG_FORMAT is unset, and JSON there with LOG_FORMAT=json', async () => {
    const pretty = await start({}, true);
    const response = await fetch(`http://127.0.0.1:${pretty.port}/health/live`);
    expect(response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await pretty.stop();
    const line = listeningLine(pretty.output());
    expect(line).toMatch(/^\S*\d\d:\d\d:\d\d\.\d{3}\S* \S*INFO /);
    expect(line).toContain('Toolgate is listening');
    expect(line).toContain(`port=${pretty.port}`);
    expect(() => JSON.parse(line) as unknown).toThrow();
    // The access log line: the message, then its fields as key=value.
    expect(pretty.output()).toMatch(/INFO \S* ?request.*method=GET path=\/health\/live status=200/);

    const json = await start({ LOG_FORMAT: 'json' }, true);
    await json.stop();
    expect(JSON.parse(listeningLine(json.output()).trim())).toMatchObject({ msg: 'Toolgate is listening' });
  }, 90_000);

  it('writes readable lines on a pipe with LOG_FORMAT=pretty, without colours', async () => {
    const service = await start({ LOG_FORMAT: 'pretty' });
    await service.stop();
    const line = listeningLine(service.output());
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  Toolgate is listening  port=\d+ host=127\.0\.0\.1/);
    expect(line).not.toContain('\x1b[');
  }, 70_000);

  it('keeps serving when an operator asks for a heap snapshot with SIGUSR2, and stops on SIGTERM', async () => {
    const service = await start({ NODE_OPTIONS: '--heapsnapshot-signal=SIGUSR2' });
    process.kill(service.pid, 'SIGUSR2');
    const deadline = Date.now() + 30_000;
    const snapshots = async () => (await readdir(cwd)).filter((name) => name.endsWith('.heapsnapshot'));
    while ((await snapshots()).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await snapshots()).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(service.exited()).toBe(false);
    expect((await fetch(`http://127.0.0.1:${service.port}/health/live`)).status).toBe(200);
    await service.stop();
  }, 90_000);

  it('exits naming LOG_FORMAT when it is not json, pretty or auto', async () => {
    const child = spawn(process.execPath, [main], {
      cwd,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'pglite://memory', LOG_FORMAT: 'fancy' },
    });
    running.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(78);
    expect(stderr).toContain("LOG_FORMAT must be one of auto, json, pretty, got 'fancy'");
  }, 20_000);

  it('sends its spans to the OTLP endpoint named by OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const received: Array<{ url: string; body: string }> = [];
    const collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ url: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      const service = await start({
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_SERVICE_NAME: 'toolgate-under-test',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      expect(JSON.parse(listeningLine(service.output())) as Record<string, unknown>).toMatchObject({ tracing: 'otlp' });
      const traceId = '0af7651916cd43dd8448eb211c80319c';
      const response = await fetch(`http://127.0.0.1:${service.port}/health/live`, {
        headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      });
      expect(response.status).toBe(200);
      const deadline = Date.now() + 10_000;
      while (!received.some((r) => r.body.includes('GET /health/live')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      await service.stop();

      const exported = received.find((r) => r.body.includes('GET /health/live'));
      expect(exported?.url).toBe('/v1/traces');
      const body = JSON.parse(exported!.body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: Array<{ name: string; traceId: string }> }>;
        }>;
      };
      const [resourceSpans] = body.resourceSpans;
      expect(resourceSpans.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'toolgate-under-test' } });
      const span = resourceSpans.scopeSpans.flatMap((s) => s.spans).find((s) => s.name === 'GET /health/live')!;
      expect(span.traceId).toBe(traceId);
      // The request's log line carries the same trace id.
      const logged = service
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'request' && l.path === '/health/live');
      expect(logged?.traceId).toBe(traceId);
    } finally {
      await new Promise((resolve) => collector.close(resolve));
    }
  }, 90_000);
});

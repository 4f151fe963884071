// The limits Toolgate is measured against: a bare server that reads the same JSON body and runs the same
// argument gate (read_file's inputSchema, compiled with the service's own createToolAjv and
// compileToolValidator from dist/), and does nothing else: no auth, no database, no file, no audit.
// LIMIT_FRAMEWORK picks what serves HTTP: node (node:http alone, the default), fastify or express (each
// bare, with its own JSON body parser), so each Toolgate adapter can be set beside its own framework's floor.
// On node:http, POST /list answers a recursive listing of LIMIT_TREE_ROOT's {"path", "limit"} walked by
// bench/lib/bare-walk.mjs on a worker thread (the floor of Toolgate's recursive list_files).
// Usage: PORT=8080 [LIMIT_FRAMEWORK=fastify] node bench/limit-server.mjs   (after npm run build)
import 'reflect-metadata';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { ReadFileExecutor } from '../dist/tools/executors/read-file.executor.js';
import { createToolAjv } from '../dist/execution/validation/ajv-factory.js';
import { compileToolValidator } from '../dist/execution/validation/tool-validator.js';

const { inputSchema, name } = new ReadFileExecutor({ tools: { readMaxBytes: 256 * 1024 } }).definition;
const validator = compileToolValidator(createToolAjv(), name, inputSchema);
const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';

// The gate: the status and body every framework sends for a parsed request body.
function gate(body) {
  try {
    const args = validator.parse(body?.arguments);
    return [200, { tool: name, status: 'ok', result: { path: args.path } }];
  } catch (error) {
    // The same fields the service's error filter sends for an AppError.
    if (typeof error?.status !== 'number') throw error;
    const details = error.details ? { details: error.details } : {};
    return [error.status, { error: { code: error.code, message: error.message, ...error.extra, ...details }, requestId: null }];
  }
}

// The same thread count and young-generation limit as Toolgate's worker pool.
let walker = null;
const TYPES = ['file', 'directory', 'other'];
async function list(body) {
  const root = process.env.LIMIT_TREE_ROOT;
  if (!root) return [404, { error: { code: 'not_found', message: 'LIMIT_TREE_ROOT is not set' } }];
  walker ??= new Piscina({
    filename: new URL('./lib/bare-walk.mjs', import.meta.url).href,
    minThreads: 0,
    maxThreads: Math.max(1, availableParallelism() - 1),
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  const { paths, types, truncated } = await walker.run({ root, dir: String(body?.path ?? ''), limit: Number(body?.limit ?? 1000) });
  const entries = paths.map((entryPath, i) => ({ path: entryPath, type: TYPES[types[i]] }));
  return [200, { tool: 'list_files', status: 'ok', result: { entries, truncated } }];
}

const servers = {
  node() {
    const send = (res, status, body) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const server = createServer((req, res) => {
      if (req.method !== 'POST') return send(res, req.url === '/health' ? 200 : 404, { status: 'ok' });
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return send(res, 400, { error: { code: 'invalid_json', message: 'The body is not valid JSON' } });
        }
        if (req.url === '/list') {
          list(body).then(
            (answer) => send(res, ...answer),
            (error) => send(res, 500, { error: { code: 'internal', message: String(error) } }),
          );
          return;
        }
        send(res, ...gate(body));
      });
    });
    server.listen(port, host);
    return (done) => server.close(done);
  },
  fastify() {
    const app = createRequire(import.meta.url)('fastify')({ logger: false });
    app.get('/health', async () => ({ status: 'ok' }));
    app.post('/v1/projects/:projectId/tools/:toolName/invoke', async (request, reply) => {
      const [status, body] = gate(request.body);
      return reply.code(status).send(body);
    });
    void app.listen({ port, host });
    return (done) => void app.close().then(done);
  },
  express() {
    const express = createRequire(import.meta.url)('express');
    const app = express();
    app.use(express.json());
    app.get('/health', (_req, res) => res.json({ status: 'ok' }));
    app.post('/v1/projects/:projectId/tools/:toolName/invoke', (req, res) => {
      const [status, body] = gate(req.body);
      res.status(status).json(body);
    });
    const server = app.listen(port, host);
    return (done) => server.close(done);
  },
};

const framework = process.env.LIMIT_FRAMEWORK ?? 'node';
if (!Object.hasOwn(servers, framework)) throw new Error(`LIMIT_FRAMEWORK must be node, fastify or express, got '${framework}'`);
const close = servers[framework]();
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => close(() => process.exit(0)));

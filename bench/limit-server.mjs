// The limit Toolgate is measured against: a bare node:http server that reads the same JSON body and runs
// the same argument gate (read_file's inputSchema, compiled with the service's own createToolAjv and
// compileToolValidator from dist/), and does nothing else: no auth, no database, no file, no audit.
// Usage: PORT=8080 node bench/limit-server.mjs   (after npm run build)
import 'reflect-metadata';
import { createServer } from 'node:http';
import { ReadFileExecutor } from '../dist/tools/executors/read-file.executor.js';
import { createToolAjv } from '../dist/tools/validation/ajv-factory.js';
import { compileToolValidator } from '../dist/tools/validation/tool-validator.js';

const { inputSchema, name } = new ReadFileExecutor({ tools: { readMaxBytes: 256 * 1024 } }).definition;
const validator = compileToolValidator(createToolAjv(), name, inputSchema);

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
    try {
      const args = validator.parse(body?.arguments);
      send(res, 200, { tool: name, status: 'ok', result: { path: args.path } });
    } catch (error) {
      // The same fields the service's error filter sends for an AppError.
      if (typeof error?.status !== 'number') throw error;
      const details = error.details ? { details: error.details } : {};
      send(res, error.status, { error: { code: error.code, message: error.message, ...error.extra, ...details }, requestId: null });
    }
  });
});

server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? '127.0.0.1');
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));

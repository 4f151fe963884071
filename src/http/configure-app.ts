import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { maxHeaderSize, type Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import type { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fresh from 'fresh';
import type { Span } from '@opentelemetry/api';
import type { Logger as PinoLogger } from 'pino';
import { errorAnswer, MALFORMED_PATH } from '../common/errors/error-answer.js';
import { requestPath } from '../common/format/request-path.js';
import { requestContext } from '../common/logging/request-context.js';
import { redactText } from '../common/secrets/secret-redaction.js';
import { endRequestSpan, runInContext, startRequestSpan, tracingEnabled } from '../common/tracing/tracer.js';
import type { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { ConsoleFiles, isConsolePath } from './console-static.js';
import { type CorsPolicy, corsPolicy } from './cors-policy.js';
import { DOCS_HEADERS, isDocsPath } from './docs-headers.js';
import { setupOpenApi } from './openapi.js';
import { answerParserError } from './parser-errors.js';
import { applyRequestTimeouts } from './request-timeouts.js';
import { closeUnusedConnectionsWithIdleOnes } from './unused-connections.js';
import { capConnections, type ConnectionCounts } from './connection-caps.js';
import { closeSlowReaders } from './slow-readers.js';
import { useUtf8JsonParser, verifyUtf8Body } from './utf8-json-body.js';
import { FailedAuthentications } from '../rate-limit/failed-authentications.js';
import { LoopShare } from '../common/scheduling/loop-share.js';
import { ADDRESS_REFUSAL_DELAY_MS, earlyRefusal, type EarlyRefusalSources, earlyRefusalSources, refusalAnswer } from './early-refusals.js';
import { ApiKeysService } from '../tenants/api-keys.service.js';
import { TenantRateLimiter } from '../rate-limit/tenant-rate-limiter.js';

// A client may pass its own request id (to follow a call across services) if it looks like one.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

const firstHeader = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

const requestIdFrom = (header: unknown): string => (typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : randomUUID());

// Nest's ExpressAdapter would JSON-encode a Buffer answer ({"type":"Buffer","data":[...]}); Fastify sends it
// as the body. Sent as the body here too, through res.send, which keeps a preset Content-Type and ETag
// and still answers 304 when the ETag matches.
const bufferAware = (Base: typeof ExpressAdapter) =>
  class BufferAwareExpressAdapter extends Base {
    override reply(response: { status(code: number): unknown; send(body: Buffer): unknown }, body: unknown, statusCode?: number): unknown {
      if (!Buffer.isBuffer(body)) return super.reply(response, body, statusCode);
      if (statusCode !== undefined) response.status(statusCode);
      return response.send(body);
    }
  };

// Everything that depends on the HTTP adapter lives in this file, so controllers never see req/res. Only
// the adapter asked for is loaded: the other (Express with multer and body-parser, or Fastify and its
// plugins) would cost the process a few megabytes and its start-up 0.1-0.2 s for nothing.
export async function createHttpAdapter(config: AppConfig): Promise<AbstractHttpAdapter> {
  if (config.httpAdapter === 'express') {
    const { ExpressAdapter } = await import('@nestjs/platform-express');
    return new (bufferAware(ExpressAdapter))();
  }
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  return new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    genReqId: (req: { headers: Record<string, unknown> }) => requestIdFrom(req.headers['x-request-id']),
    clientErrorHandler: answerParserError,
    // A path that cannot be decoded, in the one error shape (Fastify's own body quotes the path).
    frameworkErrors: (_error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const answer = errorAnswer(MALFORMED_PATH, request.id);
      void reply.code(answer.status).header('x-request-id', request.id).send(answer.body);
    },
    // No path segment is refused for its length (Fastify's default is 100 characters, answered 414 in a body
    // of its own): a long tool name reaches its route and is answered and audited as on Express. The
    // request line is held to Node's header limit (16 KiB) anyway. A router option: Fastify warns at every
    // start (FSTDEP022) when it is given at the top level.
    routerOptions: { maxParamLength: maxHeaderSize },
    // Fastify's own logger stays off: requests are logged below, like on Express.
    logger: false,
  });
}

export function configureApp(app: INestApplication, config: AppConfig, log: PinoLogger): void {
  // The console is public (its API calls carry the key): it is answered before Nest's guards see a request.
  const consoleFiles = new ConsoleFiles();
  // Browser-based MCP clients: OAuth's endpoints from any origin, the MCP endpoints from MCP_ALLOWED_ORIGINS.
  const cors = corsPolicy(config.transport.mcpAllowedOrigins);
  const refusals = earlyRefusalSources(
    app.get(ApiKeysService),
    app.get(TenantRateLimiter),
    app.get(FailedAuthentications),
    app.get(LoopShare),
    config.adminToken,
  );
  if (app.getHttpAdapter().getType() === 'fastify') configureFastify(app as NestFastifyApplication, log, consoleFiles, cors, refusals);
  else configureExpress(app as NestExpressApplication, config, log, consoleFiles, cors, refusals);
  applyRequestTimeouts(app.getHttpServer() as Server, config.transport);
  closeUnusedConnectionsWithIdleOnes(app.getHttpServer() as Server);
  const connections = capConnections(
    app.getHttpServer() as Server,
    {
      total: config.transport.maxConnections,
      perAddress: config.transport.maxConnectionsPerAddress,
      firstByteWithinMs: config.transport.headersTimeoutMs,
    },
    connectionRefusalLog(log, config.transport),
  );
  reportConnections(app.get(Metrics), connections);
  closeSlowReaders(app.getHttpServer() as Server, {
    bytesPerSecond: config.transport.minReadBytesPerSecond,
    windowMs: config.transport.readWindowMs,
  });
  // Only the signals that ask a service to stop. Nest's default list also takes SIGUSR2, SIGQUIT and
  // SIGSEGV: an operator's `--heapsnapshot-signal=SIGUSR2` would stop the service.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT', 'SIGHUP']);
  setupOpenApi(app);
}

// Requests answered without an access-log line (EarlyRefusal.unlogged): the Express response, or the Fastify request.
const unlogged = new WeakSet<object>();

const logRequest = (
  log: PinoLogger,
  requestId: string,
  method: string | undefined,
  url: string | undefined,
  status: number,
  startedNs: bigint,
  traceId?: string,
) =>
  log.info(
    // The path is the caller's text: a key pasted where a tool's name goes is logged as its audit row has it.
    {
      requestId,
      ...(traceId ? { traceId } : {}),
      method,
      path: url === undefined ? undefined : redactText(requestPath(url)),
      status,
      durationMs: Number(process.hrtime.bigint() - startedNs) / 1e6,
    },
    'request',
  );

function configureExpress(
  app: NestExpressApplication,
  config: AppConfig,
  log: PinoLogger,
  consoleFiles: ConsoleFiles,
  cors: CorsPolicy,
  refusals: EarlyRefusalSources,
): void {
  app.disable('x-powered-by');
  // Express would hash every body into a weak ETag; Fastify does not. Only routes that set their own
  // ETag (the tool listing) take part in conditional GETs, on both adapters, and no body is hashed for nothing.
  app.set('etag', false);
  app.use(
    (
      req: { method?: string; url?: string; headers: Record<string, unknown>; route?: { path?: string }; baseUrl?: string },
      res: { statusCode: number; setHeader(n: string, v: string): void; on(e: 'finish', l: () => void): void },
      next: () => void,
    ) => {
      const requestId = requestIdFrom(req.headers['x-request-id']);
      res.setHeader('x-request-id', requestId);
      const method = req.method ?? 'GET';
      // Null unless an OpenTelemetry SDK was started (OTEL_* variables).
      const traced = startRequestSpan(method, req.url ?? '/', req.headers);
      // Below LOG_LEVEL=info the access line is never written: no clock read and no listener per request
      // unless a span has to be ended.
      const accessLog = log.isLevelEnabled('info');
      if (accessLog || traced) {
        const started = accessLog ? process.hrtime.bigint() : 0n;
        res.on('finish', () => {
          if (accessLog && !unlogged.has(res))
            logRequest(log, requestId, req.method, req.url, res.statusCode, started, traced?.span.spanContext().traceId);
          if (traced)
            endRequestSpan(
              traced.span,
              method,
              req.route?.path === undefined ? undefined : `${req.baseUrl ?? ''}${req.route.path}`,
              res.statusCode,
            );
        });
      }
      if (traced) runInContext(traced.context, () => requestContext.run({ requestId }, next));
      else requestContext.run({ requestId }, next);
    },
  );
  app.use((req: { url?: string }, res: { setHeader(n: string, v: string): void }, next: () => void) => {
    if (isDocsPath(req.url)) for (const [name, value] of Object.entries(DOCS_HEADERS)) res.setHeader(name, value);
    next();
  });
  app.use(
    (
      req: { method?: string; url?: string; headers: Record<string, string | string[] | undefined> },
      res: { statusCode: number; setHeader(n: string, v: string): void; end(): void },
      next: () => void,
    ) => {
      const answer = cors(req.method ?? 'GET', req.url ?? '/', firstHeader(req.headers.origin));
      if (answer === null) return next();
      for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
      if (!answer.preflight) return next();
      // Safari waits for a body unless a 204 says Content-Length: 0.
      res.statusCode = 204;
      res.setHeader('Content-Length', '0');
      res.end();
    },
  );
  app.use(
    (
      req: { method?: string; url?: string; headers: Record<string, string | string[] | undefined>; socket: { remoteAddress?: string } },
      res: { writeHead(status: number, headers: Record<string, string>): void; end(body: string): void },
      next: (error?: unknown) => void,
    ) => {
      earlyRefusal(req.method, req.url, req.headers, req.socket.remoteAddress, req, refusals).then((refusal) => {
        if (refusal === null) return next();
        // The request's id from its context, set up by the first middleware.
        const answer = refusalAnswer(refusal.error, req.headers);
        const send = () => (res.writeHead(answer.status, answer.headers), res.end(answer.body));
        if (!refusal.forAddress) return send();
        unlogged.add(res);
        setTimeout(send, ADDRESS_REFUSAL_DELAY_MS).unref();
      }, next);
    },
  );
  // The console's files, once a request for them had its turn (early refusals above).
  app.use(
    (
      req: { method?: string; url?: string },
      res: { writeHead(status: number, headers: Record<string, string>): void; end(body?: Buffer): void },
      next: () => void,
    ) => {
      if ((req.method !== 'GET' && req.method !== 'HEAD') || !isConsolePath(req.url)) return next();
      const answer = consoleFiles.answer(req.url!);
      res.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) });
      // Node's server sends no body for HEAD whatever is written.
      res.end(answer.body);
    },
  );
  app.useBodyParser('json', { limit: config.bodyLimitBytes, verify: verifyUtf8Body });
  // OAuth's token and revocation endpoints take forms (RFC 6749 4.1.3).
  app.useBodyParser('urlencoded', { limit: config.bodyLimitBytes, extended: false });
  const server: Server = app.getHttpServer();
  server.on('clientError', answerParserError);
}

function configureFastify(
  app: NestFastifyApplication,
  log: PinoLogger,
  consoleFiles: ConsoleFiles,
  cors: CorsPolicy,
  refusals: EarlyRefusalSources,
): void {
  const fastify = app.getHttpAdapter().getInstance();
  useUtf8JsonParser(fastify);
  // OAuth's token and revocation endpoints take forms (RFC 6749 4.1.3); a repeated name keeps its first value.
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const fields: Record<string, string> = {};
    for (const [name, value] of new URLSearchParams(body as string)) if (!(name in fields)) fields[name] = value;
    done(null, fields);
  });
  // GET routes answer HEAD too (Fastify's exposeHeadRoutes), without the body.
  for (const url of ['/console', '/console/*']) {
    fastify.get(url, (request, reply) => {
      const answer = consoleFiles.answer(request.url);
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
  }
  fastify.addHook('onRequest', (request, reply, done) => {
    if (isDocsPath(request.url)) reply.headers(DOCS_HEADERS);
    done();
  });
  const started = new WeakMap<object, bigint>();
  const spans = new WeakMap<object, Span>();
  const accessLog = log.isLevelEnabled('info');
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (accessLog) started.set(request, process.hrtime.bigint());
    // Null unless an OpenTelemetry SDK was started (OTEL_* variables).
    const traced = startRequestSpan(request.method, request.url, request.headers);
    if (!traced) return requestContext.run({ requestId: request.id }, done);
    spans.set(request, traced.span);
    runInContext(traced.context, () => requestContext.run({ requestId: request.id }, done));
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const answer = cors(request.method, request.url, firstHeader(request.headers.origin));
    if (answer === null) return done();
    reply.headers(answer.headers);
    if (!answer.preflight) return done();
    // Answered here, before any guard (a browser's preflight carries no credentials).
    reply.code(204).header('content-length', '0').send();
  });
  // Before the body is parsed (Fastify reads it after the onRequest hooks).
  fastify.addHook('onRequest', async (request, reply) => {
    const refusal = await earlyRefusal(request.method, request.url, request.headers, request.socket.remoteAddress, request, refusals);
    if (refusal === null) return;
    const answer = refusalAnswer(refusal.error, request.headers, request.id);
    if (refusal.forAddress) {
      unlogged.add(request);
      await sleep(ADDRESS_REFUSAL_DELAY_MS, undefined, { ref: false });
    }
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
  // Every OPTIONS request has a route, so the hook above sees every preflight; the rest answer 404, as on Express.
  fastify.options('*', (_request, reply) => reply.callNotFound());
  // Express answers 304 itself when a 200's ETag matches If-None-Match (req.fresh); Fastify does not, so
  // routes that set an ETag get the same conditional GET here, decided by the same `fresh` test.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const etag = reply.getHeader('etag');
    const conditional = request.method === 'GET' || request.method === 'HEAD';
    if (reply.statusCode !== 200 || typeof etag !== 'string' || !conditional || !fresh(request.headers, { etag }))
      return done(null, payload);
    reply.code(304).removeHeader('content-type').removeHeader('content-length');
    done(null, null);
  });
  // Below LOG_LEVEL=info the access line is never written; with tracing off too, the hook is not installed.
  if (accessLog || tracingEnabled()) {
    fastify.addHook('onResponse', (request, reply, done) => {
      const span = spans.get(request);
      if (accessLog && !unlogged.has(request))
        logRequest(
          log,
          request.id,
          request.method,
          request.url,
          reply.statusCode,
          started.get(request) ?? process.hrtime.bigint(),
          span?.spanContext().traceId,
        );
      if (span) endRequestSpan(span, request.method, request.routeOptions.url, reply.statusCode);
      done();
    });
  }
}

// A flood is refused thousands of times a second: a warning when it starts, then one a minute with how many
// and why while it lasts.
function connectionRefusalLog(log: PinoLogger, transport: AppConfig['transport']) {
  const caps = { maxConnections: transport.maxConnections, maxConnectionsPerAddress: transport.maxConnectionsPerAddress };
  const message = 'Connections were closed as they were accepted: past HTTP_MAX_CONNECTIONS or HTTP_MAX_CONNECTIONS_PER_ADDRESS';
  let refused = { total: 0, per_address: 0 };
  let lastAddress = '';
  let timer: NodeJS.Timeout | undefined;
  const report = () => {
    timer = undefined;
    if (refused.total + refused.per_address === 0) return;
    log.warn({ refused, lastAddress, ...caps }, message);
    refused = { total: 0, per_address: 0 };
    timer = setTimeout(report, 60_000).unref();
  };
  return (reason: 'total' | 'per_address', address: string) => {
    refused[reason]++;
    lastAddress = address;
    if (!timer) report();
  };
}

// A flood shows on /metrics as the open count at its cap and the refusals climbing, by which cap.
function reportConnections(metrics: Metrics, connections: ConnectionCounts): void {
  metrics.gauge(
    'toolgate_http_open_connections',
    'Client connections open on the service port (HTTP_MAX_CONNECTIONS at most)',
    () => connections.open,
  );
  metrics.labelledCounter(
    'toolgate_http_connections_refused_total',
    'Connections closed as they were accepted, by reason: total (HTTP_MAX_CONNECTIONS) or per_address (HTTP_MAX_CONNECTIONS_PER_ADDRESS)',
    'reason',
    () => connections.refused,
  );
}

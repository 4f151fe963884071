import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import fresh from 'fresh';
import type { Logger as PinoLogger } from 'pino';
import { requestContext } from '../common/logging/request-context.js';
import type { AppConfig } from '../config/app-config.js';
import { setupOpenApi } from './openapi.js';
import { answerParserError } from './parser-errors.js';

// A client may pass its own request id (to follow a call across services) if it looks like one.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

const requestIdFrom = (header: unknown): string =>
  typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : randomUUID();

// Nest's ExpressAdapter would JSON-encode a Buffer answer ({"type":"Buffer","data":[...]}); Fastify sends it
// as the body. Sent as the body here too, through res.send, which keeps a preset Content-Type and ETag
// and still answers 304 when the ETag matches.
class BufferAwareExpressAdapter extends ExpressAdapter {
  override reply(response: { status(code: number): unknown; send(body: Buffer): unknown }, body: unknown, statusCode?: number): unknown {
    if (!Buffer.isBuffer(body)) return super.reply(response, body, statusCode);
    if (statusCode !== undefined) response.status(statusCode);
    return response.send(body);
  }
}

// Everything that depends on the HTTP adapter lives in this file, so controllers never see req/res.
export function createHttpAdapter(config: AppConfig): AbstractHttpAdapter {
  if (config.httpAdapter === 'express') return new BufferAwareExpressAdapter();
  return new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    genReqId: (req: { headers: Record<string, unknown> }) => requestIdFrom(req.headers['x-request-id']),
    clientErrorHandler: answerParserError,
    // Fastify's own logger stays off: requests are logged below, like on Express.
    logger: false,
  });
}

export function configureApp(app: INestApplication, config: AppConfig, log: PinoLogger): void {
  if (app.getHttpAdapter().getType() === 'fastify') configureFastify(app as NestFastifyApplication, log);
  else configureExpress(app as NestExpressApplication, config, log);
  app.enableShutdownHooks();
  setupOpenApi(app);
}

const logRequest = (log: PinoLogger, requestId: string, method: string | undefined, url: string | undefined, status: number, startedNs: bigint) =>
  log.info(
    { requestId, method, path: url?.split('?')[0], status, durationMs: Number(process.hrtime.bigint() - startedNs) / 1e6 },
    'request',
  );

function configureExpress(app: NestExpressApplication, config: AppConfig, log: PinoLogger): void {
  app.disable('x-powered-by');
  // Express would hash every body into a weak ETag; Fastify does not. Only routes that set their own
  // ETag (the tool listing) take part in conditional GETs, on both adapters, and no body is hashed for nothing.
  app.set('etag', false);
  app.use(
    (
      req: { method?: string; url?: string; headers: Record<string, unknown> },
      res: { statusCode: number; setHeader(n: string, v: string): void; on(e: 'finish', l: () => void): void },
      next: () => void,
    ) => {
      const requestId = requestIdFrom(req.headers['x-request-id']);
      res.setHeader('x-request-id', requestId);
      const started = process.hrtime.bigint();
      res.on('finish', () => logRequest(log, requestId, req.method, req.url, res.statusCode, started));
      requestContext.run({ requestId }, next);
    },
  );
  app.useBodyParser('json', { limit: config.bodyLimitBytes });
  const server: Server = app.getHttpServer();
  server.on('clientError', answerParserError);
}

function configureFastify(app: NestFastifyApplication, log: PinoLogger): void {
  const fastify = app.getHttpAdapter().getInstance();
  const started = new WeakMap<object, bigint>();
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    started.set(request, process.hrtime.bigint());
    requestContext.run({ requestId: request.id }, done);
  });
  // Express answers 304 itself when a 200's ETag matches If-None-Match (req.fresh); Fastify does not, so
  // routes that set an ETag get the same conditional GET here, decided by the same `fresh` test.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const etag = reply.getHeader('etag');
    const conditional = request.method === 'GET' || request.method === 'HEAD';
    if (reply.statusCode !== 200 || typeof etag !== 'string' || !conditional || !fresh(request.headers, { etag })) return done(null, payload);
    reply.code(304).removeHeader('content-type').removeHeader('content-length');
    done(null, null);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    logRequest(log, request.id, request.method, request.url, reply.statusCode, started.get(request) ?? process.hrtime.bigint());
    done();
  });
}

import { randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger as PinoLogger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { requestContext } from '../common/logging/request-context.js';
import { setupOpenApi } from './openapi.js';

// Node's HTTP parser refuses some requests (headers over 16 KiB, malformed requests) before any
// framework code runs; answer those in the one error shape too instead of a bare status line.
function answerParserErrorsInShape(app: INestApplication): void {
  const server = app.getHttpServer() as import('node:http').Server;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: import('node:stream').Duplex) => {
    if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const [status, text, code, message] = tooLarge
      ? [431, 'Request Header Fields Too Large', 'headers_too_large', 'The request line or headers are larger than 16 KiB']
      : [400, 'Bad Request', 'bad_request', 'The request could not be parsed as HTTP'];
    const body = JSON.stringify({ error: { code, message }, requestId: randomUUID() });
    socket.end(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

// A client may pass its own request id (to follow a call across services) if it looks like one.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

interface RawRequest {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
}
interface RawResponse {
  statusCode: number;
  setHeader(name: string, value: string): void;
  on(event: 'finish', listener: () => void): void;
}

// Everything that depends on the HTTP adapter lives here, so controllers never see req/res objects.
export function configureApp(app: INestApplication, config: AppConfig, log: PinoLogger): void {
  const express = app as NestExpressApplication;
  express.disable('x-powered-by');
  express.use((req: RawRequest, res: RawResponse, next: () => void) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      log.info({ requestId, method: req.method, path: req.url?.split('?')[0], status: res.statusCode, durationMs }, 'request');
    });
    requestContext.run({ requestId }, next);
  });
  express.useBodyParser('json', { limit: config.bodyLimitBytes });
  answerParserErrorsInShape(app);
  app.enableShutdownHooks();
  setupOpenApi(app);
}

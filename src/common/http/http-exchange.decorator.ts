import type { Readable } from 'node:stream';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

// A route that answers with bytes it did not serialise itself (a protocol transport's answer): the
// request as a Web-standard view and one `send` that works on Express and Fastify alike. The answer
// goes through the adapter's normal send, so the body limit, the request id header and the access
// log stay as on every other route.
export interface HttpExchange {
  method: string;
  // Absolute, as a Web Request needs it.
  url: string;
  headers: Record<string, string>;
  // Already parsed by the adapter's JSON parser, within BODY_LIMIT_BYTES.
  body: unknown;
  send(status: number, headers: Record<string, string>, body: Buffer | null): void;
  // An answer written as it is produced (an event stream): the adapter pipes `body` to the client.
  stream(status: number, headers: Record<string, string>, body: Readable): void;
}

interface NodeLikeRequest {
  method?: string;
  url?: string;
  originalUrl?: string;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
}

interface ExpressLikeResponse {
  status(code: number): ExpressLikeResponse;
  setHeader(name: string, value: string): void;
  flushHeaders(): void;
  send(body?: Buffer): unknown;
  end(): unknown;
}

interface FastifyLikeReply {
  raw: unknown;
  code(status: number): FastifyLikeReply;
  header(name: string, value: string): FastifyLikeReply;
  send(body?: Buffer | Readable): unknown;
}

export const RawHttpExchange = createParamDecorator((_: unknown, ctx: ExecutionContext): HttpExchange => {
  const http = ctx.switchToHttp();
  const request = http.getRequest<NodeLikeRequest>();
  const response = http.getResponse<ExpressLikeResponse | FastifyLikeReply>();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const host = headers.host ?? 'localhost';
  return {
    method: request.method ?? 'GET',
    url: `http://${host}${request.originalUrl ?? request.url ?? '/'}`,
    headers,
    body: request.body,
    send(status, answerHeaders, body) {
      if ('raw' in response) {
        response.code(status);
        for (const [name, value] of Object.entries(answerHeaders)) response.header(name, value);
        // Fastify serialises a null payload as the JSON text `null`; no body is sent as no payload.
        if (body === null) response.send();
        else response.send(body);
        return;
      }
      response.status(status);
      for (const [name, value] of Object.entries(answerHeaders)) response.setHeader(name, value);
      if (body === null) response.end();
      else response.send(body);
    },
    stream(status, answerHeaders, body) {
      if ('raw' in response) {
        response.code(status);
        for (const [name, value] of Object.entries(answerHeaders)) response.header(name, value);
        response.send(body);
        return;
      }
      response.status(status);
      for (const [name, value] of Object.entries(answerHeaders)) response.setHeader(name, value);
      response.flushHeaders();
      body.pipe(response as unknown as NodeJS.WritableStream);
    },
  };
});

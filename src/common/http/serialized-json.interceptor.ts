import { createHash } from 'node:crypto';
import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { map, type Observable } from 'rxjs';
import { utf8Bytes } from '../format/utf8-bytes.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

// A JSON answer encoded ahead of time (a cached body), with its validator computed once alongside it.
// Kept as UTF-8 bytes: writing a large string costs Node an encode and a fresh heap copy per response,
// a Buffer is handed to the socket as it is. A strong ETag is right: the bytes sent are exactly `bytes`.
export class SerializedJson {
  readonly bytes: Buffer;
  readonly etag: string;

  constructor(json: string) {
    this.bytes = utf8Bytes(json);
    this.etag = `"${createHash('sha256').update(this.bytes).digest('base64url')}"`;
  }

  static of(value: unknown): SerializedJson {
    return new SerializedJson(JSON.stringify(value));
  }
}

// Sends a SerializedJson's bytes as they are: Fastify sends a Buffer body untouched, and so does the Express
// adapter of configure-app. A matching If-None-Match gets 304 (Express itself, Fastify through the hook in
// configure-app).
@Injectable()
export class SerializedJsonInterceptor implements NestInterceptor {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof SerializedJson)) return result;
        const adapter = this.adapterHost.httpAdapter;
        const response: unknown = context.switchToHttp().getResponse();
        adapter.setHeader(response, 'Content-Type', JSON_CONTENT_TYPE);
        adapter.setHeader(response, 'ETag', result.etag);
        return result.bytes;
      }),
    );
  }
}

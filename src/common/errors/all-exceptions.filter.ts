import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Prisma } from '../../generated/prisma/client.js';
import { AppError } from './app-error.js';
import { errorAnswer, MALFORMED_PATH, mapAppError, type MappedError as Mapped } from './error-answer.js';

// Every error leaves the service in one shape: { error: { code, message, details? }, requestId }.
// Nothing but an AppError's own message reaches a client; anything unexpected is a logged 500.
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const { httpAdapter } = this.adapterHost;
    const response = host.switchToHttp().getResponse<unknown>();
    const mapped = this.map(exception);
    if (mapped.status >= 500 && mapped.status !== 503) {
      this.logger.error(exception instanceof Error ? exception : String(exception));
    }
    const answer = errorAnswer(mapped);
    for (const [name, value] of Object.entries(answer.headers)) httpAdapter.setHeader(response, name, value);
    httpAdapter.reply(response, answer.body, answer.status);
  }

  private map(exception: unknown): Mapped {
    if (exception instanceof AppError) return mapAppError(exception);
    if (exception instanceof HttpException) {
      // The adapter wraps body-parser failures (bad JSON, oversized body) in an HttpException.
      return mapBodyParserError(exception.cause) ?? mapHttpException(exception);
    }
    const prisma = mapPrismaError(exception);
    if (prisma) return prisma;
    const bodyParser = mapBodyParserError(exception);
    if (bodyParser) return bodyParser;
    // Fastify's own errors for a request it cannot take (4xx) keep their status.
    const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
    if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
      return { status: statusCode, code: STATUS_CODES[statusCode] ?? 'bad_request', message: 'The request could not be handled' };
    }
    return { status: 500, code: 'internal_error', message: 'An unexpected error occurred; it has been logged' };
  }
}

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'rate_limited',
  503: 'service_unavailable',
};

function mapHttpException(exception: HttpException): Mapped {
  const status = exception.getStatus();
  const response = exception.getResponse();
  const code = STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
  // class-validator failures arrive as a list of messages: keep them as details.
  if (typeof response === 'object' && response !== null && Array.isArray((response as { message?: unknown }).message)) {
    const messages = (response as { message: string[] }).message;
    return { status, code: 'validation_failed', message: messages.join('; '), details: { fields: messages } };
  }
  if (status === 404) {
    return { status, code: 'route_not_found', message: exception.message.replace(/^Cannot /, 'No route for ') };
  }
  if (status >= 500) return { status, code, message: 'An unexpected error occurred; it has been logged' };
  return { status, code, message: exception.message };
}

// The `type` of the error the JSON parsers of both adapters raise for bytes that are not UTF-8 (src/http).
export const INVALID_UTF8_BODY = 'entity.utf8.invalid';

// Errors raised while reading the body: body-parser's carry `type` and `status` (Express), Fastify's
// carry `code` and `statusCode`.
function mapBodyParserError(exception: unknown): Mapped | null {
  if (typeof exception !== 'object' || exception === null) return null;
  const { type, status, statusCode, code, limit } = exception as Record<string, unknown>;
  const httpStatus = typeof status === 'number' ? status : typeof statusCode === 'number' ? statusCode : undefined;
  if (type === INVALID_UTF8_BODY) {
    return { status: 400, code: 'invalid_json', message: 'The request body is not valid UTF-8; send JSON encoded as UTF-8' };
  }
  if (type === 'entity.too.large' || code === 'FST_ERR_CTP_BODY_TOO_LARGE' || httpStatus === 413) {
    return {
      status: 413,
      code: 'payload_too_large',
      message: `The request body is larger than the limit${typeof limit === 'number' ? ` of ${limit} bytes` : ''}`,
    };
  }
  if (
    type === 'entity.parse.failed' ||
    code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    (exception instanceof SyntaxError && httpStatus === 400)
  ) {
    return { status: 400, code: 'invalid_json', message: 'The request body is not valid JSON' };
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || httpStatus === 415) {
    return { status: 415, code: 'unsupported_media_type', message: 'Send the body as application/json' };
  }
  if (exception instanceof URIError) return MALFORMED_PATH;
  if (
    (typeof type === 'string' || (typeof code === 'string' && code.startsWith('FST_'))) &&
    httpStatus !== undefined &&
    httpStatus >= 400 &&
    httpStatus < 500
  ) {
    return { status: httpStatus, code: 'bad_request', message: 'The request body could not be read' };
  }
  return null;
}

function mapPrismaError(exception: unknown): Mapped | null {
  if (exception instanceof Prisma.PrismaClientKnownRequestError) {
    if (exception.code === 'P2002') {
      return { status: 409, code: 'conflict', message: 'A resource with the same unique value already exists' };
    }
    if (exception.code === 'P2025' || exception.code === 'P2001') {
      return { status: 404, code: 'not_found', message: 'The resource does not exist' };
    }
    if (exception.code === 'P2003') {
      return { status: 409, code: 'conflict', message: 'The resource is referenced by, or refers to, another one' };
    }
  }
  if (
    exception instanceof Prisma.PrismaClientInitializationError ||
    (exception instanceof Prisma.PrismaClientKnownRequestError && /^P10\d\d$/.test(exception.code)) ||
    (exception instanceof Error &&
      /ECONNREFUSED|ECONNRESET|Connection terminated|timeout exceeded when trying to connect/i.test(exception.message))
  ) {
    return {
      status: 503,
      code: 'database_unavailable',
      message: 'The database is unavailable; retry shortly',
      headers: { 'Retry-After': '5' },
    };
  }
  return null;
}

import type { LoggerService } from '@nestjs/common';
import { type DestinationStream, pino, type Logger as PinoLogger } from 'pino';
import type { AppConfig } from '../../config/app-config.js';
import { currentSpanIds } from '../tracing/tracer.js';
import { requestContext } from './request-context.js';

// Keys whose values never reach a log line, wherever they sit in a logged object.
const REDACTED_KEYS = ['authorization', 'apiKey', 'api_key', 'key', 'token', 'adminToken', 'password', 'secret', 'env', 'cookie'];

// The credential headers the audit redacts too (execution/validation/argument-redaction.ts), in their
// lower-case wire spelling.
const REDACTED_HEADER_NAMES = ['proxy-authorization', 'set-cookie', 'x-api-key', 'api-key', 'x-auth-token'];

export function createPinoLogger(level: AppConfig['logLevel'], destination?: DestinationStream): PinoLogger {
  return pino(
    {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: [
        ...REDACTED_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers["${k}"]`]),
        ...REDACTED_HEADER_NAMES.flatMap((k) => [`["${k}"]`, `*["${k}"]`, `*.*["${k}"]`]),
      ],
      censor: '[redacted]',
    },
    mixin: () => {
      const ctx = requestContext.getStore();
      const base = ctx ? { requestId: ctx.requestId, ...(ctx.tenantId ? { tenantId: ctx.tenantId } : {}) } : {};
      // With tracing on, the line names the span it was written in (null otherwise, at the cost of one test).
      const span = currentSpanIds();
      return span ? { ...base, traceId: span.traceId, spanId: span.spanId } : base;
    },
    },
    destination,
  );
}

// Nest's logger interface over pino: one JSON object per line, with the request id when there is one.
export class JsonLogger implements LoggerService {
  constructor(readonly pino: PinoLogger) {}

  log(message: unknown, ...rest: unknown[]) {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]) {
    this.write('fatal', message, rest);
  }

  private write(level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal', message: unknown, rest: unknown[]) {
    // Nest passes the context (a class name) last; errors pass a stack before it.
    const context = typeof rest.at(-1) === 'string' ? (rest.at(-1) as string) : undefined;
    const stack = rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    if (message instanceof Error) {
      this.pino[level]({ context, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ context, ...message });
    } else {
      this.pino[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}

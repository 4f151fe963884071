import type { LoggerService } from '@nestjs/common';
import { type DestinationStream, pino, type Logger as PinoLogger } from 'pino';
import type { AppConfig } from '../../config/app-config.js';
import { redactText } from '../secrets/secret-redaction.js';
import { currentSpanIds } from '../tracing/tracer.js';
import { requestContext } from './request-context.js';

// Keys whose values never reach a log line, wherever they sit in a logged object.
const REDACTED_KEYS = ['authorization', 'apiKey', 'api_key', 'key', 'token', 'adminToken', 'password', 'secret', 'env', 'cookie'];

// The credential headers the audit redacts too (common/secrets/secret-redaction.ts), in their lower-case
// wire spelling.
const REDACTED_HEADER_NAMES = ['proxy-authorization', 'set-cookie', 'x-api-key', 'api-key', 'x-auth-token'];

// Messages, stacks and errors go through the redaction the audit uses, by name and by value (a `?api_key=`
// in a URL, a `Bearer …`, an `sk-…` quoted by an error); the paths above cover logged objects.
const redactedError = (err: Error) => {
  const serialized = pino.stdSerializers.err(err);
  return {
    ...serialized,
    message: redactText(serialized.message),
    ...(typeof serialized.stack === 'string' && { stack: redactText(serialized.stack) }),
  };
};

export function createPinoLogger(level: AppConfig['logLevel'], destination?: DestinationStream): PinoLogger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => (typeof object.stack === 'string' ? { ...object, stack: redactText(object.stack) } : object),
      },
      serializers: { err: redactedError },
      hooks: {
        logMethod(args, method) {
          const last = args.length - 1;
          if (typeof args[last] === 'string') args[last] = redactText(args[last]);
          method.apply(this, args);
        },
      },
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

import { currentRequestId } from '../logging/request-context.js';
import { AppError } from './app-error.js';

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown>; [extra: string]: unknown };
  requestId: string | undefined;
}

// An error as the service answers it: its status, the headers that belong with it and the one body shape.
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

export interface MappedError {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

// A path whose percent-encoding does not decode (%ff), as both adapters answer it: Express's router throws
// a URIError to the filter, Fastify's router hands it to the adapter's frameworkErrors.
export const MALFORMED_PATH: MappedError = {
  status: 400,
  code: 'bad_request',
  message: 'The request path has an invalid percent-encoding',
};

// `requestId`: the request's own, where no request context runs yet (an error of Fastify's router).
export function errorAnswer(mapped: MappedError, requestId = currentRequestId()): ErrorAnswer {
  return {
    status: mapped.status,
    headers: mapped.headers ?? {},
    body: {
      error: {
        code: mapped.code,
        message: mapped.message,
        ...mapped.extra,
        ...(mapped.details ? { details: mapped.details } : {}),
      },
      requestId,
    },
  };
}

export function mapAppError(error: AppError): MappedError {
  return {
    status: error.status,
    code: error.code,
    message: error.message,
    details: error.details,
    extra: error.extra,
    headers: error.headers ?? (error.status === 503 ? { 'Retry-After': '5' } : undefined),
  };
}

// A refusal (an AppError below 500) as its answer, for a handler that writes its own answers: the body is
// the one the global filter would write, without the detour through Nest's exception handling, which was
// a tenth of the CPU of refusing a tool call. Anything else is thrown on, to the filter (and its log).
export function refusalAnswer(error: unknown): ErrorAnswer {
  if (error instanceof AppError && error.status < 500) return errorAnswer(mapAppError(error));
  throw error;
}

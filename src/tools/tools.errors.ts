import { AppError, badRequest } from '../common/errors/app-error.js';
import { RunRefused } from '../execution/process/run-refused.js';

// The refusals of the tool-call feature itself; the execution kit (validation/, net/, process/) keeps its own.
export const invalidCallBody = () =>
  badRequest('invalid_body', 'The body must be a JSON object: { "arguments": {...}, "timeoutMs"?: number }');

export const unknownCallFields = (fields: string[]) =>
  badRequest('invalid_body', `Unknown field(s) ${fields.join(', ')}: the body takes "arguments" and "timeoutMs"`);

export const invalidCallTimeout = () => badRequest('invalid_timeout', 'timeoutMs must be a positive integer (milliseconds)');

// How a refused call is filed, in its audit row and in a batch's or an approval's answer alike: what the
// caller wrote was wrong (its arguments, its body, its timeout) or the call was not allowed.
export function refusedCallStatus(error: AppError): 'invalid_arguments' | 'denied' {
  return error.code === 'invalid_arguments' || error.code === 'invalid_body' || error.code === 'invalid_timeout'
    ? 'invalid_arguments'
    : 'denied';
}

// A command the runner refused before starting it (process/run-refused.ts): what the call asked for was
// wrong, a 400 with the runner's code. Any other error passes through as it is.
export function asCommandRefusal(error: unknown): unknown {
  return error instanceof RunRefused ? badRequest(error.code, error.message, error.details) : error;
}

export const invalidToolFormat = (value: string, formats: readonly string[]) =>
  badRequest('invalid_format', `Unknown format '${value}'; use one of ${formats.join(', ')}`);

export const shuttingDown = () =>
  new AppError(503, 'shutting_down', 'The service is shutting down; retry on another instance', { headers: { 'Retry-After': '1' } });

export const tooManyStreams = (holder: 'API key' | 'tenant', max: number, setting: string) =>
  new AppError(
    429,
    'too_many_streams',
    `This ${holder} already holds ${max} open event streams on this instance (${setting}); close one (one stream per project is enough) before opening another`,
    { headers: { 'Retry-After': '10' }, details: { limit: max } },
  );

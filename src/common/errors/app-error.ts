// The one error type the service throws on purpose. The global filter turns it into
// `{ error: { code, message, details? }, requestId }` with its HTTP status.
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
    // Extra top-level fields of `error` (e.g. `issues`, `usage` for invalid tool arguments).
    readonly extra?: Record<string, unknown>,
    // Response headers that belong with the error (e.g. Retry-After).
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(400, code, message, details);
export const forbidden = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(403, code, message, details);
export const notFound = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(404, code, message, details);
export const conflict = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(409, code, message, details);
export const unprocessable = (code: string, message: string, details?: Record<string, unknown>) =>
  new AppError(422, code, message, details);

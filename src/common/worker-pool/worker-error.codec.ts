import { AppError } from '../errors/app-error.js';

// Errors cross a thread boundary by structured clone, which keeps only name and message. A codec sends
// the error classes its users register (and AppError, the service's own) with their fields, so the caller
// gets back the same class, code and status. The pool names none of its users' classes: they hand them in.
export interface ErrorClassCodec<E extends Error = Error> {
  // Unique among a codec's classes; travels with the error.
  kind: string;
  matches(err: unknown): err is E;
  fields(err: E): Record<string, unknown>;
  revive(message: string, fields: Record<string, unknown>): E;
}

export type SerializedError =
  { kind: string; message: string; fields: Record<string, unknown> } | { kind: 'error'; name: string; message: string; code?: string };

export type TaskOutcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };

const appErrorCodec: ErrorClassCodec<AppError> = {
  kind: 'app',
  matches: (err): err is AppError => err instanceof AppError,
  fields: (err) => ({ status: err.status, code: err.code, details: err.details }),
  revive: (message, f) =>
    new AppError(f.status as number, f.code as string, message, { details: f.details as Record<string, unknown> | undefined }),
};

export class ErrorCodec {
  private readonly classes: ReadonlyArray<ErrorClassCodec>;

  constructor(classes: ReadonlyArray<ErrorClassCodec> = []) {
    this.classes = [appErrorCodec, ...classes];
  }

  // In the thread: the work's value, or its error in the envelope.
  async settle(work: () => Promise<unknown>): Promise<TaskOutcome> {
    try {
      return { ok: true, value: await work() };
    } catch (err) {
      return { ok: false, error: this.serialize(err) };
    }
  }

  // Back on the event loop: the value, or the same error thrown again.
  unwrap<T>(outcome: TaskOutcome): T {
    if (outcome.ok) return outcome.value as T;
    throw this.revive(outcome.error);
  }

  serialize(err: unknown): SerializedError {
    const known = this.classes.find((codec) => codec.matches(err));
    if (known) return { kind: known.kind, message: (err as Error).message, fields: known.fields(err as Error) };
    if (err instanceof Error) {
      const code = (err as NodeJS.ErrnoException).code;
      return { kind: 'error', name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
    }
    return { kind: 'error', name: 'Error', message: String(err) };
  }

  revive(serialized: SerializedError): Error {
    if ('fields' in serialized) {
      const known = this.classes.find((codec) => codec.kind === serialized.kind);
      if (known) return known.revive(serialized.message, serialized.fields);
    }
    const err = new Error(serialized.message) as NodeJS.ErrnoException;
    err.name = 'name' in serialized ? serialized.name : 'Error';
    if ('code' in serialized && serialized.code !== undefined) err.code = serialized.code;
    return err;
  }
}

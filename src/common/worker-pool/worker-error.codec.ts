import { AppError } from '../errors/app-error.js';
import { ToolError } from '../../tools/tool-error.js';
import { WorkspaceFsError, type WorkspaceFsErrorCode } from '../../workspace/fs/workspace-fs.error.js';

// Errors cross the thread boundary by structured clone, which keeps only name and message. Tasks answer
// with this envelope instead so that the caller gets back the same error class, code and status.
export type SerializedError =
  | { kind: 'app'; status: number; code: string; message: string; details?: Record<string, unknown> }
  | { kind: 'workspace_fs'; code: WorkspaceFsErrorCode; message: string }
  | { kind: 'tool'; code: string; message: string; retryable: boolean }
  | { kind: 'error'; name: string; message: string; code?: string };

export type TaskOutcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };

// In the thread: the work's value, or its error in the envelope.
export async function settleTask(work: () => Promise<unknown>): Promise<TaskOutcome> {
  try {
    return { ok: true, value: await work() };
  } catch (err) {
    return { ok: false, error: serializeError(err) };
  }
}

// Back on the event loop: the value, or the same error thrown again.
export function unwrapOutcome<T>(outcome: TaskOutcome): T {
  if (outcome.ok) return outcome.value as T;
  throw reviveError(outcome.error);
}

export function serializeError(err: unknown): SerializedError {
  if (err instanceof AppError) {
    return { kind: 'app', status: err.status, code: err.code, message: err.message, details: err.details };
  }
  if (err instanceof WorkspaceFsError) return { kind: 'workspace_fs', code: err.code, message: err.message };
  if (err instanceof ToolError) return { kind: 'tool', code: err.code, message: err.message, retryable: err.retryable };
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return { kind: 'error', name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  return { kind: 'error', name: 'Error', message: String(err) };
}

export function reviveError(serialized: SerializedError): Error {
  switch (serialized.kind) {
    case 'app':
      return new AppError(serialized.status, serialized.code, serialized.message, serialized.details);
    case 'workspace_fs':
      return new WorkspaceFsError(serialized.code, serialized.message);
    case 'tool':
      return new ToolError(serialized.code, serialized.message, serialized.retryable);
    case 'error': {
      const err = new Error(serialized.message) as NodeJS.ErrnoException;
      err.name = serialized.name;
      if (serialized.code !== undefined) err.code = serialized.code;
      return err;
    }
  }
}

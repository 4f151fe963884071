import type { ErrorClassCodec } from '../common/worker-pool/worker-error.codec.js';

// An outcome of a tool that ran and failed (file missing, network down, command exited badly).
// The invocation answers 200 with `status: "error"` and this code and message, written for the model.
// A call the gateway refuses to run at all is an AppError (4xx) instead.
export class ToolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

// How a ToolError crosses a thread boundary (a sync skill in the worker pool) and comes back whole.
export const toolErrorCodec: ErrorClassCodec<ToolError> = {
  kind: 'tool',
  matches: (err): err is ToolError => err instanceof ToolError,
  fields: (err) => ({ code: err.code, retryable: err.retryable }),
  revive: (message, fields) => new ToolError(fields.code as string, message, fields.retryable as boolean),
};

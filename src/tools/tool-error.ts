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

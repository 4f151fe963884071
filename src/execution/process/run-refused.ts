// Options a run cannot honour (an argv with a NUL byte, a limit that is not a positive integer, an
// environment variable a command may not be given): nothing was started. It carries no HTTP status: the
// caller says what it means for its request (the command tools answer 400 with its code and details).
export class RunRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RunRefused';
  }
}

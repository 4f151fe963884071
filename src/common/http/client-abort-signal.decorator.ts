import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

interface ClosableResponse {
  writableFinished?: boolean;
  once(event: 'close', listener: () => void): void;
}

// An AbortSignal that fires when the client goes away before the answer is sent, so work done for it
// (a child process, a fetch) is cancelled. Works on the raw Node response under Express and Fastify.
export const ClientAbortSignal = createParamDecorator((_: unknown, ctx: ExecutionContext): AbortSignal => {
  const reply = ctx.switchToHttp().getResponse<{ raw?: ClosableResponse } & ClosableResponse>();
  const response = reply.raw ?? reply;
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
});

import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

interface ClosableResponse {
  writableFinished?: boolean;
  once(event: 'close', listener: () => void): void;
}

// The reason a request's controller carries when its client went away.
export class ClientDisconnected extends Error {
  constructor() {
    super('client disconnected');
  }
}

// The reason when the client asked to stop the call (MCP notifications/cancelled): a disconnect it chose.
export class ClientCancelled extends ClientDisconnected {
  constructor(readonly clientReason?: string) {
    super();
    this.message = 'client cancelled the request';
  }
}

// An AbortController aborted with ClientDisconnected when the client goes away before the answer is
// sent, so work done for it (a child process, a fetch) is cancelled. The handler may abort it for its own
// reasons too (a deadline): one controller per request, the first reason wins. Works on the raw Node
// response under Express and Fastify.
export const ClientAbortController = createParamDecorator((_: unknown, ctx: ExecutionContext): AbortController => {
  const reply = ctx.switchToHttp().getResponse<{ raw?: ClosableResponse } & ClosableResponse>();
  const response = reply.raw ?? reply;
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort(new ClientDisconnected());
  });
  return controller;
});

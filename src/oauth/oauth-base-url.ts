import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

// The request's own origin pieces, for the service's base URL when PUBLIC_URL is not set, and who sent it.
export interface RequestOrigin {
  headers: Record<string, unknown>;
  protocol?: string;
  // The client's address (the peer's, or as the proxy chain says when the adapter is told to trust one).
  address: string;
}

export const CurrentOrigin = createParamDecorator((_: unknown, ctx: ExecutionContext): RequestOrigin => {
  const request = ctx.switchToHttp().getRequest<{ headers: Record<string, unknown>; protocol?: string; ip?: string }>();
  return { headers: request.headers, protocol: request.protocol, address: request.ip ?? 'unknown' };
});

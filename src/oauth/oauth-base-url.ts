import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

// The request's own origin pieces, for the service's base URL when PUBLIC_URL is not set.
export interface RequestOrigin {
  headers: Record<string, unknown>;
  protocol?: string;
}

export const CurrentOrigin = createParamDecorator((_: unknown, ctx: ExecutionContext): RequestOrigin => {
  const request = ctx.switchToHttp().getRequest<RequestOrigin>();
  return { headers: request.headers, protocol: request.protocol };
});

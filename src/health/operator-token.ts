import { createHash, timingSafeEqual } from 'node:crypto';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';

// The Authorization header, read without declaring it as an operation's parameter (the OpenAPI document
// says who may send what through its security schemes; this route stays public).
export const Authorization = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): string | undefined =>
    ctx.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers.authorization,
);

// Whether an Authorization header carries the ADMIN_TOKEN, for a public route that tells the operator more.
// Compared by hash, in constant time, like the admin routes' guard.
export class OperatorToken {
  private readonly hash: Buffer | null;

  constructor(adminToken: string | null) {
    this.hash = adminToken === null ? null : sha256(adminToken);
  }

  matches(authorization: string | undefined): boolean {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    return this.hash !== null && token !== undefined && timingSafeEqual(sha256(token), this.hash);
  }
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

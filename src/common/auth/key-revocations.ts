import { Global, Injectable, Module } from '@nestjs/common';
import type { Tenant } from './auth.decorators.js';

export type KeyEnded = { apiKeyId: string } | { tenantId: string };

// Keys that stop working while something they opened is still open: an event stream, an MCP request. The
// key service reports each revocation (from this instance or, through the change bus, another) and each
// deleted tenant here; whatever a key holds open listens and closes. Expiry is a time known in advance, so
// holders close themselves then (see `untilEnded`).
@Injectable()
export class KeyRevocations {
  private readonly listeners = new Set<(ended: KeyEnded) => void>();

  ended(change: KeyEnded): void {
    for (const listener of [...this.listeners]) listener(change);
  }

  // Calls `onEnd` once, when the key is revoked, its tenant deleted, or it expires; answers how to stop
  // listening (call it when the holder closes first).
  untilEnded(key: Pick<Tenant, 'apiKeyId' | 'tenantId' | 'expiresAt'>, onEnd: () => void): () => void {
    let done = false;
    const end = () => {
      if (done) return;
      stop();
      onEnd();
    };
    const listener = (change: KeyEnded) => {
      if ('apiKeyId' in change ? change.apiKeyId === key.apiKeyId : change.tenantId === key.tenantId) end();
    };
    const timer = key.expiresAt === null ? undefined : setTimeout(end, Math.max(0, key.expiresAt.getTime() - Date.now()));
    timer?.unref();
    const stop = () => {
      done = true;
      clearTimeout(timer);
      this.listeners.delete(listener);
    };
    this.listeners.add(listener);
    return stop;
  }
}

@Global()
@Module({ providers: [KeyRevocations], exports: [KeyRevocations] })
export class KeyRevocationsModule {}

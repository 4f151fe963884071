import { Injectable } from '@nestjs/common';
import { busTopic, ChangeBus } from '../common/bus/change-bus.js';
import { ClientCancelled } from '../common/http/client-abort-controller.decorator.js';

// Whose request a cancellation names. A stateless endpoint has no session: JSON-RPC ids are the client's,
// so a request is known by the key that sent it (and the project it went to) and its id. Only the caller
// that sent a request can name it.
export interface McpRequestRef {
  tenantId: string;
  projectId: string;
  // The API key (or other principal) that sent it.
  principalId: string;
  requestId: string | number;
}

interface CancelMessage extends McpRequestRef {
  reason?: string;
}

const MCP_CANCEL = busTopic<CancelMessage>('mcp.cancel');
// A cancellation may overtake the request it names (both are POSTs, perhaps to different instances): it is
// remembered this long, and a request that starts meanwhile is stopped at once.
const EARLY_CANCEL_MS = 10_000;
const MAX_EARLY = 10_000;
const MAX_ID_LENGTH = 256;
const MAX_REASON_LENGTH = 200;

const keyOf = (r: McpRequestRef) => JSON.stringify([r.tenantId, r.projectId, r.principalId, typeof r.requestId, r.requestId]);

// notifications/cancelled arrives on a POST of its own, on whichever instance the load balancer picks; the
// request it names runs on one of them. It is published on the change bus, and the instance running that
// request aborts it (the executor's signal: a sandbox is torn down at once, and the call is audited
// `cancelled`).
@Injectable()
export class McpCancellations {
  private readonly running = new Map<string, AbortController>();
  private readonly early = new Map<string, number>();

  constructor(private readonly bus: ChangeBus) {
    bus.subscribe(MCP_CANCEL, (message) => this.received(message));
  }

  // Aborts the request's own controller when a cancellation for it arrives, here or on another instance.
  // Returns the release to call when the request is answered.
  track(ref: McpRequestRef, controller: AbortController): () => void {
    const key = keyOf(ref);
    const earlyAt = this.early.get(key);
    if (earlyAt !== undefined && Date.now() - earlyAt < EARLY_CANCEL_MS) {
      this.early.delete(key);
      controller.abort(new ClientCancelled());
      return () => undefined;
    }
    this.running.set(key, controller);
    return () => {
      if (this.running.get(key) === controller) this.running.delete(key);
    };
  }

  cancel(ref: McpRequestRef, reason?: string): void {
    if (String(ref.requestId).length > MAX_ID_LENGTH) return;
    this.bus.publish(MCP_CANCEL, { ...ref, ...(reason ? { reason: reason.slice(0, MAX_REASON_LENGTH) } : {}) });
  }

  private received(message: CancelMessage): void {
    const key = keyOf(message);
    const controller = this.running.get(key);
    if (controller) {
      this.running.delete(key);
      controller.abort(new ClientCancelled(message.reason));
      return;
    }
    this.rememberEarly(key);
  }

  private rememberEarly(key: string): void {
    const now = Date.now();
    if (this.early.size >= MAX_EARLY) {
      for (const [k, at] of this.early) {
        if (now - at >= EARLY_CANCEL_MS || this.early.size >= MAX_EARLY) this.early.delete(k);
        else break;
      }
    }
    this.early.set(key, now);
  }
}

import type { Socket } from 'node:net';
import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Tenant } from '../common/auth/auth.decorators.js';
import { unreadBytes } from '../common/http/held-answers.js';
import { tenantBudgetExceeded } from './budgets.errors.js';
import { TenantBudgets } from './tenant-budgets.js';

// The bytes of a tenant's answers that this instance holds and its clients have not yet taken: what waits in
// the service's memory until the client reads (each connection's write buffer, a batch's results not yet
// handed to it, and the results a batch has collected while its other calls still run). A call gives back
// its concurrentCalls place when its outcome is known, before its answer leaves; the slow-reader floor
// (RESPONSE_MIN_READ_BYTES_PER_S) lets a client keep an answer for as long as it reads at that rate (64 MiB
// at 16 KiB/s: over an hour). Without this, one tenant's many connections, each reading a large answer just
// above the floor, held as much memory as it had connections. Each connection is counted for the tenant
// whose request it carried last; the figure is per instance, since the memory is.
@Injectable()
export class UnreadAnswers {
  private readonly sockets = new Map<string, Set<Socket>>();
  // Results a route holds for the tenant before its answer is sent: a batch's, while its other calls run.
  private readonly held = new Map<string, number>();
  private readonly owners = new WeakMap<Socket, string>();

  constructor(private readonly budgets: TenantBudgets) {}

  // The tenant's request arrived on `socket`: from now on what waits on it counts as the tenant's.
  attach(socket: Socket, tenantId: string): void {
    const owner = this.owners.get(socket);
    if (owner === tenantId) return;
    if (owner !== undefined) this.detach(socket, owner);
    else socket.once('close', () => this.detach(socket, this.owners.get(socket)));
    this.owners.set(socket, tenantId);
    let set = this.sockets.get(tenantId);
    if (!set) this.sockets.set(tenantId, (set = new Set()));
    set.add(socket);
  }

  // Counts `bytes` of results a route holds for the tenant until the returned function is called (once).
  hold(tenantId: string, bytes: number): () => void {
    this.held.set(tenantId, (this.held.get(tenantId) ?? 0) + bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(tenantId) ?? bytes) - bytes;
      if (left > 0) this.held.set(tenantId, left);
      else this.held.delete(tenantId);
    };
  }

  // Summed when asked: a tenant has a few connections, and each one's figure is two fields.
  bytes(tenantId: string): number {
    let total = this.held.get(tenantId) ?? 0;
    for (const socket of this.sockets.get(tenantId) ?? []) total += unreadBytes(socket);
    return total;
  }

  // Refuses the tenant's request while its unread answers are at its budget (429, Retry-After): nothing of the
  // request runs, and its clients' reading is what makes room. Null when nothing waits (no figure to read).
  check(tenantId: string): Promise<void> | null {
    const waiting = this.bytes(tenantId);
    return waiting === 0 ? null : this.refuseAtLimit(tenantId, waiting);
  }

  private async refuseAtLimit(tenantId: string, waiting: number): Promise<void> {
    const limit = (await this.budgets.current(tenantId)).unreadAnswerBytes;
    if (waiting < limit) return;
    throw tenantBudgetExceeded(
      'unreadAnswerBytes',
      limit,
      waiting,
      0,
      "Read the answers the tenant's clients have waiting (or close those connections), then call again.",
    );
  }

  private detach(socket: Socket, tenantId: string | undefined): void {
    if (tenantId === undefined) return;
    const set = this.sockets.get(tenantId);
    set?.delete(socket);
    if (set?.size === 0) this.sockets.delete(tenantId);
  }
}

type GuardedRequest = { tenant?: Tenant; socket?: Socket; raw?: { socket?: Socket } };

// Runs after AuthGuard, on every tenant route (REST, batch, MCP, the console's): the connection is counted for
// the tenant, and the tenant's request refused while its clients leave too much of its answers unread. Each
// tool call is checked again as it starts (CallDispatcher), so a batch's later calls are refused too: what a
// tenant holds is at most the budget and the results of the calls it has in progress (concurrentCalls).
@Injectable()
export class UnreadAnswersGuard implements CanActivate {
  constructor(private readonly unread: UnreadAnswers) {}

  // Synchronous unless something of the tenant's waits: most requests pass without a turn of the loop.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<GuardedRequest>();
    const socket = request.raw?.socket ?? request.socket;
    if (!request.tenant || !socket) return true;
    this.unread.attach(socket, request.tenant.tenantId);
    const checked = this.unread.check(request.tenant.tenantId);
    return checked ? checked.then(() => true) : true;
  }
}

import { Injectable } from '@nestjs/common';

// The event loop shared among tenants by what their calls cost it, not by how many calls they send.
//
// Every call's request, its checks, its audit row and its answer take the one main thread, which answers
// every tenant. A tenant looping calls with large answers (batches of 8 MiB, keyed answers stored in the
// database) held it four fifths of the time in the noisy-neighbour bench: the other tenant's small calls
// waited behind that work at every step and got a fifth of their usual throughput. Here, beside other busy
// tenants, a call starts only while its tenant is no more than LEAD_UNITS of cost ahead of the least-served
// of them, and while its own calls in progress come to no more than IN_PROGRESS_UNITS; a call that may not
// start waits, behind its tenant's earlier ones, until the others catch up or go quiet or its own calls end.
// A waiting call costs nothing of the main thread, and a tenant alone is never held back.
//
// A call's cost is counted in units of about what a small call takes of the main thread: one, plus one per
// BYTES_PER_UNIT of its result (written as JSON at least once and measured); an answer stored under an
// Idempotency-Key adds one, and one per STORED_BYTES_PER_UNIT (charge); a command adds one per second it
// runs (its watchdog samples it several times a second). A tenant is charged what its calls cost as they
// end. Its calls in progress (for PENDING_MS each) count against it alone, at its recent average each, so
// that a batch's calls starting together see each other, while a tenant whose calls pile up unanswered
// gives nobody else room to start more.
//
// This is start-time fair queueing among the busy tenants: those with a call waiting, or that started or
// ended one within BUSY_MS. A tenant only waiting on long calls (a command that sleeps, a slow upstream)
// holds nobody back once BUSY_MS has passed, and one that comes back after a pause starts level with the
// least-served busy tenant: a quiet spell is not banked as credit.

// How far ahead of the least-served busy tenant a tenant may start another call, in cost units.
export const LEAD_UNITS = 4;
// A call's result bytes that cost the main thread about as much as a small call: measured in the
// noisy-neighbour bench, a read_file of 256 KiB took about 3 ms more of the main thread than one of a line.
export const BYTES_PER_UNIT = 128 * 1024;
// The same for bytes a tenant's call writes to the database (an answer kept under an Idempotency-Key): the
// database and its disk are shared as the event loop is, and cost more per byte. Measured in the
// noisy-neighbour bench: one tenant storing keyed answers of 256 KiB, charged at BYTES_PER_UNIT, kept about
// 100 a second (25 MB/s of rows and WAL), and another tenant's steady calls, which each write an audit
// row, went from a p99 of 15 ms to 147 ms waiting on the database.
export const STORED_BYTES_PER_UNIT = 16 * 1024;
// How long a tenant counts as busy after it last started or ended a call. A client's next call comes a
// moment after its last answer (the answer written, the next request read and authenticated); a tenant
// counted quiet in between would leave the comparison between almost every two calls and come back level,
// its lag forgiven, and the tenant ahead would never wait.
export const BUSY_MS = 50;
// How much of a tenant's calls may be in progress (pending) beside other busy tenants: about as much work on
// the event loop as a dozen small calls.
export const IN_PROGRESS_UNITS = 12;
// How long a call in progress counts against its tenant (pending): a call's own work on the event loop
// takes milliseconds; one longer waits on something else.
export const PENDING_MS = 100;
// The longest a call waits for its turn. Those ahead of it are being served, so it is not reached in
// practice; it keeps a fault in the accounting from ever holding a call.
export const MAX_WAIT_MS = 5_000;

// How much the newest call weighs in the estimate of a tenant's next one.
const AVERAGE_WEIGHT = 0.2;

interface TenantShare {
  // Cost units of its calls that ended (the virtual time the other tenants are compared with).
  charged: number;
  // Its calls in progress, each at the average it was started with.
  pending: number;
  // Calls waiting to start, oldest first: each starts the call when called.
  waiting: Array<() => void>;
  // What this tenant's calls have cost lately (the estimate charged when one starts).
  average: number;
  // Ends its busy spell BUSY_MS after its last call started or ended.
  quiet?: NodeJS.Timeout;
}

// What a started call gives back when it ends: its cost in units (callCost).
export type EndCall = (units: number) => void;

export function callCost(resultBytes: number, runMs = 0): number {
  return 1 + resultBytes / BYTES_PER_UNIT + runMs / 1000;
}

@Injectable()
export class LoopShare {
  // The busy tenants: only they are compared, so a decision costs as many steps as there are busy tenants.
  private readonly busy = new Map<string, TenantShare>();
  // Tenants that went quiet while others stayed busy keep their figure, so that one coming back is lifted to
  // the least-served, never lowered; once no tenant is busy every figure is dropped.
  private readonly quiet = new Map<string, TenantShare>();
  private waitingCalls = 0;
  private waitsTotal = 0;

  // Resolves once the call may start; the answer is called when it ends (once).
  async start(tenantId: string, signal?: AbortSignal): Promise<EndCall> {
    const share = this.touch(tenantId);
    // Behind the tenant's own waiting calls, if any: its calls start in the order they came.
    if (share.waiting.length === 0 && this.mayStart(tenantId, share)) return this.begin(tenantId, share);
    return this.wait(tenantId, share, signal);
  }

  // Work done for a tenant outside its calls' own cost: storing an answer under its Idempotency-Key
  // writes it to the database, as much again as the call's result.
  charge(tenantId: string, units: number): void {
    this.touch(tenantId).charged += units;
  }

  // Calls waiting for their tenant's turn now, and in all since start-up (LoopShareMetrics).
  get waiting(): number {
    return this.waitingCalls;
  }

  get waits(): number {
    return this.waitsTotal;
  }

  // The tenant started or ended a call: busy for BUSY_MS more. One that was quiet comes in level with the
  // least-served busy tenant.
  private touch(tenantId: string): TenantShare {
    let share = this.busy.get(tenantId);
    if (!share) {
      const floor = this.leastCharged(tenantId);
      share = this.quiet.get(tenantId) ?? { charged: 0, pending: 0, waiting: [], average: 1 };
      this.quiet.delete(tenantId);
      if (floor !== null) share.charged = Math.max(share.charged, floor);
      this.busy.set(tenantId, share);
    }
    clearTimeout(share.quiet);
    share.quiet = setTimeout(() => this.goQuiet(tenantId), BUSY_MS);
    share.quiet.unref();
    return share;
  }

  private begin(tenantId: string, share: TenantShare): EndCall {
    const estimate = share.average;
    share.pending += estimate;
    let counted = true;
    // A call still in progress after PENDING_MS waits on something else (a command, an upstream) and
    // takes nothing of the event loop meanwhile: it stops counting, so two tenants each waiting for the
    // other's calls to end never hold each other for longer.
    const uncount = () => {
      if (!counted) return;
      counted = false;
      share.pending -= estimate;
    };
    const long = setTimeout(() => (uncount(), this.wake()), PENDING_MS);
    long.unref();
    let ended = false;
    return (units: number) => {
      if (ended) return;
      ended = true;
      clearTimeout(long);
      uncount();
      // Every tenant may have gone quiet while the call ran, and the figures been dropped: the cost goes to
      // the tenant's figures now.
      const current = this.touch(tenantId);
      current.charged += units;
      current.average = share.average + AVERAGE_WEIGHT * (units - share.average);
      this.wake();
    };
  }

  // The call starts the moment it is let go, so that one wake-up letting several go sees each it let go before.
  private wait(tenantId: string, share: TenantShare, signal?: AbortSignal): Promise<EndCall> {
    this.waitsTotal++;
    this.waitingCalls++;
    return new Promise<EndCall>((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const go = () => {
        const at = share.waiting.indexOf(go);
        if (at === -1) return;
        share.waiting.splice(at, 1);
        this.waitingCalls--;
        clearTimeout(timer);
        signal?.removeEventListener('abort', go);
        resolve(this.begin(tenantId, share));
      };
      share.waiting.push(go);
      // A call whose client left, or that waited its longest, starts at once: the first ends as soon as it
      // starts (cancelled), and the second should not happen.
      timer = setTimeout(go, MAX_WAIT_MS);
      timer.unref();
      signal?.addEventListener('abort', go, { once: true });
    });
  }

  // Starts every waiting call that may start now, least-charged tenant first.
  private wake(): void {
    for (;;) {
      let next: TenantShare | null = null;
      for (const [tenantId, share] of this.busy) {
        if (share.waiting.length === 0 || !this.mayStart(tenantId, share)) continue;
        if (next === null || share.charged + share.pending < next.charged + next.pending) next = share;
      }
      if (next === null) return;
      next.waiting[0]();
    }
  }

  // Beside other busy tenants, a tenant may start a call while it is not more than LEAD_UNITS ahead of what
  // the least-served one's ended calls cost, and while its calls in progress (those on the event loop, not
  // yet PENDING_MS old) come to no more than IN_PROGRESS_UNITS with this one: however far behind it is, it
  // never has more than a few milliseconds of work queued on the event loop before another tenant's call.
  private mayStart(tenantId: string, share: TenantShare): boolean {
    const least = this.leastCharged(tenantId);
    if (least === null) return true;
    const room = share.pending === 0 || share.pending + share.average <= IN_PROGRESS_UNITS;
    return room && share.charged <= least + LEAD_UNITS;
  }

  // The least charged of the other busy tenants; null: there is none.
  private leastCharged(except: string): number | null {
    let least: number | null = null;
    for (const [tenantId, share] of this.busy) {
      if (tenantId !== except && (least === null || share.charged < least)) least = share.charged;
    }
    return least;
  }

  // A tenant with calls waiting stays busy (its calls start as the others catch up or go quiet).
  private goQuiet(tenantId: string): void {
    const share = this.busy.get(tenantId);
    if (!share) return;
    if (share.waiting.length > 0) {
      share.quiet = setTimeout(() => this.goQuiet(tenantId), BUSY_MS);
      share.quiet.unref();
      return;
    }
    this.busy.delete(tenantId);
    if (this.busy.size === 0) this.quiet.clear();
    else this.quiet.set(tenantId, share);
    // The tenants it held back compare with the others only now.
    this.wake();
  }
}

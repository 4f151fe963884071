import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { performance } from 'node:perf_hooks';

// The event loop shared among the tenants using it, by what their calls cost it.
//
// Every call's request, checks, audit row and answer take the one main thread, which answers every tenant.
// A tenant looping calls with large answers (batches of 8 MiB, keyed answers stored in the database) held it
// two thirds of the time in the noisy-neighbour bench, and another tenant's small calls, waiting behind that
// work at every step, got a third of their usual throughput.
//
// So a tenant whose part of what the recent calls of the active tenants cost is more than an equal split
// among them starts a call only while the event loop is no busier than BUSY_LOOP (its utilization over the
// last fraction of a second), and then one at a time; a call that may not start waits, behind its tenant's
// earlier ones. A tenant within its split is never held, nor is a tenant alone. Beside another active
// tenant, however little that one spends (a tenant calling a few times a second is the one to protect; one
// whose calls wait on an upstream looks the same), the busiest tenant takes what the loop has up to
// BUSY_LOOP, the rest kept for the others.
//
// A call's cost is counted in units of about what a small call takes of the main thread (callCost): one,
// plus one per BYTES_PER_UNIT of its result (written as JSON at least once), plus one per second a command
// ran (its watchdog samples it several times a second); an answer stored under an Idempotency-Key adds one,
// and one per STORED_BYTES_PER_UNIT (charge). What a tenant spent decays by half every HALF_LIFE_MS, so the
// split follows what each does now, and a quiet spell is never banked as credit: a tenant's figure only falls.
// A call in progress counts at its tenant's recent average until it ends (then at what it cost), so the 32
// calls of one batch see each other as they start.

// The loop's utilization past which the busier tenants wait for their split.
export const BUSY_LOOP = 0.8;
// A call's result bytes that cost the main thread about as much as a small call: measured in the
// noisy-neighbour bench, a read_file of 256 KiB took about 3 ms more of the main thread than one of a line.
export const BYTES_PER_UNIT = 128 * 1024;
// The same for bytes stored in the database for a tenant (an answer kept under an Idempotency-Key): charged at
// BYTES_PER_UNIT, one tenant kept 25 MB/s of such rows and WAL, and another's steady calls, which each write an
// audit row, went from a p99 of 15 ms to 147 ms waiting on the database.
export const STORED_BYTES_PER_UNIT = 16 * 1024;
export const HALF_LIFE_MS = 500;
// A tenant counts as active while its decayed figure is at least this: a tenant calling about twice a second
// or more, or whose calls cost more. Not one call alone (a unit, as a request without a known key takes):
// beside a tenant that just made one, another's burst was held to one call at a time for a second, its calls
// waiting with their places in its concurrentCalls budget taken, and the rest of the burst refused 429.
const ACTIVE_UNITS = 1.5;
// How often the loop's utilization is read, while any tenant is active.
const SAMPLE_MS = 50;
// The longest a call waits for its turn: its tenant's figure halves every HALF_LIFE_MS, so it is not reached
// in practice; it keeps a fault in the accounting from ever holding a call.
export const MAX_WAIT_MS = 5_000;
// How much the newest call weighs in the estimate of a tenant's next one.
const AVERAGE_WEIGHT = 0.2;

interface TenantCost {
  // Units spent, decayed to `at`.
  spent: number;
  at: number;
  // Its calls in progress, each at the average it was started with.
  pending: number;
  average: number;
  // Calls waiting to start, oldest first: each starts its call when called.
  waiting: Array<() => void>;
}

// What a started call gives back when it ends: its cost in units (callCost).
export type EndCall = (units: number) => void;

export function callCost(resultBytes: number, runMs = 0): number {
  return 1 + resultBytes / BYTES_PER_UNIT + runMs / 1000;
}

export function storedCost(bytes: number): number {
  return 1 + bytes / STORED_BYTES_PER_UNIT;
}

@Injectable()
export class LoopShare implements OnModuleDestroy {
  private readonly tenants = new Map<string, TenantCost>();
  // The loop's utilization, smoothed over a few samples, and the reading it is measured from.
  private utilization = 0;
  private lastReading = performance.eventLoopUtilization();
  private sampler: NodeJS.Timeout | undefined;
  private waitingCalls = 0;
  private waitsTotal = 0;

  // Resolves once the call may start; the answer is called when it ends (once).
  async start(tenantId: string, signal?: AbortSignal): Promise<EndCall> {
    const tenant = this.tenant(tenantId);
    // Behind the tenant's own waiting calls, if any: its calls start in the order they came.
    if (tenant.waiting.length === 0 && this.mayStart(tenant)) return this.begin(tenantId, tenant);
    return this.wait(tenantId, tenant, signal);
  }

  // The work, started within its tenant's share and charged what costOf says it cost (its result, or
  // undefined when it threw). `signal`: the client went away, so a waiting start is let go at once.
  async run<T>(tenantId: string, work: () => Promise<T>, costOf: (result: T | undefined) => number, signal?: AbortSignal): Promise<T> {
    const end = await this.start(tenantId, signal);
    let result: T | undefined;
    try {
      result = await work();
      return result;
    } finally {
      end(costOf(result));
    }
  }

  // Work done for a tenant outside its calls' own cost (an answer stored for it).
  charge(tenantId: string, units: number): void {
    const tenant = this.tenant(tenantId);
    tenant.spent += units;
  }

  // Calls waiting for their tenant's turn now, and in all since start-up (metrics).
  get waiting(): number {
    return this.waitingCalls;
  }

  get waits(): number {
    return this.waitsTotal;
  }

  onModuleDestroy(): void {
    clearInterval(this.sampler);
    this.sampler = undefined;
  }

  private tenant(tenantId: string): TenantCost {
    let tenant = this.tenants.get(tenantId);
    const now = performance.now();
    if (!tenant) {
      tenant = { spent: 0, at: now, pending: 0, average: 1, waiting: [] };
      this.tenants.set(tenantId, tenant);
      this.sample();
    } else decay(tenant, now);
    return tenant;
  }

  private begin(tenantId: string, tenant: TenantCost): EndCall {
    const estimate = tenant.average;
    tenant.pending += estimate;
    let ended = false;
    return (units: number) => {
      if (ended) return;
      ended = true;
      const current = this.tenant(tenantId);
      current.pending -= estimate;
      current.spent += units;
      current.average += AVERAGE_WEIGHT * (units - current.average);
      this.wake();
    };
  }

  // The call starts the moment it is let go, so that one wake-up letting several go sees each it let go before.
  private wait(tenantId: string, tenant: TenantCost, signal?: AbortSignal): Promise<EndCall> {
    this.waitsTotal++;
    this.waitingCalls++;
    return new Promise<EndCall>((resolve) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const go = () => {
        const at = tenant.waiting.indexOf(go);
        if (at === -1) return;
        tenant.waiting.splice(at, 1);
        this.waitingCalls--;
        clearTimeout(timer);
        signal?.removeEventListener('abort', go);
        resolve(this.begin(tenantId, tenant));
      };
      tenant.waiting.push(go);
      // A call whose client left, or that waited its longest, starts at once: the first ends as soon as it
      // starts (cancelled), and the second should not happen.
      timer = setTimeout(go, MAX_WAIT_MS);
      timer.unref();
      signal?.addEventListener('abort', go, { once: true });
    });
  }

  // Starts every waiting call that may start now, the tenant with the least spent first.
  private wake(): void {
    for (;;) {
      let next: TenantCost | null = null;
      for (const tenant of this.tenants.values()) {
        if (tenant.waiting.length === 0 || !this.mayStart(tenant)) continue;
        if (next === null || tenant.spent + tenant.pending < next.spent + next.pending) next = tenant;
      }
      if (next === null) return;
      next.waiting[0]();
    }
  }

  // While the loop has room, any call starts; past BUSY_LOOP, a tenant's call starts while its part of what
  // the active tenants spent (its calls in progress included) is no more than an equal split.
  private mayStart(tenant: TenantCost): boolean {
    let active = 0;
    let counted = 0;
    for (const other of this.tenants.values()) {
      const figure = other.spent + other.pending;
      if (figure < ACTIVE_UNITS && other.waiting.length === 0) continue;
      counted += figure;
      active++;
    }
    if (active <= 1 || (tenant.spent + tenant.pending) * active <= counted) return true;
    // Over its split: held while the loop is busy; while it has room, one call in progress at a time, so
    // that the calls held meanwhile do not all start at once, work of several blocks of the loop in a row.
    return this.utilization <= BUSY_LOOP && tenant.pending < tenant.average * 1.5;
  }

  // The share of the time since the last reading that the event loop was busy.
  protected recentUtilization(): number {
    const reading = performance.eventLoopUtilization();
    const recent = performance.eventLoopUtilization(reading, this.lastReading).utilization;
    this.lastReading = reading;
    return recent;
  }

  // Reads the loop's utilization every SAMPLE_MS while a tenant is active, decays every figure, forgets the
  // tenants gone quiet, and starts the calls the new figures let go.
  private sample(): void {
    if (this.sampler) return;
    this.lastReading = performance.eventLoopUtilization();
    this.sampler = setInterval(() => {
      const recent = this.recentUtilization();
      // Smoothed over about two samples: one step of 100 ms is not a busy loop.
      this.utilization += 0.5 * (recent - this.utilization);
      const now = performance.now();
      for (const [tenantId, tenant] of this.tenants) {
        decay(tenant, now);
        if (tenant.spent < ACTIVE_UNITS / 8 && tenant.pending < 1e-6 && tenant.waiting.length === 0) this.tenants.delete(tenantId);
      }
      this.wake();
      if (this.tenants.size === 0) {
        clearInterval(this.sampler);
        this.sampler = undefined;
        this.utilization = 0;
      }
    }, SAMPLE_MS);
    this.sampler.unref();
  }
}

function decay(tenant: TenantCost, now: number): void {
  if (now <= tenant.at) return;
  tenant.spent *= 0.5 ** ((now - tenant.at) / HALF_LIFE_MS);
  tenant.at = now;
}

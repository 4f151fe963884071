import { tooManyExports } from './audit.errors.js';

// Exports in progress per tenant on this instance. Each one reads the whole window page after page, so a
// tenant opening many at once would hold that many query loops (on PGlite, on the main thread).
export class ExportSlots {
  private readonly held = new Map<string, number>();

  constructor(private readonly maxPerTenant: number) {}

  // A slot for one export, or a 429; the returned function gives it back (once, however often it is called).
  take(tenantId: string): () => void {
    const count = this.held.get(tenantId) ?? 0;
    if (count >= this.maxPerTenant) throw tooManyExports(this.maxPerTenant);
    this.held.set(tenantId, count + 1);
    let holding = true;
    return () => {
      if (!holding) return;
      holding = false;
      const left = (this.held.get(tenantId) ?? 1) - 1;
      if (left > 0) this.held.set(tenantId, left);
      else this.held.delete(tenantId);
    };
  }
}

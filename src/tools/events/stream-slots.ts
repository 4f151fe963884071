import type { Tenant } from '../../common/auth/auth.decorators.js';
import { tooManyStreams } from '../tools.errors.js';

export interface StreamLimits {
  maxPerTenant: number;
  maxPerKey: number;
}

// Open event streams per tenant and per API key on this instance. A stream holds a connection and a
// subscription for as long as the client likes, so one key must not be able to hold them all.
export class StreamSlots {
  private readonly perTenant = new Map<string, number>();
  private readonly perKey = new Map<string, number>();

  constructor(private readonly limits: StreamLimits) {}

  // A slot for one stream, or a 429; the returned function gives it back (once, however often it is called).
  take(tenant: Pick<Tenant, 'tenantId' | 'apiKeyId'>): () => void {
    const byKey = this.perKey.get(tenant.apiKeyId) ?? 0;
    if (byKey >= this.limits.maxPerKey) throw tooManyStreams('API key', this.limits.maxPerKey, 'SSE_MAX_STREAMS_PER_KEY');
    const byTenant = this.perTenant.get(tenant.tenantId) ?? 0;
    if (byTenant >= this.limits.maxPerTenant) throw tooManyStreams('tenant', this.limits.maxPerTenant, 'SSE_MAX_STREAMS_PER_TENANT');
    this.perKey.set(tenant.apiKeyId, byKey + 1);
    this.perTenant.set(tenant.tenantId, byTenant + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      decrement(this.perKey, tenant.apiKeyId);
      decrement(this.perTenant, tenant.tenantId);
    };
  }
}

function decrement(counts: Map<string, number>, id: string): void {
  const left = (counts.get(id) ?? 1) - 1;
  if (left > 0) counts.set(id, left);
  else counts.delete(id);
}

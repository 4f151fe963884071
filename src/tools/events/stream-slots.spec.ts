import { StreamSlots } from './stream-slots.js';

const key = (tenantId: string, apiKeyId: string) => ({ tenantId, apiKeyId });

describe('StreamSlots', () => {
  it('holds a key to its cap and a tenant to its own across its keys, and gives a slot back once', () => {
    const slots = new StreamSlots({ maxPerTenant: 3, maxPerKey: 2 });
    const a1 = slots.take(key('t', 'a'));
    slots.take(key('t', 'a'));
    expect(() => slots.take(key('t', 'a'))).toThrow(expect.objectContaining({ status: 429, code: 'too_many_streams' }) as Error);
    slots.take(key('t', 'b'));
    expect(() => slots.take(key('t', 'b'))).toThrow(/tenant already holds 3 open event streams/);
    // Another tenant is not held back.
    slots.take(key('u', 'c'));
    a1();
    a1();
    slots.take(key('t', 'b'));
    expect(() => slots.take(key('t', 'a'))).toThrow(/SSE_MAX_STREAMS_PER_TENANT/);
  });
});

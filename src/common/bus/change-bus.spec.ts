import { busTopic, InProcessChangeBus } from './change-bus.js';
import { batches, type Entry, MAX_PAYLOAD_BYTES } from './postgres-change-bus.js';

const CHANGED = busTopic<{ id: string }>('test.changed');
const OTHER = busTopic<{ id: string }>('test.other');

describe('InProcessChangeBus', () => {
  it('delivers a message to every subscriber of its topic inside publish, and to no other topic', () => {
    const bus = new InProcessChangeBus();
    const seen: string[] = [];
    bus.subscribe(CHANGED, ({ id }) => seen.push(`first:${id}`));
    bus.subscribe(CHANGED, ({ id }) => seen.push(`second:${id}`));
    bus.subscribe(OTHER, ({ id }) => seen.push(`other:${id}`));
    bus.publish(CHANGED, { id: 'p1' });
    expect(seen).toEqual(['first:p1', 'second:p1']);
    expect(bus.status()).toEqual({ mode: 'in-process', connected: true, instanceId: expect.stringMatching(/^[0-9a-f]{8}$/) });
  });

  it('keeps delivering to the other subscribers when one throws', () => {
    const bus = new InProcessChangeBus();
    const seen: string[] = [];
    bus.subscribe(CHANGED, () => {
      throw new Error('broken handler');
    });
    bus.subscribe(CHANGED, ({ id }) => seen.push(id));
    bus.publish(CHANGED, { id: 'p2' });
    expect(seen).toEqual(['p2']);
  });
});

describe('NOTIFY batches', () => {
  const entry = (i: number, size = 100): Entry => ['test.changed', { id: `${i}`.padStart(size, '0') }];

  it('keeps every payload under the limit and every message, in order', () => {
    const entries = Array.from({ length: 500 }, (_, i) => entry(i));
    const out = batches('abcd1234', entries);
    expect(out.length).toBeGreaterThan(1);
    for (const batch of out) expect(Buffer.byteLength(batch.payload)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    const decoded = out.flatMap((batch) => (JSON.parse(batch.payload) as { o: string; m: Entry[] }).m);
    expect(decoded).toEqual(entries);
    expect(out.flatMap((batch) => batch.entries)).toEqual(entries);
  });

  it('drops a single message over the limit with an error, and sends the rest', () => {
    const errors: string[] = [];
    const out = batches('abcd1234', [entry(1), entry(2, 9000), entry(3)], { error: (m) => errors.push(m) });
    expect(out.flatMap((batch) => batch.entries)).toEqual([entry(1), entry(3)]);
    expect(errors).toEqual([expect.stringContaining('over the NOTIFY limit')]);
  });
});

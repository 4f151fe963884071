import { DAY_MS, expiredRanges, partitionName, partitionWidthMs, rangesToCreate } from './partition-plan.js';

const at = (iso: string) => Date.parse(iso);

describe('audit partition plan', () => {
  it('partitions by day, or by a quarter of a retention shorter than a day', () => {
    expect(partitionWidthMs(30 * DAY_MS)).toBe(DAY_MS);
    expect(partitionWidthMs(0)).toBe(DAY_MS);
    expect(partitionWidthMs(60_000)).toBe(15_000);
  });

  it('creates the missing days of a window, aligned to UTC midnight and named by their start', () => {
    const made = rangesToCreate([], at('2026-11-23T10:00:00Z'), at('2026-11-25T10:00:00Z'), DAY_MS);
    expect(made.map((r) => [r.name, new Date(r.from).toISOString(), new Date(r.to).toISOString()])).toEqual([
      ['invocations_p20261123t000000', '2026-11-23T00:00:00.000Z', '2026-11-24T00:00:00.000Z'],
      ['invocations_p20261124t000000', '2026-11-24T00:00:00.000Z', '2026-11-25T00:00:00.000Z'],
      ['invocations_p20261125t000000', '2026-11-25T00:00:00.000Z', '2026-11-26T00:00:00.000Z'],
    ]);
  });

  it('fills only the gaps around partitions of another width, never overlapping them', () => {
    const existing = [
      { name: partitionName(at('2026-11-23T00:00:15Z')), from: at('2026-11-23T00:00:15Z'), to: at('2026-11-23T00:00:30Z') },
    ];
    const made = rangesToCreate(existing, at('2026-11-23T00:00:00Z'), at('2026-11-23T12:00:00Z'), DAY_MS);
    expect(made.map((r) => [new Date(r.from).toISOString(), new Date(r.to).toISOString()])).toEqual([
      ['2026-11-23T00:00:00.000Z', '2026-11-23T00:00:15.000Z'],
      ['2026-11-23T00:00:30.000Z', '2026-11-24T00:00:00.000Z'],
    ]);
    expect(rangesToCreate([...existing, ...made], at('2026-11-23T00:00:00Z'), at('2026-11-23T12:00:00Z'), DAY_MS)).toEqual([]);
  });

  it('drops a partition only once every row in it is past retention, and nothing with retention 0', () => {
    const day = (d: string) => ({ name: d, from: at(`${d}T00:00:00Z`), to: at(`${d}T00:00:00Z`) + DAY_MS });
    const existing = [day('2026-10-22'), day('2026-10-23'), day('2026-10-24')];
    const now = at('2026-11-23T12:00:00Z');
    expect(expiredRanges(existing, now, 30 * DAY_MS).map((r) => r.name)).toEqual(['2026-10-22', '2026-10-23']);
    expect(expiredRanges(existing, now, 0)).toEqual([]);
  });
});

import { nextSampleIn } from './resource-watchdog.js';

describe('nextSampleIn', () => {
  it('looks again in 20 ms at a figure that is not growing, or has no limit', () => {
    expect(nextSampleIn(5, 5, 100, 20)).toBe(20);
    expect(nextSampleIn(5, 3, 100, 20)).toBe(20);
    expect(nextSampleIn(5, 50, undefined, 20)).toBe(20);
  });

  it('looks again in half the time the last pace needs to reach the limit', () => {
    // 10 units in 10 ms, 20 units to go: the limit is 20 ms away at that pace.
    expect(nextSampleIn(0, 10, 30, 10)).toBe(10);
  });

  it('never waits less than 2 ms, nor more than 20', () => {
    expect(nextSampleIn(0, 99, 100, 10)).toBe(2);
    expect(nextSampleIn(0, 1, 1_000_000, 10)).toBe(20);
  });
});

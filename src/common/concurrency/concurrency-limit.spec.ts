import { concurrencyLimit } from './concurrency-limit.js';

describe('concurrencyLimit', () => {
  it('never runs more than the limit at once, runs every task, and keeps going after a failure', async () => {
    const run = concurrencyLimit(3);
    let active = 0;
    let peak = 0;
    const done: number[] = [];
    const task = (i: number) => async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setImmediate(r));
      active--;
      if (i === 4) throw new Error('task 4 fails');
      done.push(i);
      return i;
    };
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => run(task(i))));
    expect(peak).toBe(3);
    expect(done.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9]);
    expect(results[4]).toMatchObject({ status: 'rejected' });
    expect(active).toBe(0);
  });
});

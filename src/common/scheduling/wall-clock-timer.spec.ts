import { setWallClockTimeout } from './wall-clock-timer.js';

// A plain setTimeout(5) fired before 5 ms of Date.now() had passed in 7 and 8 of 200 tries here (libuv's
// clock counts whole milliseconds): a hundred tries all but always see it.
describe('setWallClockTimeout', () => {
  it('fires only once its time has passed on the wall clock', async () => {
    const early: number[] = [];
    for (let i = 0; i < 100; i++) {
      const set = Date.now();
      const fired = await new Promise<number>((resolve) => setWallClockTimeout(() => resolve(Date.now()), 5));
      if (fired - set < 5) early.push(fired - set);
      // A fraction of a millisecond of work, so each timer is set at another point of the clock's millisecond.
      const until = performance.now() + Math.random();
      while (performance.now() < until);
    }
    expect(early).toEqual([]);
  });

  it('can be cancelled', async () => {
    let fired = false;
    const cancel = setWallClockTimeout(() => (fired = true), 20);
    cancel();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fired).toBe(false);
  });
});

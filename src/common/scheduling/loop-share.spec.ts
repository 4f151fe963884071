import { setTimeout as sleep } from 'node:timers/promises';
import { BUSY_MS, callCost, LEAD_UNITS, LoopShare, MAX_WAIT_MS } from './loop-share.js';

// Closed loops of calls, as clients make them: each caller starts a call, holds it `holdMs`, ends it at
// `units`, and starts the next, until `stop` is set. Counts the calls each tenant ended.
async function loops(share: LoopShare, callers: Array<{ tenant: string; units: number; holdMs: number }>, durationMs: number) {
  const ended: Record<string, number> = {};
  let stop = false;
  const run = async ({ tenant, units, holdMs }: { tenant: string; units: number; holdMs: number }) => {
    while (!stop) {
      const end = await share.start(tenant);
      await sleep(holdMs);
      ended[tenant] = (ended[tenant] ?? 0) + 1;
      end(units);
    }
  };
  const running = callers.map(run);
  await sleep(durationMs);
  stop = true;
  await Promise.all(running);
  return ended;
}

describe('LoopShare', () => {
  it('gives two busy tenants the same cost, not the same number of calls', async () => {
    const share = new LoopShare();
    const ended = await loops(
      share,
      [
        ...Array.from({ length: 10 }, () => ({ tenant: 'heavy', units: 4, holdMs: 2 })),
        ...Array.from({ length: 4 }, () => ({ tenant: 'light', units: 1, holdMs: 2 })),
      ],
      1_000,
    );
    const heavyCost = ended.heavy * 4;
    const lightCost = ended.light;
    // Equal within the lead each may take and the calls in progress when counting stopped.
    expect(Math.abs(heavyCost - lightCost) / lightCost).toBeLessThan(0.25);
    expect(ended.light).toBeGreaterThan(3 * ended.heavy);
    expect(share.waits).toBeGreaterThan(0);
    expect(share.waiting).toBe(0);
  });

  it('never holds back a tenant alone, however much its calls cost', async () => {
    const share = new LoopShare();
    const ends = await Promise.all(Array.from({ length: 50 }, () => share.start('alone')));
    for (const end of ends) end(1_000);
    await share.start('alone');
    expect(share.waits).toBe(0);
  });

  it('holds a tenant ahead by more than the lead until the other catches up, then lets it go', async () => {
    const share = new LoopShare();
    const endOther = await share.start('other');
    const first = await share.start('ahead');
    first(LEAD_UNITS + 10);
    let started = false;
    const next = share.start('ahead').then((end) => ((started = true), end));
    await sleep(0);
    expect(started).toBe(false);
    expect(share.waiting).toBe(1);
    // The other tenant's calls are charged as they end: once it is level, the waiting call starts.
    endOther(LEAD_UNITS + 10);
    (await next)(1);
    expect(started).toBe(true);
    expect(share.waiting).toBe(0);
  });

  it('lets a tenant that is only waiting on a long call hold nobody back after BUSY_MS', async () => {
    const share = new LoopShare();
    const endLong = await share.start('sleeper');
    const first = await share.start('busy');
    first(LEAD_UNITS * 4);
    const asked = Date.now();
    const end = await share.start('busy');
    const waited = Date.now() - asked;
    end(1);
    endLong(1);
    expect(waited).toBeGreaterThanOrEqual(BUSY_MS - 5);
    expect(waited).toBeLessThan(MAX_WAIT_MS / 2);
  });

  it('does not bank a quiet spell: a tenant back after a pause starts level with the busy ones', async () => {
    const share = new LoopShare();
    // Both busy; 'back' goes quiet while 'steady' keeps calling and runs far ahead of where 'back' was.
    (await share.start('back'))(1);
    const steady = loops(share, [{ tenant: 'steady', units: 5, holdMs: 1 }], BUSY_MS * 4);
    await steady;
    // Back now: had its quiet spell counted as credit, 'steady' would be far ahead of it and wait.
    const back = await share.start('back');
    let steadyStarted = false;
    const nextSteady = share.start('steady').then((end) => ((steadyStarted = true), end));
    await sleep(0);
    expect(steadyStarted).toBe(true);
    back(1);
    (await nextSteady)(1);
    expect(share.waiting).toBe(0);
  });

  it("counts a tenant's calls in progress against it alone: calls piling up give the other tenant no room", async () => {
    const share = new LoopShare();
    // 'slow' has many calls in progress (started within its lead, as it was alone at first).
    const slow = await Promise.all(Array.from({ length: 20 }, () => share.start('slow')));
    const first = await share.start('heavy');
    first(LEAD_UNITS + 1);
    // 'heavy' is now ahead of what 'slow' has been charged (nothing yet): it waits, however many calls
    // 'slow' has started.
    let started = false;
    const next = share.start('heavy').then((end) => ((started = true), end));
    await sleep(0);
    expect(started).toBe(false);
    for (const end of slow) end(1);
    (await next)(1);
    expect(started).toBe(true);
  });

  it('starts a waiting call whose client left at once', async () => {
    const share = new LoopShare();
    await share.start('other');
    (await share.start('ahead'))(LEAD_UNITS * 3);
    const controller = new AbortController();
    const next = share.start('ahead', controller.signal);
    await sleep(0);
    expect(share.waiting).toBe(1);
    controller.abort();
    (await next)(1);
    expect(share.waiting).toBe(0);
  });

  it('counts a call as one unit, one more per 128 KiB of result and per second a command ran', () => {
    expect(callCost(0)).toBe(1);
    expect(callCost(256 * 1024)).toBe(3);
    expect(callCost(0, 5_000)).toBe(6);
  });
});

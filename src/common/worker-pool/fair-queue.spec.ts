import { FairQueue } from './fair-queue.js';

// A task that runs until the test ends it.
function held() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('FairQueue', () => {
  it("keeps one key's backlog from holding every thread: another key's task starts at once", async () => {
    const queue = new FairQueue({ shared: 2, perKey: 1, reserved: 0 });
    const started: string[] = [];
    const a = [held(), held(), held()];
    const runs = a.map((h, i) => queue.submit('a', false, () => (started.push(`a${i}`), h.done)));
    const b = held();
    const runB = queue.submit('b', false, () => (started.push('b'), b.done));
    await tick();
    expect(started).toEqual(['a0', 'b']);
    expect(queue.waiting).toBe(2);
    b.end();
    a.forEach((h) => h.end());
    await Promise.all([...runs, runB]);
    expect(started).toEqual(['a0', 'b', 'a1', 'a2']);
  });

  it('serves waiting keys in turn', async () => {
    const queue = new FairQueue({ shared: 1, perKey: 1, reserved: 0 });
    const order: string[] = [];
    const first = held();
    const runs = [queue.submit('a', false, () => (order.push('a0'), first.done))];
    for (const key of ['a', 'a', 'b', 'c', 'b']) runs.push(queue.submit(key, false, () => (order.push(key), Promise.resolve())));
    first.end();
    await Promise.all(runs);
    expect(order).toEqual(['a0', 'b', 'c', 'a', 'b', 'a']);
  });

  it('starts an urgent task on the reserved thread while every shared one is busy', async () => {
    const queue = new FairQueue({ shared: 1, perKey: 1, reserved: 1 });
    const busy = held();
    const running = queue.submit('a', false, () => busy.done);
    const waiting = queue.submit('b', false, () => Promise.resolve('shared'));
    await expect(queue.submit('b', true, () => Promise.resolve('urgent'))).resolves.toBe('urgent');
    expect(queue.waiting).toBe(1);
    busy.end();
    await expect(waiting).resolves.toBe('shared');
    await running;
  });

  it('takes an aborted task out of its queue: it never starts', async () => {
    const queue = new FairQueue({ shared: 1, perKey: 1, reserved: 0 });
    const busy = held();
    const running = queue.submit('a', false, () => busy.done);
    const controller = new AbortController();
    let started = false;
    const waiting = queue.submit('b', false, () => ((started = true), Promise.resolve()), controller.signal);
    controller.abort(new Error('timeout'));
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(queue.waiting).toBe(0);
    busy.end();
    await running;
    await tick();
    expect(started).toBe(false);
  });
});

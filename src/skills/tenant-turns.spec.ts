import { TenantTurns } from './tenant-turns.js';

describe('TenantTurns', () => {
  it('runs one piece of work per key at a time, in order, and refuses past the waiting line', async () => {
    const turns = new TenantTurns(2);
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const job = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      order.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      running--;
      return name;
    };
    const a = turns.run('t1', job('a'));
    const b = turns.run('t1', job('b'));
    const c = turns.run('t1', job('c'));
    // One running and two waiting: a fourth is refused without running.
    expect(turns.run('t1', job('d'))).toBeNull();
    // Another key has a line of its own.
    const other = turns.run('t2', async () => 'other');
    expect(await Promise.all([a, b, c, other])).toEqual(['a', 'b', 'c', 'other']);
    expect(order).toEqual(['start a', 'start b', 'start c']);
    expect(most).toBe(1);
    // A failure passes the turn on.
    await expect(turns.run('t1', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await turns.run('t1', async () => 'after')).toBe('after');
  });
});

import { setImmediate as nextTurn } from 'node:timers/promises';
import { FairTurns } from './fair-turns.js';

describe('FairTurns', () => {
  it('grants one turn per turn of the event loop, alternating between keys whatever order they asked in', async () => {
    const turns = new FairTurns();
    const order: string[] = [];
    const loopTurnsAtGrant: number[] = [];
    let loopTurns = 0;
    let counting = true;
    const count = async () => {
      while (counting) {
        await nextTurn();
        loopTurns++;
      }
    };
    const counter = count();
    const steps = [
      ...Array.from({ length: 4 }, (_, i) => turns.take('a').then(() => (order.push(`a${i}`), loopTurnsAtGrant.push(loopTurns)))),
      ...Array.from({ length: 2 }, (_, i) => turns.take('b').then(() => (order.push(`b${i}`), loopTurnsAtGrant.push(loopTurns)))),
    ];
    await Promise.all(steps);
    counting = false;
    await counter;
    expect(order).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'a3']);
    // Never two grants within one turn of the loop.
    for (let i = 1; i < loopTurnsAtGrant.length; i++) expect(loopTurnsAtGrant[i]).toBeGreaterThan(loopTurnsAtGrant[i - 1]);
    expect(turns.keysWaiting).toBe(0);
  });

  it('puts a key that starts asking while another has many waiting next in line', async () => {
    const turns = new FairTurns();
    const order: string[] = [];
    const many = Array.from({ length: 5 }, (_, i) => turns.take('a').then(() => order.push(`a${i}`)));
    await many[0];
    const late = turns.take('b').then(() => order.push('b0'));
    await Promise.all([...many, late]);
    expect(order).toEqual(['a0', 'b0', 'a1', 'a2', 'a3', 'a4']);
  });
});

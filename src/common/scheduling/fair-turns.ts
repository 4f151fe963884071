import { Injectable } from '@nestjs/common';

// Turns on the main thread for steps that each take milliseconds of it (encoding a large result), taken one
// per turn of the event loop and in turn by key (the tenant). Steps that simply ran as their calls ended
// would run back to back: a batch of 32 large results, then another, while other tenants' requests wait
// behind all of them. Taken here, at most one such step runs between two rounds of I/O, and a tenant with
// many waiting goes after each other tenant with one.
@Injectable()
export class FairTurns {
  // By key, in the order the keys take their next turn (a Map keeps insertion order).
  private readonly waiting = new Map<string, Array<() => void>>();
  private scheduled = false;
  // The key of the last turn: another key waiting goes before its next one, even one that asked after.
  private last: string | null = null;

  // Resolves when it is the caller's turn: the step runs at once after (before anything else is served).
  take(key: string): Promise<void> {
    return new Promise<void>((resolve) => {
      const queue = this.waiting.get(key);
      if (queue) queue.push(resolve);
      else this.waiting.set(key, [resolve]);
      this.schedule();
    });
  }

  // Keys with a step waiting.
  get keysWaiting(): number {
    return this.waiting.size;
  }

  // setImmediate: one granted after each poll for I/O; one scheduled while granting waits for the next.
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.grant());
  }

  private grant(): void {
    this.scheduled = false;
    if (this.waiting.size === 0) return;
    let chosen: [string, Array<() => void>] | undefined;
    for (const entry of this.waiting) {
      chosen ??= entry;
      if (entry[0] !== this.last) {
        chosen = entry;
        break;
      }
    }
    const [key, queue] = chosen!;
    this.last = key;
    const resolve = queue.shift()!;
    // To the back of the line: every other key waiting goes first.
    this.waiting.delete(key);
    if (queue.length > 0) this.waiting.set(key, queue);
    if (this.waiting.size > 0) this.schedule();
    resolve();
  }
}

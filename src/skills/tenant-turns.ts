// Work of one key (a tenant) done one at a time, in the order it came, with at most `maxWaiting` more
// waiting their turn; past that `run` answers null and does nothing, so the caller can refuse at once
// instead of holding a request (and its body) in a line that only grows.
export class TenantTurns {
  // Per key: the end of its line, and how many are in it (the one running included).
  private readonly lines = new Map<string, { tail: Promise<void>; inLine: number }>();

  constructor(private readonly maxWaiting: number) {}

  run<T>(key: string, work: () => Promise<T>): Promise<T> | null {
    const line = this.lines.get(key) ?? { tail: Promise.resolve(), inLine: 0 };
    if (line.inLine > this.maxWaiting) return null;
    line.inLine++;
    this.lines.set(key, line);
    const mine = line.tail.then(async () => {
      try {
        return await work();
      } finally {
        if (--line.inLine === 0) this.lines.delete(key);
      }
    });
    line.tail = mine.then(
      () => undefined,
      () => undefined,
    );
    return mine;
  }
}

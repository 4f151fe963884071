// Timings of another tenant's calls, for the ratio tests of the fair-share cases.

// The middle of the values (the upper one of an even count).
export const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

// `call` made `count` times in a row: how long each took, in ms.
export async function timeEach(count: number, call: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times;
}

import v8 from 'node:v8';

// V8 lets the old generation reach up to 4x what survived the last full GC: under load a 50 MB live heap sat
// at 150-180 MB of mostly garbage. V8 reads this flag at every full GC and flags are per process, so setting
// it after start-up bounds the main thread and every worker thread.
export function applyHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

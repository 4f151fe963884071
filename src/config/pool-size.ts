import { availableParallelism } from 'node:os';

// Two at least: with one thread, one key's running task would hold the whole pool.
export const defaultThreadCount = (): number => Math.max(2, availableParallelism() - 1);

// A key's share of the pool: half its threads, at least one.
export const defaultPerKeyThreads = (threads: number): number => Math.max(1, Math.floor(threads / 2));

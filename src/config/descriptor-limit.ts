import { readFileSync } from 'node:fs';

// The default total: half the descriptors the process may open, leaving the other half to the database pool,
// the sandboxes, upstream sockets and files; 10,000 where the limit cannot be read.
export function defaultMaxConnections(limitsFile = '/proc/self/limits'): number {
  try {
    const soft = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(limitsFile, 'utf8'))?.[1];
    if (soft === undefined) return 10_000;
    if (soft === 'unlimited') return 100_000;
    return Math.max(64, Math.floor(Number(soft) / 2));
  } catch {
    return 10_000;
  }
}

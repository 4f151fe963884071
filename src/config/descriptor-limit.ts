import { readFileSync } from 'node:fs';

// The default total: half the descriptors the process may open, leaving the other half to the database pool,
// the sandboxes, upstream sockets and files; 10,000 where the limit cannot be read. Node raises its soft limit
// to the hard one as it starts, so the figure read here is `ulimit -Hn`, not the shell's `ulimit -n`. At most
// 100,000: an idle connection also holds about 10 KB of memory, and containers often allow 1,048,576
// descriptors, half of which would be 5 GB of idle sockets.
const CEILING = 100_000;

export function defaultMaxConnections(limitsFile = '/proc/self/limits'): number {
  try {
    const soft = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(limitsFile, 'utf8'))?.[1];
    if (soft === undefined) return 10_000;
    if (soft === 'unlimited') return CEILING;
    return Math.min(CEILING, Math.max(64, Math.floor(Number(soft) / 2)));
  } catch {
    return 10_000;
  }
}

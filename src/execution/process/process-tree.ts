import { readdirSync, readFileSync } from 'node:fs';

// What one command's processes hold right now, read from /proc: the bytes they have written to files
// and the memory they keep resident.
export interface TreeSample {
  processes: number;
  // write_bytes of /proc/<pid>/io: what the processes made dirty in the page cache of files (or sent to
  // storage directly), counted by the kernel when it happens. Pipes, /dev/null and tmpfs do not count.
  // A process that waited for its children holds their figures too, so the sum covers the exited ones.
  writtenBytes: number;
  // RssAnon + RssShmem of /proc/<pid>/status: memory no file on disk stands behind. Pages still shared
  // after a fork count once per process, so the sum errs high.
  memoryBytes: number;
}

// A command's processes are few; past this many the sample stops (the process limit holds far fewer).
const MAX_PROCESSES = 4096;

// Walks the tree below `rootPid` level by level. A process's figures are read before its children are
// listed, so a child reaped in between is missed once (its parent holds it on the next sample) and never
// counted twice. `memory` false skips the status files.
// The reads are blocking: /proc answers from memory in microseconds (about 50 µs for a one-process
// command), while a trip through libuv's thread pool on a busy machine took milliseconds and let a command
// write two to four times as far past its budget before it was seen.
export function sampleProcessTree(rootPid: number, opts: { memory: boolean }): TreeSample {
  const sample: TreeSample = { processes: 0, writtenBytes: 0, memoryBytes: 0 };
  const seen = new Set<number>([rootPid]);
  let level = [rootPid];
  while (level.length > 0 && sample.processes < MAX_PROCESSES) {
    const figures = level.map((pid) => readFigures(pid, opts.memory));
    const alive = level.filter((_, i) => figures[i] !== undefined);
    for (const figure of figures) {
      if (!figure) continue;
      sample.processes++;
      sample.writtenBytes += figure.writtenBytes;
      sample.memoryBytes += figure.memoryBytes;
    }
    const children = alive.map(childrenOf);
    level = [];
    for (const pid of children.flat()) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      level.push(pid);
    }
  }
  return sample;
}

function readFigures(pid: number, memory: boolean): { writtenBytes: number; memoryBytes: number } | undefined {
  const io = readOrUndefined(`/proc/${pid}/io`);
  const status = memory ? readOrUndefined(`/proc/${pid}/status`) : '';
  if (io === undefined || status === undefined) return undefined;
  return { writtenBytes: parseWriteBytes(io), memoryBytes: memory ? parseUnsharedMemory(status) : 0 };
}

// Sends `signal` to every process below `rootPid`, each before its children are listed: with SIGSTOP, a
// process is stopped before the list of what it forked is read, so the tree cannot outgrow the walk (a
// child forked in the instant before its parent stopped is caught by a second pass). Answers how many.
export function signalTree(rootPid: number, signal: 'SIGSTOP' | 'SIGCONT'): number {
  const signalled = new Set<number>();
  for (let pass = 0; pass < 2; pass++) {
    let level = [rootPid];
    const seen = new Set<number>(level);
    while (level.length > 0 && seen.size < MAX_PROCESSES) {
      for (const pid of level) {
        try {
          process.kill(pid, signal);
          signalled.add(pid);
        } catch {
          // Exited meanwhile.
        }
      }
      const next: number[] = [];
      for (const pid of level.flatMap(childrenOf)) {
        if (seen.has(pid)) continue;
        seen.add(pid);
        next.push(pid);
      }
      level = next;
    }
  }
  return signalled.size;
}

// A child belongs to the thread that forked it: each thread of the process has its own list.
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const lists = tasks.map((tid) => readOrUndefined(`/proc/${pid}/task/${tid}/children`));
  return lists.flatMap((list) => (list ? parseChildren(list) : []));
}

export function parseWriteBytes(io: string): number {
  const match = /^write_bytes:\s*(\d+)/m.exec(io);
  return match ? Number(match[1]) : 0;
}

const RSS_ANON = /^RssAnon:\s*(\d+) kB/m;
const RSS_SHMEM = /^RssShmem:\s*(\d+) kB/m;

export function parseUnsharedMemory(status: string): number {
  const kib = (field: RegExp) => Number(field.exec(status)?.[1] ?? 0);
  return (kib(RSS_ANON) + kib(RSS_SHMEM)) * 1024;
}

export function parseChildren(list: string): number[] {
  return list
    .split(/\s+/)
    .filter((pid) => /^\d+$/.test(pid))
    .map(Number);
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined; // the process exited between the listing and the read
  }
}

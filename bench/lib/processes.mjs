import { execFileSync, spawn } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { defer, trackPid } from './cleanup.mjs';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// VmRSS now and VmHWM (the kernel's own high-water mark of resident memory) of a live process, in bytes.
export function readMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return null;
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// CPU time (user + system, all threads) a process has used so far, in ms. Unlike throughput, CPU time per
// request barely moves when other work shares the machine, which makes it the steadier figure to compare.
// utime + stime of one /proc stat file; null once the process or thread is gone.
function cpuMsOf(statFile) {
  try {
    const stat = readFileSync(statFile, 'utf8');
    // The command name may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

// CPU of a whole process (all its threads, those that ended included: utime + stime of /proc/<pid>/stat).
export function readProcessCpuMs(pid) {
  return cpuMsOf(`/proc/${pid}/stat`);
}

// CPU of the process's children that have ended and been waited for (cutime + cstime): for Toolgate the
// commands it ran, with their sandboxes.
export function readChildrenCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

// Where a process's CPU went: its main thread (the event loop, in Node) and all its other threads together
// (worker threads, libuv's pool, V8's GC and compiler threads). `others` is the whole process's time less
// the main thread's, so a thread that ended between two readings (a pool thread idle too long, or
// terminated at a call's deadline) still counts.
export function readThreadCpuMs(pid) {
  const main = cpuMsOf(`/proc/${pid}/task/${pid}/stat`);
  const total = readProcessCpuMs(pid);
  if (main == null || total == null) return null;
  return { main, others: Math.max(0, total - main) };
}

// CPU of every PostgreSQL process on this machine (the server the service writes to, when it is local), by
// pid: the audit inserts cost CPU there, on the same cores. Compare two readings with postgresCpuSpentMs.
export function readPostgresCpuMs() {
  const byPid = new Map();
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const ms = cpuMsOf(`/proc/${pid}/stat`);
    if (ms != null) byPid.set(pid, ms);
  }
  return byPid;
}

// What the PostgreSQL processes alive at the second reading spent since the first (a process started in
// between counts from zero). One that ended in between is missed, which can only understate the figure.
export function postgresCpuSpentMs(before, after) {
  let spent = 0;
  for (const [pid, ms] of after) spent += Math.max(0, ms - (before.get(pid) ?? 0));
  return spent;
}

// Lifetime peak (VmHWM, which also catches start-up spikes between polls), the RSS when the process was
// ready, and the highest VmRSS polled since `startLoad()`, i.e. while it was being measured.
export function watchMemory(pid, intervalMs = 100) {
  let peak = 0;
  let ready = null;
  let loadPeak = null;
  const sample = () => {
    const m = readMemory(pid);
    if (!m) return;
    peak = Math.max(peak, m.rss, m.hwm);
    if (loadPeak !== null) loadPeak = Math.max(loadPeak, m.rss);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    peak() {
      sample();
      return peak;
    },
    startLoad() {
      if (loadPeak !== null) return;
      ready = readMemory(pid)?.rss ?? null;
      loadPeak = ready ?? 0;
    },
    snapshot() {
      sample();
      return { readyRssBytes: ready, loadPeakRssBytes: loadPeak, peakRssBytes: peak };
    },
    stop() {
      sample();
      clearInterval(timer);
      return peak;
    },
  };
}

// A child whose output goes to a log file (shown when it fails), killed by the cleanup in any case.
export function spawnLogged(label, command, args, { env, cwd, logFile }) {
  const fd = openSync(logFile, 'a');
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const untrack = trackPid(child.pid);
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      untrack();
      resolve({ code, signal });
    });
  });
  let alive = true;
  let exitStatus = null;
  void exited.then((status) => {
    alive = false;
    exitStatus = status;
  });
  const stop = async (graceMs = 10_000) => {
    if (!alive) return exited;
    child.kill('SIGTERM');
    const outcome = await Promise.race([exited, sleep(graceMs).then(() => null)]);
    if (outcome) return outcome;
    child.kill('SIGKILL');
    return exited;
  };
  const undefer = defer(`stop ${label}`, () => stop());
  return {
    child,
    pid: child.pid,
    exited,
    isAlive: () => alive,
    exitStatus: () => exitStatus,
    logTail: (lines = 30) => tail(logFile, lines),
    async stop(graceMs) {
      undefer();
      return stop(graceMs);
    },
  };
}

export function tail(file, lines) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

// Resolves once `probe` answers true; fails early, with the child's log, if the child exits first.
export async function waitUntilReady(proc, probe, { timeoutMs = 90_000, label }) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!proc.isAlive()) throw new Error(`${label} exited before it was ready:\n${proc.logTail()}`);
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${label} was not ready after ${timeoutMs} ms:\n${proc.logTail()}`);
}

// A positive integer from the environment, or the fallback when unset; anything else stops the run.
export function envInt(name, fallback, min) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, got '${raw}'`);
  return value;
}

// A number in (0, 1] from the environment, or the fallback when unset; anything else stops the run.
export function envFraction(name, fallback) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!(value > 0 && value <= 1)) throw new Error(`${name} must be a number above 0 and at most 1, got '${raw}'`);
  return value;
}

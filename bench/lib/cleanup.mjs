// Everything a run leaves behind (child processes, temp dirs, scratch databases) is undone here, in
// reverse order: on success, on failure and on SIGINT/SIGTERM. Child pids are also killed on 'exit',
// so even a crash in the middle of a scenario leaves no service running.
import { rmSync } from 'node:fs';

const tasks = [];
const livePids = new Set();
let running = null;

export function defer(label, fn) {
  const task = { label, fn };
  tasks.push(task);
  return () => {
    const i = tasks.indexOf(task);
    if (i >= 0) tasks.splice(i, 1);
  };
}

export function trackPid(pid) {
  livePids.add(pid);
  return () => livePids.delete(pid);
}

// Directories are removed synchronously too on 'exit', where nothing async runs any more.
const tempDirs = new Set();
export function trackTempDir(dir) {
  tempDirs.add(dir);
}

export function cleanupAll() {
  running ??= (async () => {
    while (tasks.length > 0) {
      const { label, fn } = tasks.pop();
      try {
        await fn();
      } catch (error) {
        process.stderr.write(`cleanup: ${label}: ${error instanceof Error ? error.message : String(error)}\n`);
      }
    }
    removeTempDirs();
  })();
  return running;
}

function removeTempDirs() {
  for (const dir of tempDirs) {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    tempDirs.delete(dir);
  }
}

process.on('exit', () => {
  for (const pid of livePids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  removeTempDirs();
});

let signalled = false;
export const stopping = () => signalled;

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (signalled) process.exit(130);
    signalled = true;
    process.stderr.write(`\n${signal}: stopping the services and removing temporary data...\n`);
    const force = setTimeout(() => process.exit(130), 15_000);
    force.unref();
    void cleanupAll().finally(() => process.exit(130));
  });
}

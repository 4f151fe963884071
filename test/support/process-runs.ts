import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveAllowedExecutable } from '../../src/execution/process/executable-allowlist.js';
import { runProcess, type RunProcessOptions } from '../../src/execution/process/process-runner.js';

const ALLOWED = ['sh', 'printf', 'ls', 'env', 'cat', 'yes', 'dd', 'sleep', 'true', 'id', 'python3'];

// What the process runner's suites share: a workspace made for the suite, `run` with the unsandboxed
// defaults, and ways to see what a run left behind. Every group a test started is killed after the suite,
// whatever the runner did. Call it at the top of a suite file.
export function processRunHarness() {
  let dir = '';
  const groups = new Set<number>();

  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'process-runner-')));
  });

  afterAll(() => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (argv: string[], extra: Partial<RunProcessOptions> = {}) =>
    runProcess({
      argv,
      executable: resolveAllowedExecutable(argv[0], ALLOWED),
      workspace: dir,
      cwd: dir,
      timeoutMs: 10_000,
      maxOutputBytes: 64 * 1024,
      sandbox: { kind: 'none' },
      ...extra,
    });

  // The command prints its own pid first; under `detached` that is also its process group id.
  const pgidOf = (stdout: string) => {
    const pgid = Number.parseInt(stdout, 10);
    expect(pgid).toBeGreaterThan(1);
    groups.add(pgid);
    return pgid;
  };

  return { workspace: () => dir, run, pgidOf, groupIsGone, pidsRunning };
}

// True when kill(-pgid, 0) finds no one, or only zombies that init has not reaped yet.
function groupIsGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .every((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(pgrp) !== pgid || state === 'Z';
      } catch {
        return true;
      }
    });
}

// Processes whose command line contains `marker`, found by scanning /proc.
function pidsRunning(marker: string): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(marker);
      } catch {
        return false;
      }
    });
}

import { readdirSync, readFileSync } from 'node:fs';
import { eventually } from './eventually.js';

// Commands run in sandboxes with pid namespaces of their own: a pid a command prints means nothing out
// here. Tests find the processes they started by a unique argv element instead (e.g. `sleep 30.417`).
// bubblewrap carries the command on its own command line; it is the sandbox, not one of the command's
// processes, and is left out.
export const isSandboxLauncher = (argv0: string | undefined) => argv0 !== undefined && /(^|\/)bwrap$/.test(argv0);

// Live processes (zombies excluded) with the marker as one of their argv elements, read from the host's /proc.
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!argv.includes(marker) || isSandboxLauncher(argv[0])) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

export async function waitForProcess(marker: string, count = 1): Promise<number[]> {
  return eventually(
    () => {
      const pids = processesWith(marker);
      expect({ marker, running: pids.length }).toEqual({ marker, running: count });
      return pids;
    },
    100,
    50,
  );
}

export async function expectNoProcess(marker: string): Promise<void> {
  await eventually(() => expect({ marker, running: processesWith(marker) }).toEqual({ marker, running: [] }), 60, 50);
}

// A marker no other test uses: a sleep of this many seconds is unmistakable in the process list.
let markers = 0;
export const uniqueSleep = (seconds: number) => `${seconds}.${process.pid % 1000}${++markers}`;

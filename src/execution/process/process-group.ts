import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';

export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone. EPERM: a member became setuid; nothing more we can do.
  }
}

const SCAN_BATCH = 64;

interface ProcEntry {
  state: string;
  pgrp: number;
}

// Resolves once no live process of the group is left (zombies waiting for init to reap them are
// dead already), re-sending SIGKILL while waiting; false if some survive past the deadline.
export async function waitForGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return true;
    }
    if (!(await hasLiveMember(pgid))) return true;
    if (performance.now() >= deadline) return false;
    killGroup(pgid);
    await delay(10);
  }
}

// Answers as soon as it has seen more than `max` members: a fork bomb makes /proc huge, and a scan
// that read it all would fall further behind the faster the bomb grows.
export async function groupExceeds(pgid: number, max: number): Promise<boolean> {
  // Newest pids first: that is where a growing group's processes are, until pids wrap around.
  const pids = (await listPids()).map(Number).sort((a, b) => b - a);
  let members = 0;
  for (let i = 0; i < pids.length; i += SCAN_BATCH) {
    const stats = await Promise.all(pids.slice(i, i + SCAN_BATCH).map((pid) => readOrEmpty(`/proc/${pid}/stat`)));
    for (const stat of stats) {
      if (parseStat(stat)?.pgrp === pgid && ++members > max) return true;
    }
  }
  return false;
}

// RLIMIT_NPROC counts every task (threads included) of the real uid, this service's own among them.
export async function countTasksOfUid(uid: number): Promise<number> {
  const statuses = await Promise.all((await listPids()).map((pid) => readOrEmpty(`/proc/${pid}/status`)));
  let total = 0;
  for (const status of statuses) {
    const realUid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    const threads = /^Threads:\s+(\d+)/m.exec(status)?.[1];
    if (realUid !== undefined && Number(realUid) === uid) total += Number(threads ?? 1);
  }
  return total;
}

async function hasLiveMember(pgid: number): Promise<boolean> {
  const stats = await Promise.all((await listPids()).map((pid) => readOrEmpty(`/proc/${pid}/stat`)));
  return stats.some((stat) => {
    const entry = parseStat(stat);
    return entry !== undefined && entry.pgrp === pgid && entry.state !== 'Z' && entry.state !== 'X';
  });
}

function parseStat(stat: string): ProcEntry | undefined {
  // The command name in parentheses may itself contain spaces and parentheses.
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const [state, , pgrp] = stat.slice(close + 2).split(' ');
  return { state: state, pgrp: Number(pgrp) };
}

async function listPids(): Promise<string[]> {
  return (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'latin1');
  } catch {
    return ''; // the process exited between readdir and read
  }
}

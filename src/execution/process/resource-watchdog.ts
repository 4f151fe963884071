import { statfsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { measureDiskUsage } from './disk-usage.js';
import { sampleProcessTree, signalTree } from './process-tree.js';

export interface WriteLimits {
  // Bytes the command's processes may write to files in all (their write_bytes).
  maxBytes: number;
  // The workspace's quota and the usage it was known to have when the command started; `inodes` and
  // `entriesAtStart` the same in files, directories and links.
  quota?: { bytes: number; usageAtStart: number; inodes?: number; entriesAtStart?: number };
}

export type ResourceExcess = 'memory' | 'writes' | 'quota';
// Which of the workspace's quotas a run passed: its bytes or its inodes.
export type QuotaPassed = 'bytes' | 'inodes';

// What the workspace was known to hold at one moment, and the file system's figures then: growth past the
// quota's room from there sends the watchdog to walk the workspace again.
interface QuotaBase {
  usage: number;
  entries: number;
  fsBytes: number | undefined;
  fsInodes: number | undefined;
  written: number;
}

export interface ResourceWatchOptions {
  // The command's first process: every process of the run descends from it (in a sandbox, orphans are
  // adopted by the sandbox's init, which descends from it too).
  rootPid: number;
  workspace: string;
  // Resident memory of all the processes together, with what `tmpfsBytes` reports (the bytes held in the
  // run's own tmpfs mounts); given only where no cgroup holds the memory.
  memoryBytes?: number;
  tmpfsBytes?: () => number;
  writes?: WriteLimits;
}

const SAMPLE_INTERVAL_MS = 20;
// A run closing fast on a limit is sampled this often at most.
const MIN_SAMPLE_INTERVAL_MS = 2;
// The workspace is walked at most this often, and only once the file system has filled by more than the
// room the quota left (or the command has written that much).
const MEASURE_INTERVAL_MS = 250;

// Watches one run from outside: samples its processes every few milliseconds and reports the first limit
// it finds passed. What a run does between two samples is the window this leaves.
export class ResourceWatchdog {
  // The most the run's processes were seen to have written, and the most memory they were seen to hold.
  writtenBytes = 0;
  memoryBytes = 0;
  // The workspace's usage at its last measurement during the run.
  workspaceBytes: number | undefined;
  // The quota the run was stopped for, when it was.
  quotaPassed: QuotaPassed | undefined;
  private stopped = false;
  private measuring = false;
  private lastMeasured = -Infinity;
  // Space and inodes in use on the workspace's file system when the run started.
  private fsBaseline: number | undefined;
  private inodeBaseline: number | undefined;
  private quotaBase: QuotaBase | undefined;
  // The run's processes are stopped (SIGSTOP) until the workspace has been walked.
  private paused = false;
  // The file system's growth since the quota's starting point at the last look, to pace the next.
  private lastFsCheck: { at: number; grown: number; inodesGrown: number } | undefined;

  constructor(private readonly opts: ResourceWatchOptions) {}

  start(onExceeded: (excess: ResourceExcess) => void): void {
    // Taken at once: the command may already be writing by the time a thread-pool call would answer.
    if (this.opts.writes) {
      const baseline = fileSystemFigures(this.opts.workspace);
      this.fsBaseline = baseline?.usedBytes;
      this.inodeBaseline = baseline?.usedInodes;
      const { quota } = this.opts.writes;
      if (quota)
        this.quotaBase = {
          usage: quota.usageAtStart,
          entries: quota.entriesAtStart ?? 0,
          fsBytes: baseline?.usedBytes,
          fsInodes: baseline?.usedInodes,
          written: 0,
        };
    }
    let reported = false;
    const report = (excess: ResourceExcess) => {
      if (reported || this.stopped) return;
      reported = true;
      this.stop();
      onExceeded(excess);
    };
    void this.run(report);
  }

  stop(): void {
    this.stopped = true;
  }

  // How far the workspace's file system filled while the run went on: at least what the run added to the
  // workspace, unless space was freed elsewhere on it meanwhile. Undefined when it could not be read.
  // The same in inodes (files, directories, links): what the run created, unless others freed some meanwhile.
  fileSystemInodeGrowth(): number | undefined {
    const now = this.inodeBaseline === undefined ? undefined : fileSystemFigures(this.opts.workspace)?.usedInodes;
    return now === undefined || this.inodeBaseline === undefined ? undefined : Math.max(0, now - this.inodeBaseline);
  }

  fileSystemGrowth(): number | undefined {
    const now = this.fsBaseline === undefined ? undefined : fileSystemFigures(this.opts.workspace)?.usedBytes;
    return now === undefined || this.fsBaseline === undefined ? undefined : Math.max(0, now - this.fsBaseline);
  }

  private async run(report: (excess: ResourceExcess) => void): Promise<void> {
    const { memoryBytes, writes } = this.opts;
    let previous: { at: number; writtenBytes: number; memoryBytes: number } | undefined;
    // Looked at often while it starts (a command can write tens of MiB in its first 20 ms), then less.
    let wait = MIN_SAMPLE_INTERVAL_MS;
    while (!this.stopped) {
      const sample = sampleProcessTree(this.opts.rootPid, { memory: memoryBytes !== undefined });
      if (this.stopped) return;
      wait = Math.min(SAMPLE_INTERVAL_MS, wait * 2);
      if (sample && this.opts.tmpfsBytes) sample.memoryBytes += this.opts.tmpfsBytes();
      if (sample) {
        this.writtenBytes = Math.max(this.writtenBytes, sample.writtenBytes);
        this.memoryBytes = Math.max(this.memoryBytes, sample.memoryBytes);
        if (memoryBytes !== undefined && sample.memoryBytes > memoryBytes) return report('memory');
        if (writes && sample.writtenBytes > writes.maxBytes) return report('writes');
        const at = performance.now();
        if (previous) {
          const elapsed = at - previous.at;
          wait = Math.min(
            wait,
            nextSampleIn(previous.writtenBytes, sample.writtenBytes, writes?.maxBytes, elapsed),
            nextSampleIn(previous.memoryBytes, sample.memoryBytes, memoryBytes, elapsed),
          );
        }
        previous = { at, writtenBytes: sample.writtenBytes, memoryBytes: sample.memoryBytes };
      }
      if (writes?.quota) wait = Math.min(wait, this.checkQuota(writes.quota, report));
      await delay(wait);
    }
  }

  // The file system's free space and inodes are one cheap call; only when it has filled by more than the
  // room left (space reserved with fallocate, or written by processes that were never waited for, shows
  // there and not in write_bytes) is the workspace itself walked, in the background, to decide. The run is
  // stopped (SIGSTOP) while it is walked: a walk of 100,000 entries takes a second or more, and a command
  // making empty files or fallocating went on to 1.8x the inode quota and 3.6x the byte quota before the
  // walk could answer. Found under the quota, the run goes on (SIGCONT) and the walk's figures become the
  // new starting point, so the next walk waits until the file system fills by the room left from there.
  // Answers when to look again: sooner as the file system fills towards the room left.
  private checkQuota(quota: NonNullable<WriteLimits['quota']>, report: (excess: ResourceExcess) => void): number {
    const base = this.quotaBase;
    if (!base) return SAMPLE_INTERVAL_MS;
    // A workspace already past its quota may be read, not grown.
    const limit = Math.max(quota.bytes, quota.usageAtStart);
    const inodeLimit = quota.inodes === undefined ? undefined : Math.max(quota.inodes, quota.entriesAtStart ?? 0);
    const room = limit - base.usage;
    const inodeRoom = inodeLimit === undefined ? Infinity : inodeLimit - base.entries;
    const now = fileSystemFigures(this.opts.workspace);
    const grown = now === undefined || base.fsBytes === undefined ? 0 : now.usedBytes - base.fsBytes;
    // Inodes taken on the file system meanwhile (statfs's files - ffree): empty files add no blocks.
    const inodesGrown = now === undefined || base.fsInodes === undefined ? 0 : now.usedInodes - base.fsInodes;
    const at = performance.now();
    const previous = this.lastFsCheck;
    this.lastFsCheck = { at, grown, inodesGrown };
    if (grown <= room && this.writtenBytes - base.written <= room && inodesGrown <= inodeRoom) {
      // A command making 90,000 empty files a second makes 1,800 between two samples 20 ms apart.
      if (!previous) return SAMPLE_INTERVAL_MS;
      return Math.min(
        nextSampleIn(previous.grown, grown, room, at - previous.at),
        nextSampleIn(previous.inodesGrown, inodesGrown, inodeRoom, at - previous.at),
      );
    }
    if (this.measuring || this.stopped) return SAMPLE_INTERVAL_MS;
    // Stopped at once, walked when the last walk is far enough behind: a run near its quota on a file system
    // others are filling waits rather than grows unchecked.
    if (!this.paused) {
      signalTree(this.opts.rootPid, 'SIGSTOP');
      this.paused = true;
    }
    if (performance.now() - this.lastMeasured < MEASURE_INTERVAL_MS) return SAMPLE_INTERVAL_MS;
    this.measuring = true;
    // The walk's figures are a new starting point for the pace too.
    this.lastFsCheck = undefined;
    // Nothing of the run grows the workspace from here until it goes on: the figures now are the walk's.
    const paused = fileSystemFigures(this.opts.workspace);
    const written = this.writtenBytes;
    void measureDiskUsage(this.opts.workspace, { stopPast: { bytes: limit, entries: inodeLimit ?? Infinity } })
      .then((usage) => {
        this.workspaceBytes = usage.bytes;
        // Directories nested too deep to measure could hide anything: treated as past the quota.
        if (usage.bytes > limit || !usage.complete) this.quotaPassed = 'bytes';
        else if (inodeLimit !== undefined && usage.entries > inodeLimit) this.quotaPassed = 'inodes';
        if (this.quotaPassed) return report('quota');
        this.quotaBase = {
          usage: usage.bytes,
          entries: usage.entries,
          fsBytes: paused?.usedBytes,
          fsInodes: paused?.usedInodes,
          written,
        };
      })
      .catch(() => undefined)
      .finally(() => {
        // A run being killed is left stopped: SIGKILL ends a stopped process as well.
        if (!this.quotaPassed) {
          signalTree(this.opts.rootPid, 'SIGCONT');
          this.paused = false;
        }
        this.measuring = false;
        this.lastMeasured = performance.now();
      });
    return SAMPLE_INTERVAL_MS;
  }
}

// When to look again at a figure headed for `limit`: half the time its last pace needs to get there, so
// a run racing towards a limit is seen soon after it passes it, and a quiet one costs a sample per 20 ms.
export function nextSampleIn(before: number, now: number, limit: number | undefined, elapsedMs: number): number {
  if (limit === undefined || now <= before || elapsedMs <= 0) return SAMPLE_INTERVAL_MS;
  const untilLimit = ((limit - now) / (now - before)) * elapsedMs;
  return Math.min(SAMPLE_INTERVAL_MS, Math.max(MIN_SAMPLE_INTERVAL_MS, untilLimit / 2));
}

// Space and inodes in use on the file system that holds `dir`: one statfs, answered by the kernel from
// counters it keeps (microseconds). Blocking on purpose: it is read every sample of every command, and a
// trip through libuv's thread pool cost the event loop far more than the call itself (0.36 s of 12 s of
// the main thread beside four commands, in the noisy-neighbour bench's CPU profile).
function fileSystemFigures(dir: string): { usedBytes: number; usedInodes: number } | undefined {
  try {
    const fs = statfsSync(dir);
    return { usedBytes: (fs.blocks - fs.bfree) * fs.bsize, usedInodes: fs.files - fs.ffree };
  } catch {
    return undefined;
  }
}

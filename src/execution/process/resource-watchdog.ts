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
  // The file system's figures read before the command could run (fileSystemFigures): the quota's starting
  // point. Read at start() otherwise, when the command may already have made files the quota never counts.
  fileSystemBefore?: { usedBytes: number; usedInodes: number };
}

const SAMPLE_INTERVAL_MS = 20;
// A run closing fast on a limit is sampled this often at most.
const MIN_SAMPLE_INTERVAL_MS = 2;
// The workspace is walked at most this often, and only once the file system has filled by more than the
// room the quota left (or the command has written that much).
const MEASURE_INTERVAL_MS = 250;
// The file system's figures are the host's: space or inodes freed elsewhere meanwhile (another workspace, a
// log, the database) hide what the run adds, and a tenant can free them on purpose in another of its
// workspaces. So the workspace is also walked whatever those figures say: first FIRST_PERIODIC_WALK_MS into
// the run, then twice as long after each walk up to PERIODIC_WALK_MS, and never more than one part in
// WALK_COST_SHARE of the run's time. Soon at first because a shell makes 20,000 empty files in 0.6 s: walked
// first at 1 s, such a run ended before any walk while other suites deleted files, past a quota of 500. The
// run is stopped while it is walked, as for any walk: kept going, a fast command made 1,330 files past a
// 20,000-inode quota before the walk could answer.
const FIRST_PERIODIC_WALK_MS = 50;
const PERIODIC_WALK_MS = 1_000;
const WALK_COST_SHARE = 20;
// What walking one entry costs (an lstat through libuv's pool: 20,000 empty files in 350-470 ms here). A walk's
// cost is reckoned from the entries it counted, not from how long it took: behind another task's thousands of
// unlinks in libuv's pool, one walk of 300 entries took over a second, and paced by that the next came after
// the run (20,000 files past a quota of 500) had ended.
const WALK_MS_PER_ENTRY = 0.02;

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
  private quotaBase: QuotaBase | undefined;
  // The run's processes are stopped (SIGSTOP) until the workspace has been walked.
  private paused = false;
  // The file system's growth since the quota's starting point at the last look, to pace the next.
  private lastFsCheck: { at: number; grown: number; inodesGrown: number } | undefined;
  // When the next walk is due whatever the file system's figures say (performance.now()), and the least
  // time from one walk to the next, doubled after each.
  private nextPeriodicWalk = Infinity;
  private periodicGap = FIRST_PERIODIC_WALK_MS;
  // The quota's starting point when the run started; `quotaBase` moves on with every walk.
  private startBase: QuotaBase | undefined;

  constructor(private readonly opts: ResourceWatchOptions) {}

  start(onExceeded: (excess: ResourceExcess) => void): void {
    // Taken at once: the command may already be writing by the time a thread-pool call would answer.
    if (this.opts.writes) {
      const baseline = this.opts.fileSystemBefore ?? fileSystemFigures(this.opts.workspace);
      const { quota } = this.opts.writes;
      if (quota) {
        this.quotaBase = this.startBase = {
          usage: quota.usageAtStart,
          entries: quota.entriesAtStart ?? 0,
          fsBytes: baseline?.usedBytes,
          fsInodes: baseline?.usedInodes,
          written: 0,
        };
        const walkCost = (quota.entriesAtStart ?? 0) * WALK_MS_PER_ENTRY;
        this.nextPeriodicWalk = performance.now() + Math.max(FIRST_PERIODIC_WALK_MS, walkCost * WALK_COST_SHARE);
      }
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

  // What the run added to the workspace at most, in bytes and in entries: from the last walk of the
  // workspace (or the figures it started from), plus what the run wrote since or how far the file system
  // filled since, whichever is more. Never below 0: what another run in the same workspace freed meanwhile
  // would be taken off twice, once by each. Space freed elsewhere on the file system since the last walk can
  // hide growth: at most PERIODIC_WALK_MS of it (or the walk's pace) for a run that ends, and the workspace's
  // figure is walked again within USAGE_TTL_MS anyway.
  // Undefined when the quota was not watched or the file system's figures could not be read.
  growthAtMost(): { bytes: number; entries: number } | undefined {
    const start = this.startBase;
    const base = this.quotaBase;
    const now = this.opts.writes ? fileSystemFigures(this.opts.workspace) : undefined;
    if (!start || !base || !now || base.fsBytes === undefined || base.fsInodes === undefined) return undefined;
    const grown = Math.max(0, now.usedBytes - base.fsBytes, this.writtenBytes - base.written);
    const inodesGrown = Math.max(0, now.usedInodes - base.fsInodes);
    return {
      bytes: Math.max(0, base.usage - start.usage + grown),
      entries: Math.max(0, base.entries - start.entries + inodesGrown),
    };
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
      if (!this.measuring && !this.stopped && at >= this.nextPeriodicWalk) {
        this.pause();
        this.walk(limit, inodeLimit, report);
      }
      // A command making 90,000 empty files a second makes 1,800 between two samples 20 ms apart.
      if (!previous) return SAMPLE_INTERVAL_MS;
      return Math.min(
        nextSampleIn(previous.grown, grown, room, at - previous.at),
        nextSampleIn(previous.inodesGrown, inodesGrown, inodeRoom, at - previous.at),
      );
    }
    if (this.stopped) return SAMPLE_INTERVAL_MS;
    // Stopped at once, walked when the last walk is far enough behind (and none is under way): a run near its
    // quota on a file system others are filling waits rather than grows unchecked.
    this.pause();
    if (this.measuring || performance.now() - this.lastMeasured < MEASURE_INTERVAL_MS) return SAMPLE_INTERVAL_MS;
    this.walk(limit, inodeLimit, report);
    return SAMPLE_INTERVAL_MS;
  }

  private pause(): void {
    if (this.paused) return;
    signalTree(this.opts.rootPid, 'SIGSTOP');
    this.paused = true;
  }

  // Walks the workspace in the background, the run stopped; past the quota, the run is reported. Otherwise
  // the walk's figures become the quota's new starting point and the run goes on.
  private walk(limit: number, inodeLimit: number | undefined, report: (excess: ResourceExcess) => void): void {
    this.measuring = true;
    // The walk's figures are a new starting point for the pace too.
    this.lastFsCheck = undefined;
    const before = fileSystemFigures(this.opts.workspace);
    const written = this.writtenBytes;
    let entries = this.quotaBase?.entries ?? 0;
    void measureDiskUsage(this.opts.workspace, { stopPast: { bytes: limit, entries: inodeLimit ?? Infinity } })
      .then((usage) => {
        this.workspaceBytes = usage.bytes;
        entries = usage.entries;
        // Directories nested too deep to measure could hide anything: treated as past the quota.
        if (usage.bytes > limit || !usage.complete) this.quotaPassed = 'bytes';
        else if (inodeLimit !== undefined && usage.entries > inodeLimit) this.quotaPassed = 'inodes';
        if (this.quotaPassed) return report('quota');
        this.quotaBase = {
          usage: usage.bytes,
          entries: usage.entries,
          fsBytes: before?.usedBytes,
          fsInodes: before?.usedInodes,
          written,
        };
      })
      .catch(() => undefined)
      .finally(() => {
        this.measuring = false;
        this.lastMeasured = performance.now();
        this.periodicGap = Math.min(PERIODIC_WALK_MS, this.periodicGap * 2);
        this.nextPeriodicWalk = this.lastMeasured + Math.max(this.periodicGap, entries * WALK_MS_PER_ENTRY * WALK_COST_SHARE);
        // A run being killed is left stopped: SIGKILL ends a stopped process as well.
        if (this.quotaPassed || !this.paused) return;
        signalTree(this.opts.rootPid, 'SIGCONT');
        this.paused = false;
      });
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
export function fileSystemFigures(dir: string): { usedBytes: number; usedInodes: number } | undefined {
  try {
    const fs = statfsSync(dir);
    return { usedBytes: (fs.blocks - fs.bfree) * fs.bsize, usedInodes: fs.files - fs.ffree };
  } catch {
    return undefined;
  }
}

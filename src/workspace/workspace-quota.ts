import { Inject, Injectable } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { describeBytes } from '../common/format/describe-bytes.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { WorkspaceFsError } from './fs/workspace-fs.error.js';
import { MAX_USAGE_DEPTH } from '../execution/process/disk-usage.js';
import type { WorkspaceWorkerTasks } from './workspace-worker-tasks.js';

// How long a measured figure stands. Meanwhile the file tools' writes keep it current and commands and
// deletes turn it into an upper bound; what changes a workspace some other way (another instance, the
// operator) is seen within this.
export const USAGE_TTL_MS = 30_000;

interface Figure {
  bytes: number;
  // Files, directories and links (what the walk counted).
  entries: number;
  complete: boolean;
  // False once a command or a delete has made `bytes` an upper bound: it is measured again before it
  // refuses anything.
  measured: boolean;
  // True once a write has counted an entry it may not have added (it may have replaced a file): `entries`
  // is then an upper bound, measured again before it refuses anything.
  entriesUpperBound?: boolean;
}

// The one owner of how much of WORKSPACE_QUOTA_BYTES each workspace uses. A workspace is walked (in the
// worker pool, one walk at a time per workspace) only when a write or a command needs the figure and none
// is cached, or when an upper bound would refuse: reads never ask, and a workspace far from its quota is
// walked about once per USAGE_TTL_MS however many commands run in it.
@Injectable()
export class WorkspaceQuota {
  readonly quotaBytes: number;
  readonly quotaInodes: number;
  private readonly figures: TtlLruCache<string, Figure>;
  private readonly measuring = new Map<string, Promise<Figure>>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(WORKER_POOL) private readonly pool: WorkerPool<WorkspaceWorkerTasks>,
  ) {
    this.quotaBytes = config.workspace.quotaBytes;
    this.quotaInodes = config.workspace.quotaInodes;
    this.figures = new TtlLruCache(USAGE_TTL_MS, config.workspace.cacheMaxEntries);
  }

  // Makes room for a write that grows the workspace by `growth` bytes, or refuses it with
  // workspace_quota_exceeded. A write that does not grow it always passes, even past the quota. The
  // answer gives the room back when the write did not happen. `signal`: the write stops waiting for a
  // measurement when it is stopped (the measurement goes on for the others, and is kept).
  async reserve(workspace: string, growth: number, display: string, signal?: AbortSignal): Promise<() => void> {
    let figure = growth > 0 ? await untilAborted(this.current(workspace), signal) : this.figures.get(workspace);
    if (!figure) return () => undefined;
    if (growth > 0) {
      if (!figure.measured && figure.bytes + growth > this.quotaBytes) figure = await untilAborted(this.measure(workspace), signal);
      if (!figure.complete) throw tooDeepToMeasure(display);
      if (figure.bytes + growth > this.quotaBytes) throw quotaExceeded(display, growth, figure.bytes, this.quotaBytes);
      if ((!figure.measured || figure.entriesUpperBound) && figure.entries >= this.quotaInodes)
        figure = await untilAborted(this.measure(workspace), signal);
      if (figure.entries >= this.quotaInodes) throw inodesExceeded(display, figure.entries, this.quotaInodes);
    }
    // In place: the figure keeps the expiry of its measurement. A write that grows the workspace may add
    // an entry too (a new file): counted, and the figure is then an upper bound until it is measured.
    const reserved = figure;
    const entries = growth > 0 ? 1 : 0;
    reserved.bytes += growth;
    reserved.entries += entries;
    if (entries > 0) reserved.entriesUpperBound = true;
    return () => {
      reserved.bytes -= growth;
      reserved.entries -= entries;
    };
  }

  // What a command starts from: the quota and the workspace's usage, measured when an upper bound would
  // leave it no room. A workspace at or past its quota runs no command: what a command writes is seen only
  // after it is written, so one started in a full workspace could only add to what is already too much.
  async forCommand(workspace: string): Promise<{ bytes: number; usageAtStart: number; inodes: number; entriesAtStart: number }> {
    let figure = await this.current(workspace);
    if ((!figure.measured || figure.entriesUpperBound) && (figure.bytes >= this.quotaBytes || figure.entries >= this.quotaInodes))
      figure = await this.measure(workspace);
    if (figure.bytes >= this.quotaBytes)
      throw fullForCommands(
        `uses ${describeBytes(figure.bytes)}, at or past its quota of ${describeBytes(this.quotaBytes)} (WORKSPACE_QUOTA_BYTES)`,
      );
    if (figure.entries >= this.quotaInodes)
      throw fullForCommands(
        `holds ${figure.entries} files, directories and links, at or past its quota of ${this.quotaInodes} (WORKSPACE_QUOTA_INODES)`,
      );
    return { bytes: this.quotaBytes, usageAtStart: figure.bytes, inodes: this.quotaInodes, entriesAtStart: figure.entries };
  }

  // A workspace's figure, measured when none is cached, or when `fresh` asks for a measured one and the
  // cached one is an upper bound.
  async usageOf(workspace: string, fresh = false): Promise<{ bytes: number; entries: number; measured: boolean }> {
    const figure = await this.current(workspace);
    const exact = (f: Figure) => ({ bytes: f.bytes, entries: f.entries, measured: f.measured && !f.entriesUpperBound });
    return exact(fresh && !exact(figure).measured ? await this.measure(workspace) : figure);
  }

  // The figure held now, if any; nothing is measured.
  cachedUsageOf(workspace: string): { bytes: number; entries: number; measured: boolean } | undefined {
    const figure = this.figures.get(workspace);
    return figure && { bytes: figure.bytes, entries: figure.entries, measured: figure.measured && !figure.entriesUpperBound };
  }

  // After a command: `grownAtMost` bounds what it added (the most of its write_bytes and of how far the
  // file system filled meanwhile); null, nothing is known and the workspace is measured when next needed.
  // `inodesAtMost` bounds the inodes it added the same way.
  afterCommand(workspace: string, grownAtMost: number | null, inodesAtMost: number | null = null): void {
    const figure = this.figures.get(workspace);
    if (!figure) return;
    if (grownAtMost === null || inodesAtMost === null) return this.forget(workspace);
    figure.bytes += grownAtMost;
    figure.entries += inodesAtMost;
    figure.measured = false;
  }

  // After a delete: the figure still bounds the usage from above.
  afterDelete(workspace: string): void {
    const figure = this.figures.get(workspace);
    if (figure) figure.measured = false;
  }

  // The workspace is measured again when the figure is next needed.
  forget(workspace: string): void {
    this.figures.delete(workspace);
    this.measuring.delete(workspace);
  }

  private current(workspace: string): Promise<Figure> {
    const cached = this.figures.get(workspace);
    return cached ? Promise.resolve(cached) : this.measure(workspace);
  }

  private measure(workspace: string): Promise<Figure> {
    const inFlight = this.measuring.get(workspace);
    if (inFlight) return inFlight;
    const measurement: Promise<Figure> = this.pool
      // Writes wait on it: urgent, with a reserved thread, and fair between workspaces, so it never waits
      // behind another tenant's searches or listings.
      .run('measureWorkspaceUsage', { root: workspace }, { key: workspace, urgent: true })
      .then(({ bytes, entries, complete }) => {
        const figure = { bytes, entries, complete, measured: true };
        // Not kept when the workspace was forgotten while it was walked: the walk may predate the change.
        if (this.measuring.get(workspace) === measurement) this.figures.set(workspace, figure);
        return figure;
      })
      .finally(() => {
        if (this.measuring.get(workspace) === measurement) this.measuring.delete(workspace);
      });
    this.measuring.set(workspace, measurement);
    return measurement;
  }
}

// The promise's outcome, or the signal's reason as soon as it aborts.
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const quotaExceeded = (display: string, growth: number, used: number, quota: number) =>
  new WorkspaceFsError(
    'workspace_quota_exceeded',
    `Writing '${display}' would grow the workspace by ${describeBytes(growth)} to ${describeBytes(used + growth)}, past its quota of ${describeBytes(quota)} (it uses ${describeBytes(used)} now); delete files that are no longer needed (delete_file), then try again`,
  );

const inodesExceeded = (display: string, entries: number, quota: number) =>
  new WorkspaceFsError(
    'workspace_quota_exceeded',
    `'${display}' was not written: the workspace holds ${entries} files, directories and links, at its quota of ${quota} (WORKSPACE_QUOTA_INODES); delete files that are no longer needed (delete_file), then try again`,
  );

const fullForCommands = (state: string) =>
  new WorkspaceFsError(
    'workspace_quota_exceeded',
    `The command did not run: the workspace ${state}; delete files that are no longer needed (delete_file), then try again`,
  );

const tooDeepToMeasure = (display: string) =>
  new WorkspaceFsError(
    'workspace_quota_exceeded',
    `'${display}' was not written: the workspace has directories nested more than ${MAX_USAGE_DEPTH} levels deep, so its size against the quota cannot be measured; delete those directories first`,
  );

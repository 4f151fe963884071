import { Inject, Injectable, Logger } from '@nestjs/common';
import { TtlLruCache } from '../common/cache/ttl-lru-cache.js';
import { WORKER_POOL, type WorkerPool } from '../common/worker-pool/worker-pool.js';
import type { WorkspaceWorkerTasks } from './workspace-worker-tasks.js';
import { deleteWorkspacePath, statWorkspacePath, WorkspaceFsError } from './fs/workspace-fs.js';
import { isWriteTempName } from './fs/workspace-file.writer.js';
import { MAX_DEPTH } from './fs/workspace-tree.walker.js';
import { listRecursively } from './recursive-listing.js';

// Older than any write could still be running (file tools time out after 15 s), so never one in progress,
// on this instance or another.
const STALE_AFTER_MS = 15 * 60 * 1000;
// A sweep looks at this many entries of a workspace at most; what lies beyond waits for the next process.
const MAX_SWEPT_ENTRIES = 50_000;

// A write killed between creating its temporary file and renaming it into place leaves that file behind.
// The first time this process resolves a workspace, such leftovers are removed in the background, through
// the same confined walk and delete as the file tools (the walk in the worker pool). Once per workspace
// per process: a crash is what leaves them, and a restart is what follows a crash.
@Injectable()
export class StaleTempSweeper {
  private readonly logger = new Logger('Workspace');
  private readonly swept = new TtlLruCache<string, true>(Number.MAX_SAFE_INTEGER, 100_000);

  constructor(@Inject(WORKER_POOL) private readonly pool: WorkerPool<WorkspaceWorkerTasks>) {}

  sweepOnce(workspace: string): void {
    if (this.swept.get(workspace)) return;
    this.swept.set(workspace, true);
    this.sweep(workspace).catch((error: unknown) =>
      this.logger.warn(`Sweeping stale temporary files in ${workspace} failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  // Resolves with the paths it removed.
  async sweep(workspace: string, now = Date.now()): Promise<string[]> {
    // Names and types only: the few temporary files among them are then stat'ed one by one.
    const listing = await listRecursively(this.pool, workspace, '.', {
      includeHidden: true,
      maxDepth: MAX_DEPTH,
      limit: MAX_SWEPT_ENTRIES,
    });
    const removed: string[] = [];
    for (const entry of listing.entries) {
      if (entry.type !== 'file' || !isWriteTempName(entry.name)) continue;
      const stat = await statWorkspacePath(workspace, entry.path, { followSymlinks: false }).catch(vanished);
      if (stat === null || stat.type !== 'file' || now - Date.parse(stat.modified) < STALE_AFTER_MS) continue;
      if ((await deleteWorkspacePath(workspace, entry.path).catch(vanished)) !== null) removed.push(entry.path);
    }
    if (removed.length > 0) this.logger.log(`Removed ${removed.length} temporary file(s) left by interrupted writes in ${workspace}`);
    return removed;
  }
}

// A file removed or replaced since the walk saw it (or one the workspace refuses) is simply not swept; the
// sweep goes on with the others.
function vanished(error: unknown): null {
  if (error instanceof WorkspaceFsError) return null;
  throw error;
}

import { JsonText } from '../common/json/json-text.js';
import type { RunOptions, WorkerPool } from '../common/worker-pool/worker-pool.js';
import { columnsToListing, type ListWorkspaceRecursivePayload, type WorkspaceWorkerTasks } from './workspace-worker-tasks.js';
import {
  DirectoryTooLargeInline,
  listWorkspace,
  type DetailedWorkspaceEntry,
  type ListWorkspaceOptions,
  type ListWorkspaceResult,
} from './fs/workspace-fs.js';

type RecursiveListingOptions = Omit<ListWorkspaceOptions, 'recursive' | 'blocking'>;

// Entries walked on the event loop before a listing moves to the worker pool.
export const INLINE_LISTING_ENTRIES = 256;
// A directory larger than this (st_size: about 3,000 names of 10 characters on ext4 or tmpfs) is not read on
// the event loop at all: every name is read and sorted before the entry limit can stop the walk.
export const INLINE_DIRECTORY_BYTES = 64 * 1024;

// A recursive listing, inline or in the pool (listInlineOrInPool), as the entries.
export function listRecursively(
  pool: WorkerPool<WorkspaceWorkerTasks>,
  root: string,
  path: string,
  options: RecursiveListingOptions & { details: true },
  run?: RunOptions,
): Promise<ListWorkspaceResult<DetailedWorkspaceEntry>>;
export function listRecursively(
  pool: WorkerPool<WorkspaceWorkerTasks>,
  root: string,
  path: string,
  options: RecursiveListingOptions,
  run?: RunOptions,
): Promise<ListWorkspaceResult>;
export async function listRecursively(
  pool: WorkerPool<WorkspaceWorkerTasks>,
  root: string,
  path: string,
  options: RecursiveListingOptions,
  run: RunOptions = {},
): Promise<ListWorkspaceResult> {
  const payload: ListWorkspaceRecursivePayload = { root, path, options };
  return listInlineOrInPool(root, path, options, async () => columnsToListing(await pool.run('listWorkspaceRecursive', payload, run)));
}

// Nesting of a listing's JSON: the result object, its entries array, an entry.
const LISTING_DEPTH = 3;

// The same listing for an answer (the list_files tool): a walk in the pool comes back as its JSON text,
// which the answer carries as it is; a small one walked inline is the listing itself. `maxBytes`, the cap
// on results: a listing past it is not written out, and the caps drop it as they would have.
export async function listRecursivelyAsJson(
  pool: WorkerPool<WorkspaceWorkerTasks>,
  root: string,
  path: string,
  options: RecursiveListingOptions,
  maxBytes: number,
  run: RunOptions = {},
): Promise<ListWorkspaceResult | JsonText> {
  const payload = { root, path, options, maxBytes };
  return listInlineOrInPool(root, path, options, async () => {
    const written = await pool.run('listWorkspaceRecursiveJson', payload, run);
    return 'text' in written
      ? JsonText.written(written.text, { bytes: written.bytes, depth: LISTING_DEPTH })
      : JsonText.oversized(written.overBytes, LISTING_DEPTH);
  });
}

// Most recursive listings are small: walking them inline costs less than a trip to the pool, where they
// would queue behind the big ones. A tree with more entries than the inline budget is walked again, in
// full, in the pool, so a big walk never holds the event loop.
async function listInlineOrInPool<Pooled>(
  root: string,
  path: string,
  options: RecursiveListingOptions,
  inPool: () => Promise<Pooled>,
): Promise<ListWorkspaceResult | Pooled> {
  // A glob may keep few entries of a large tree: the inline budget counts entries kept, so it goes to the pool.
  if (options.glob) return inPool();
  const inlineLimit = Math.min(options.limit, INLINE_LISTING_ENTRIES);
  let inline: ListWorkspaceResult;
  try {
    inline = await listWorkspace(root, path, {
      ...options,
      recursive: true,
      limit: inlineLimit,
      inlineDirectoryBytes: INLINE_DIRECTORY_BYTES,
    });
  } catch (err) {
    if (err instanceof DirectoryTooLargeInline) return inPool();
    throw err;
  }
  if (!inline.truncated || options.limit <= inlineLimit) return inline;
  return inPool();
}

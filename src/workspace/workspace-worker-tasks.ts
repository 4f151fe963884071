import { type ListingJson, writeListingJson } from './listing-json.js';
import { hashWorkspaceFile } from './fs/workspace-file.reader.js';
import { workspaceFsErrorCodec } from './fs/workspace-fs.error.js';
import { searchWorkspace, type SearchWorkspaceOptions } from './fs/workspace-search.js';
import { measureDiskUsage } from '../execution/process/disk-usage.js';
import { type ListWorkspaceOptions, type ListWorkspaceResult, walkWorkspaceTree, type WorkspaceEntry } from './fs/workspace-tree.walker.js';

export interface ListWorkspaceRecursivePayload {
  root: string;
  path: string;
  options: Omit<ListWorkspaceOptions, 'recursive'>;
}

export interface SearchWorkspacePayload {
  root: string;
  path: string;
  options: SearchWorkspaceOptions;
}

export interface HashFilePayload {
  root: string;
  path: string;
}

// A listing as it crosses between threads: one array per field instead of an object per entry. Copying
// ten thousand small objects through postMessage measured at twice the CPU of copying these columns and
// rebuilding the objects (columnsToListing), on each side of the copy.
export interface ListingColumns {
  path: string;
  truncated: boolean;
  names: string[];
  paths: string[];
  types: WorkspaceEntry['type'][];
  // Indexes of the entries with escapedName (names that are not UTF-8): rare, so not a column.
  escaped: number[];
  // With `details` only.
  sizes?: Float64Array;
  modified?: string[];
}

export function listingToColumns({ path, truncated, entries }: ListWorkspaceResult, details: boolean): ListingColumns {
  const n = entries.length;
  const names = new Array<string>(n);
  const paths = new Array<string>(n);
  const types = new Array<WorkspaceEntry['type']>(n);
  const escaped: number[] = [];
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    names[i] = e.name;
    paths[i] = e.path;
    types[i] = e.type;
    if (e.escapedName) escaped.push(i);
  }
  if (!details) return { path, truncated, names, paths, types, escaped };
  const sizes = new Float64Array(n);
  const modified = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    sizes[i] = entries[i].size!;
    modified[i] = entries[i].modified!;
  }
  return { path, truncated, names, paths, types, escaped, sizes, modified };
}

export function columnsToListing(columns: ListingColumns): ListWorkspaceResult {
  const { names, paths, types, sizes, modified } = columns;
  const entries = new Array<WorkspaceEntry>(names.length);
  if (sizes && modified) {
    for (let i = 0; i < names.length; i++)
      entries[i] = { name: names[i], path: paths[i], type: types[i], size: sizes[i], modified: modified[i] };
  } else {
    for (let i = 0; i < names.length; i++) entries[i] = { name: names[i], path: paths[i], type: types[i] };
  }
  for (const i of columns.escaped) entries[i].escapedName = true;
  return { path: columns.path, entries, truncated: columns.truncated };
}

// The workspace's work for the app's worker pool: big walks, searches and hashes, with blocking calls.
export const workspaceWorkerTasks = {
  listWorkspaceRecursive: async (payload: ListWorkspaceRecursivePayload) =>
    listingToColumns(
      await walkWorkspaceTree(payload.root, payload.path, { ...payload.options, recursive: true, blocking: true }),
      payload.options.details ?? false,
    ),
  // A listing written as JSON on the thread that walked it (the list_files tool's big walks): one string
  // crosses to the main thread, which splices it into the answer as it is (common/json/json-text.ts). It is
  // written only within the cap on results, `maxBytes` (listing-json.ts).
  listWorkspaceRecursiveJson: async (payload: ListWorkspaceRecursivePayload & { maxBytes: number }): Promise<ListingJson> =>
    writeListingJson(
      await walkWorkspaceTree(payload.root, payload.path, { ...payload.options, recursive: true, blocking: true }),
      payload.maxBytes,
    ),
  hashFile: (payload: HashFilePayload) => hashWorkspaceFile(payload.root, payload.path),
  searchWorkspace: (payload: SearchWorkspacePayload) => searchWorkspace(payload.root, payload.path, payload.options),
  measureWorkspaceUsage: (payload: { root: string }) => measureDiskUsage(payload.root, { blocking: true }),
};

export type WorkspaceWorkerTasks = typeof workspaceWorkerTasks;

export const workspaceWorkerErrors = [workspaceFsErrorCodec];

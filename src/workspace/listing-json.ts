import { JSON_BYTES_PER_UNIT_MAX } from '../common/json/bounded-json.js';
import type { ListWorkspaceResult } from './fs/workspace-tree.walker.js';

// A listing as the worker thread sends it for an answer: its JSON text and UTF-8 length, or, when the text
// would pass the cap on results, only a byte count it is known to exceed (the text is never written).
export type ListingJson = { text: string; bytes: number } | { overBytes: number };

// What JSON adds around an entry's strings at most: the keys, quotes, commas, braces and the longest type;
// with details the size (a number of at most 24 characters) and the modified key.
const ENTRY_OVERHEAD_MAX = 128;
const LISTING_OVERHEAD_MAX = 64;

// JSON.stringify(listing), unless it is more than `maxBytes` bytes. The entries' names, paths and times
// bound its size without writing it, as bounded-json's walk bounds any value's (each UTF-16 unit is one
// to JSON_BYTES_PER_UNIT_MAX bytes), in one pass over the strings instead of a walk of every value. Below
// the cap at the most, it is written at once; past it at the least, not at all; in between (names that
// JSON escapes, near the cap), entry by entry, stopping once the cap is passed, so no listing costs more
// than the cap in text however its names are made.
export function writeListingJson(listing: ListWorkspaceResult, maxBytes: number): ListingJson {
  let units = listing.path.length;
  for (const entry of listing.entries) units += entry.name.length + entry.path.length + (entry.modified?.length ?? 0);
  if (units > maxBytes) return { overBytes: units };
  if (JSON_BYTES_PER_UNIT_MAX * units + ENTRY_OVERHEAD_MAX * listing.entries.length + LISTING_OVERHEAD_MAX <= maxBytes) {
    const text = JSON.stringify(listing);
    return { text, bytes: Buffer.byteLength(text) };
  }
  const head = `{"path":${JSON.stringify(listing.path)},"entries":[`;
  const tail = `],"truncated":${listing.truncated}}`;
  let bytes = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, listing.entries.length - 1);
  const written = new Array<string>(listing.entries.length);
  for (let i = 0; i < listing.entries.length; i++) {
    written[i] = JSON.stringify(listing.entries[i]);
    bytes += Buffer.byteLength(written[i]);
    if (bytes > maxBytes) return { overBytes: bytes };
  }
  return { text: head + written.join(',') + tail, bytes };
}

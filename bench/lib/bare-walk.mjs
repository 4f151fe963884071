// The bare walk the recursive list_files is set beside: opendir recursion (names and types from the
// directory read, no stat), depth first, children in the order the directory gives them, up to `limit`
// entries. It runs on a Piscina thread of bench/limit-server.mjs with blocking calls, as Toolgate's walk
// runs on its worker pool; the entries go back as two columns (paths, and a type code per entry) and the
// main thread builds the JSON answer, as Toolgate's does.
import { opendirSync } from 'node:fs';
import path from 'node:path';

export default function walk({ root, dir, limit }) {
  const paths = [];
  const types = [];
  let truncated = false;
  const visit = (relative) => {
    const handle = opendirSync(path.join(root, relative));
    try {
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        if (paths.length >= limit) {
          truncated = true;
          return;
        }
        const child = relative ? `${relative}/${entry.name}` : entry.name;
        const isDir = entry.isDirectory();
        paths.push(child);
        types.push(isDir ? 1 : entry.isFile() ? 0 : 2);
        if (isDir) visit(child);
        if (truncated) return;
      }
    } finally {
      handle.closeSync();
    }
  };
  visit(dir);
  return { paths, types: Uint8Array.from(types), truncated };
}

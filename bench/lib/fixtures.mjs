import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const BENCH_FILE = 'bench-1k.txt';
export const TREE_DIR = 'tree';

// 1 KiB of text in 16 lines of 64 bytes: what read_file, the limit and the MCP server all read.
export const BENCH_FILE_CONTENT = Array.from({ length: 16 }, (_, i) => `line ${String(i + 1).padStart(2, '0')} `.padEnd(63, '.') + '\n').join('');
if (Buffer.byteLength(BENCH_FILE_CONTENT) !== 1024) throw new Error('the bench file must be 1 KiB');

export function writeBenchFile(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, BENCH_FILE), BENCH_FILE_CONTENT);
}

// 100 directories of 100 small files: 10,000 files, 10,100 entries, so a listing with limit 10000 is full.
export function createTree(parent, { dirs = 100, filesPerDir = 100 } = {}) {
  const root = path.join(parent, TREE_DIR);
  for (let d = 0; d < dirs; d++) {
    const dir = path.join(root, `d${String(d).padStart(3, '0')}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < filesPerDir; f++) writeFileSync(path.join(dir, `f${String(f).padStart(3, '0')}.txt`), `${d}/${f}\n`);
  }
  return root;
}

// The tree is built once and moved (one rename) into whichever workspace is being measured.
export function moveTree(fromParent, toParent) {
  renameSync(path.join(fromParent, TREE_DIR), path.join(toParent, TREE_DIR));
}

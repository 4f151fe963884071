import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const BENCH_FILE = 'bench-1k.txt';
export const TREE_DIR = 'tree';

// 1 KiB of text in 16 lines of 64 bytes: what read_file, the limit and the MCP server all read.
export const BENCH_FILE_CONTENT = Array.from(
  { length: 16 },
  (_, i) => `line ${String(i + 1).padStart(2, '0')} `.padEnd(63, '.') + '\n',
).join('');
if (Buffer.byteLength(BENCH_FILE_CONTENT) !== 1024) throw new Error('the bench file must be 1 KiB');

export function writeBenchFile(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, BENCH_FILE), BENCH_FILE_CONTENT);
}

export const TREE_FILE_BYTES = 4096;
// The literal search_files looks for: on one line of one file of the tree.
export const TREE_MARKER = 'needle-in-the-tree';
export const TREE_MARKER_FILE = `${TREE_DIR}/d050/f050.txt`;
export const EDIT_DIR = 'edit';
export const EDIT_FILE_BYTES = 100 * 1024;
export const EDIT_LINE = (state) => `the value in the middle is ${state ? 'B' : 'A'}`;

// 100 directories of 100 files of 4 KiB of text (40 MB): 10,000 files, 10,100 entries, so a listing with
// limit 10000 is full and a search reads 40 MB.
export function createTree(parent, { dirs = 100, filesPerDir = 100 } = {}) {
  const root = path.join(parent, TREE_DIR);
  const filler = 'const value = compute(alpha, beta) + 42; // a line of ordinary source text\n';
  for (let d = 0; d < dirs; d++) {
    const dir = path.join(root, `d${String(d).padStart(3, '0')}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < filesPerDir; f++) {
      const name = `f${String(f).padStart(3, '0')}.txt`;
      const marker = `${TREE_DIR}/${path.basename(dir)}/${name}` === TREE_MARKER_FILE ? `// ${TREE_MARKER}\n` : '';
      const head = `${d}/${f}\n${marker}`;
      writeFileSync(path.join(dir, name), (head + filler.repeat(Math.ceil(TREE_FILE_BYTES / filler.length))).slice(0, TREE_FILE_BYTES));
    }
  }
  return root;
}

// One 100 KiB file per connection, each with one line that edit_file flips between A and B.
export function writeEditFiles(workspace, count) {
  const dir = path.join(workspace, EDIT_DIR);
  mkdirSync(dir, { recursive: true });
  const line = (i) => `line ${String(i).padStart(4, '0')} ${'.'.repeat(50)}\n`;
  const lines = Array.from({ length: Math.ceil(EDIT_FILE_BYTES / line(0).length) }, (_, i) => line(i));
  lines[Math.floor(lines.length / 2)] = `${EDIT_LINE(false)}\n`;
  const content = lines.join('');
  for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `f${i}.txt`), content);
  return content;
}

// The tree is built once and moved (one rename) into whichever workspace is being measured.
export function moveTree(fromParent, toParent) {
  renameSync(path.join(fromParent, TREE_DIR), path.join(toParent, TREE_DIR));
}

// A unified diff (`diff -u` layout) of two texts, by lines, for the answer of edit_file. Common leading and
// trailing lines are set aside first, so an edit in a large file compares only the lines around it.

type Op = { kind: ' ' | '-' | '+'; text: string };

// Past this many differing lines the shortest edit script is not searched for: the changed middle is shown
// as removed then added, which is still a correct diff.
const MAX_EDIT_DISTANCE = 2000;

interface Lines {
  lines: string[];
  // The text does not end with a newline (and is not empty).
  noFinalNewline: boolean;
}

function splitLines(text: string): Lines {
  if (text === '') return { lines: [], noFinalNewline: false };
  const lines = text.split('\n');
  const noFinalNewline = lines[lines.length - 1] !== '';
  if (!noFinalNewline) lines.pop();
  return { lines, noFinalNewline };
}

export function unifiedDiff(path: string, before: string, after: string, context = 3): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  // A last line that lost or gained its newline differs from its old self.
  const aKeys = a.lines.map((l, i) => (i === a.lines.length - 1 && a.noFinalNewline ? `${l}\0` : l));
  const bKeys = b.lines.map((l, i) => (i === b.lines.length - 1 && b.noFinalNewline ? `${l}\0` : l));
  const ops = diffLines(aKeys, bKeys);
  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (const hunk of hunks(ops, context)) out.push(...hunk);
  return `${out.join('\n')}\n`;
}

function diffLines(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle = shortestEdit(midA, midB) ?? [
    ...midA.map((text): Op => ({ kind: '-', text })),
    ...midB.map((text): Op => ({ kind: '+', text })),
  ];
  const same = (text: string): Op => ({ kind: ' ', text });
  return [...a.slice(0, start).map(same), ...middle, ...a.slice(endA).map(same)];
}

// Myers' O(ND) algorithm; each round keeps only the diagonals it can have reached, for the walk back.
function shortestEdit(a: string[], b: string[]): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  const window = (d: number) => v.slice(offset - d - 1, offset + d + 2);
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    if (d > MAX_EDIT_DISTANCE) return null;
    trace.push(window(d));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const w = trace[d];
    const at = (k: number) => w[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', text: a[--x] });
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', text: b[--y] });
      else ops.push({ kind: '-', text: a[--x] });
    }
  }
  return ops.reverse();
}

function* hunks(ops: Op[], context: number): Generator<string[]> {
  const changed = ops.map((op, i) => (op.kind === ' ' ? -1 : i)).filter((i) => i !== -1);
  let i = 0;
  while (i < changed.length) {
    let last = i;
    while (last + 1 < changed.length && changed[last + 1] - changed[last] <= 2 * context) last++;
    const from = Math.max(0, changed[i] - context);
    const to = Math.min(ops.length, changed[last] + context + 1);
    let oldLine = 1;
    let newLine = 1;
    for (let j = 0; j < from; j++) {
      if (ops[j].kind !== '+') oldLine++;
      if (ops[j].kind !== '-') newLine++;
    }
    const body: string[] = [];
    let oldCount = 0;
    let newCount = 0;
    for (let j = from; j < to; j++) {
      const { kind, text } = ops[j];
      if (kind !== '+') oldCount++;
      if (kind !== '-') newCount++;
      const noNewline = text.endsWith('\0');
      body.push(`${kind}${noNewline ? text.slice(0, -1) : text}`);
      if (noNewline) body.push('\\ No newline at end of file');
    }
    const range = (start: number, count: number) => `${count === 0 ? start - 1 : start}${count === 1 ? '' : `,${count}`}`;
    yield [`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`, ...body];
    i = last + 1;
  }
}

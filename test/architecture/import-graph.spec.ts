import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// The runtime import graph of src/ (type-only imports are erased by the compiler and left out) has no
// cycle. A cycle would mean two rooms that each need the other, the start of dependencies running both ways.
const SRC = path.resolve('src');
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

function runtimeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    // `import { type A, type B } from` is erased too.
    if (/^\s*import\s*\{\s*(?:type\s+[^,}]+,?\s*)+\}\s*from/.test(match[0])) continue;
    found.push(path.resolve(path.dirname(file), match[1].replace(/\.js$/, '.ts')));
  }
  return found;
}

function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === 'done') return null;
    if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe('the import graph of src/', () => {
  it('has no cycle', () => {
    const graph = new Map(sourceFiles(SRC).map((file) => [file, runtimeImports(file)]));
    const cycle = findCycle(graph)?.map((file) => path.relative(SRC, file));
    expect(cycle ?? []).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    expect(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]]))).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b']], ['b', []]]))).toBeNull();
  });
});

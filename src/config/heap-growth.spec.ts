import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The flag changes how V8 sizes the heap, so the check runs in a fresh process with the compiled module:
// V8's GC trace prints the growing factor behind each new old-generation limit.
const run = promisify(execFile);
const compiled = fileURLToPath(new URL('../../dist/config/heap-growth.js', import.meta.url));

async function limitFactorsAfterFullGc(percent: number): Promise<string[]> {
  const script = `const { applyHeapGrowth } = await import(${JSON.stringify(compiled)}); applyHeapGrowth(${percent}); globalThis.gc();`;
  const { stdout } = await run(process.execPath, ['--expose-gc', '--trace-gc-verbose', '--input-type=module', '-e', script], {
    timeout: 15_000,
  });
  return [...stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)$/gm)].map((m) => m[1]);
}

describe('applyHeapGrowth', () => {
  beforeAll(() => {
    if (!existsSync(compiled)) throw new Error('dist/config/heap-growth.js is missing: run `npm run build` before these tests');
  });

  it('makes V8 set the next full GC at 1 + percent/100 of what survived the last one', async () => {
    expect(await limitFactorsAfterFullGc(50)).toEqual(['1.5']);
    expect(await limitFactorsAfterFullGc(25)).toEqual(['1.2']);
  });

  it('leaves V8 its own factor at 0', async () => {
    const factors = await limitFactorsAfterFullGc(0);
    expect(factors).toHaveLength(1);
    expect(factors[0]).not.toBe('1.5');
  });
});

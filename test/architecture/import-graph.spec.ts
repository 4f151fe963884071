import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

// The import rules of src/ live in .dependency-cruiser.cjs (no circle, type-only imports included; no import
// back up a floor); this runs them, so `npm test` fails on a violation and lists each one.
const CONFIG = './.dependency-cruiser.cjs';

async function violations(paths: string[], options: ICruiseOptions, tsConfigFile?: string): Promise<string[]> {
  const transpile = tsConfigFile ? { tsConfig: extractTSConfig(tsConfigFile) } : undefined;
  const { output } = await cruise(paths, options, undefined, transpile);
  return (output as ICruiseResult).summary.violations.map((violation) => {
    const through = violation.cycle?.map((step) => step.name).join(' -> ');
    return `${violation.rule.name}: ${violation.from} -> ${through ?? violation.to}`;
  });
}

describe('the import graph of src/', () => {
  it('keeps every rule of .dependency-cruiser.cjs', async () => {
    const options = await extractDepcruiseOptions(CONFIG);
    expect(await violations(['src'], options, 'tsconfig.json')).toEqual([]);
  }, 120_000);

  it('finds a circle made of a type-only import', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'import-graph-'));
    try {
      writeFileSync(path.join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b?: B }\n");
      writeFileSync(path.join(dir, 'b.ts'), "import { type A } from './a.js';\nexport interface B { a?: A }\n");
      const { ruleSet, ...options } = await extractDepcruiseOptions(CONFIG);
      const noCircular = ruleSet?.forbidden?.filter((rule) => rule.name === 'no-circular');
      // The path is given relative to baseDir: dependency-cruiser resolves the paths it is given from there.
      const found = await violations(['.'], {
        ...options,
        exclude: undefined,
        ruleSet: { forbidden: noCircular },
        validate: true,
        baseDir: dir,
      });
      expect(found).toEqual(['no-circular: a.ts -> b.ts -> a.ts']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

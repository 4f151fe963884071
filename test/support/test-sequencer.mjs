// Jest's own order, except for the size it gives a file whose tests are in parts (`import './x.part.js'`).
// With no timings from an earlier run (a fresh clone), Jest starts the largest files first so that no long
// file starts last and runs alone at the end; a file of a few imports would be taken for the smallest.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import Sequencer from '@jest/test-sequencer';

const PART_IMPORT = /^import '(\.\/[^']+)\.part\.js';$/gm;

export default class PartsSequencer extends Sequencer {
  sort(tests) {
    const sizes = new Map();
    const sizeOf = (file) => {
      if (!sizes.has(file)) {
        const parts = [...readFileSync(file, 'utf8').matchAll(PART_IMPORT)].map((m) => path.resolve(path.dirname(file), `${m[1]}.part.ts`));
        sizes.set(
          file,
          parts.reduce((total, part) => total + statSync(part).size, statSync(file).size),
        );
      }
      return sizes.get(file);
    };
    for (const test of tests) test.duration = this.time(test);
    return tests.sort((a, b) => {
      const [failedA, failedB] = [this.hasFailed(a), this.hasFailed(b)];
      if (failedA !== failedB) return failedA ? -1 : 1;
      // A file with a timing of its own goes after those without, as in Jest's sequencer.
      if ((a.duration != null) !== (b.duration != null)) return a.duration != null ? 1 : -1;
      if (a.duration != null && b.duration != null) return b.duration - a.duration;
      return sizeOf(b.path) - sizeOf(a.path);
    });
  }
}

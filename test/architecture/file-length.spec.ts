import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// No source file of src/ (specs included, the generated Prisma client aside) holds more than 400 lines: a
// file past that holds several concerns, and is split by concern (docs/architecture.md, "Layers").
const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === path.join('src', 'generated') ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

describe('the files of src/', () => {
  it(`hold at most ${MAX_LINES} lines each`, () => {
    const long = sourceFiles('src')
      .map((file) => ({ file, lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});

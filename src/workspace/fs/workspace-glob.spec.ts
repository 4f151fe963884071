import { AppError } from '../../common/errors/app-error.js';
import { compileGlob } from './workspace-glob.js';

const matches = (glob: string, path: string) => compileGlob(glob).matches(path, path.split('/').at(-1)!);

describe('compileGlob', () => {
  it.each([
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['**/*.ts', 'src/a.tsx', false],
    ['*.ts', 'src/deep/a.ts', true],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['src/**', 'src/deep/a.ts', true],
    ['*.{ts,tsx}', 'x/b.tsx', true],
    ['*.{ts,tsx}', 'x/b.js', false],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['[ab].md', 'b.md', true],
    ['[!ab].md', 'b.md', false],
    ['./src/*.ts', 'src/a.ts', true],
    ['a+b(1).txt', 'a+b(1).txt', true],
  ])('%s against %s: %s', (glob, path, expected) => {
    expect(matches(glob, path)).toBe(expected);
  });

  it('refuses an unclosed bracket or brace with a 400 that shows the right form', () => {
    for (const glob of ['[ab', '*.{ts']) {
      let err: unknown;
      try {
        compileGlob(glob);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ status: 400, code: 'invalid_glob', message: expect.stringContaining("'**/*.ts'") });
    }
  });

  it('matches in linear time a glob that would make a backtracking engine explode', () => {
    const started = performance.now();
    expect(matches(`${'*a'.repeat(30)}b`, 'a'.repeat(4000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

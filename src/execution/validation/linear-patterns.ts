import { RE2JS } from 're2js';

// `pattern` and `patternProperties` run on RE2 (linear time in the input): a pattern that would backtrack
// catastrophically on RegExp cannot here, and one that needs backtracking features does not compile.
// Linear is still the text's length times the pattern's program size (`[abc]{999}` is a thousand
// instructions, about 20 s over a megabyte on the main thread), so a text is matched only while that product
// stays within a budget (about 0.1 s); a longer one is refused as too long to check (PatternTooCostly).
const PATTERN_BUDGET = 4_000_000;
export const linearRegExp = Object.assign(
  (pattern: string) => {
    const compiled = RE2JS.compile(pattern);
    const maxLength = Math.floor(PATTERN_BUDGET / programSize(compiled, pattern));
    return {
      test(text: string): boolean {
        if (text.length > maxLength) throw new PatternTooCostly(pattern, text.length, maxLength);
        return compiled.test(text);
      },
      // AJV keeps one compiled pattern per `toString()` of what this returns: it must name the pattern.
      toString: () => `/${pattern}/`,
    };
  },
  { code: 're2js.RE2JS.compile' },
);

// The compiled program's instruction count; the pattern's length if this re2js does not tell.
function programSize(compiled: RE2JS, pattern: string): number {
  const prog = (compiled as unknown as { re2Input?: { prog?: { numInst?: () => number } } }).re2Input?.prog;
  const size = typeof prog?.numInst === 'function' ? prog.numInst() : pattern.length;
  return Math.max(1, size);
}

// Thrown from inside a validator: the caller turns it into the refusal of the value (see tool-validator.ts).
export class PatternTooCostly extends Error {
  constructor(
    readonly pattern: string,
    readonly length: number,
    readonly maxLength: number,
  ) {
    super(
      `a value of ${length} characters is too long to check against the pattern "${pattern.slice(0, 200)}" (at most ${maxLength} characters for it)`,
    );
    this.name = 'PatternTooCostly';
  }
}

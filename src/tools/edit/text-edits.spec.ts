import fc from 'fast-check';
import { ToolError } from '../../execution/tool-error.js';
import { applyTextEdits, usesCrlf } from './text-edits.js';
import { unifiedDiff } from './unified-diff.js';

const failure = (fn: () => unknown): ToolError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error('expected a ToolError');
};

describe('applyTextEdits', () => {
  it('replaces an oldText that occurs exactly once', () => {
    expect(applyTextEdits('a\nb\nc\n', [{ oldText: 'b', newText: 'B' }], 'f.txt').text).toBe('a\nB\nc\n');
  });

  it('applies each edit to the text the previous one left', () => {
    const edited = applyTextEdits(
      'one\ntwo\n',
      [
        { oldText: 'one', newText: 'uno' },
        { oldText: 'uno\ntwo', newText: 'uno\ndos' },
      ],
      'f.txt',
    );
    expect(edited.text).toBe('uno\ndos\n');
  });

  it('refuses an oldText found 0 times, naming the edit and the closest line', () => {
    const text = 'function total(items) {\n  return items.length;\n}\n';
    const err = failure(() =>
      applyTextEdits(
        text,
        [
          { oldText: 'function', newText: 'fn' },
          { oldText: '    return items.size;', newText: 'x' },
        ],
        'src/a.js',
      ),
    );
    expect(err.code).toBe('edit_not_found');
    expect(err.message).toContain('Edit 2 of 2');
    expect(err.message).toContain('occurs 0 times');
    expect(err.message).toContain('after edit 1');
    expect(err.message).toContain('line 2: "  return items.length;"');
    expect(err.message).toContain('No edit was applied');
  });

  it('refuses an oldText found twice with the count, and says to add surrounding lines', () => {
    const err = failure(() => applyTextEdits('x = 1\nx = 1\n', [{ oldText: 'x = 1', newText: 'x = 2' }], 'f.py'));
    expect(err.code).toBe('edit_not_unique');
    expect(err.message).toMatch(/occurs 2 times in 'f.py'; it must occur exactly once. Include more of the surrounding lines/);
  });

  it('counts overlapping occurrences as ambiguous', () => {
    expect(failure(() => applyTextEdits('aaa', [{ oldText: 'aa', newText: 'b' }], 'f')).message).toContain('occurs 2 times');
  });

  it('says when nothing similar exists', () => {
    expect(failure(() => applyTextEdits('alpha\n', [{ oldText: 'zzzz qqqq', newText: '' }], 'f')).message).toMatch(/Nothing similar/);
  });

  it('edits a CRLF file with LF oldText and keeps its CRLF endings', () => {
    const text = 'one\r\ntwo\r\nthree\r\n';
    expect(usesCrlf(text)).toBe(true);
    const edited = applyTextEdits(text, [{ oldText: 'one\ntwo', newText: 'one\n2\nextra' }], 'f');
    expect(edited.text).toBe('one\r\n2\r\nextra\r\nthree\r\n');
    expect(applyTextEdits(text, [{ oldText: 'two\r\n', newText: 'TWO\r\n' }], 'f').text).toBe('one\r\nTWO\r\nthree\r\n');
  });

  it('matches a file of mixed endings as it is', () => {
    const text = 'a\r\nb\nc\r\n';
    expect(usesCrlf(text)).toBe(false);
    expect(applyTextEdits(text, [{ oldText: 'b\nc', newText: 'B\nC' }], 'f').text).toBe('a\r\nB\nC\r\n');
  });

  it('keeps a missing final newline', () => {
    expect(applyTextEdits('first\nlast', [{ oldText: 'first', newText: 'First' }], 'f').text).toBe('First\nlast');
  });
});

// Applies a unified diff to `before` (texts whose lines all end in a newline): the diff is right if this
// gives `after` back.
function applyDiff(before: string, diff: string): string {
  if (diff === '') return before;
  const old = before === '' ? [] : before.replace(/\n$/, '').split('\n');
  const out: string[] = [];
  let at = 0;
  let finalNewline = true;
  const lines = diff.replace(/\n$/, '').split('\n').slice(2);
  for (const line of lines) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@$/.exec(line);
    if (hunk) {
      const start = Number(hunk[1]) - (hunk[2] === '0' ? 0 : 1);
      while (at < start) out.push(old[at++]);
      continue;
    }
    if (line === '\\ No newline at end of file') {
      finalNewline = false;
      continue;
    }
    if (line[0] === ' ') out.push(old[at++]);
    else if (line[0] === '-') at++;
    else out.push(line.slice(1));
  }
  while (at < old.length) out.push(old[at++]);
  return out.length ? `${out.join('\n')}${finalNewline ? '\n' : ''}` : '';
}

describe('unifiedDiff', () => {
  it('prints one hunk with three lines of context and the line numbers', () => {
    const before = Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n') + '\n';
    const after = before.replace('l5\n', 'five\n');
    expect(unifiedDiff('a.txt', before, after)).toBe(
      ['--- a/a.txt', '+++ b/a.txt', '@@ -2,7 +2,7 @@', ' l2', ' l3', ' l4', '-l5', '+five', ' l6', ' l7', ' l8', ''].join('\n'),
    );
  });

  it('marks a last line without a newline', () => {
    expect(unifiedDiff('a', 'x\ny', 'x\nz')).toBe(
      ['--- a/a', '+++ b/a', '@@ -1,2 +1,2 @@', ' x', '-y', '\\ No newline at end of file', '+z', '\\ No newline at end of file', ''].join(
        '\n',
      ),
    );
  });

  it('is empty when nothing changed', () => {
    expect(unifiedDiff('a', 'same\n', 'same\n')).toBe('');
  });

  it('gives a diff that turns the old text into the new one, for any texts of ending lines', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 30 })
      .map((lines) => (lines.length ? `${lines.join('\n')}\n` : ''));
    fc.assert(
      fc.property(text, text, (before, after) => {
        expect(applyDiff(before, unifiedDiff('f', before, after))).toBe(after);
      }),
      { numRuns: 300 },
    );
  });
});

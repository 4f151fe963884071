import { createToolAjv, JSON_SCHEMA_2020_12 } from './ajv-factory.js';
import { linearRegExp, PatternTooCostly } from './linear-patterns.js';

describe('patterns on the linear-time engine', () => {
  it('keeps each pattern its own in one Ajv instance, in both dialects (AJV caches them by their text)', () => {
    for (const dialect of [{}, { $schema: JSON_SCHEMA_2020_12 }]) {
      const ajv = createToolAjv({ regExp: linearRegExp });
      const first = ajv.compile({ ...dialect, type: 'object', properties: { a: { type: 'string', pattern: '^x+$' } } });
      const second = ajv.compile({
        ...dialect,
        type: 'object',
        properties: { a: { type: 'string', pattern: '^(a+)+$' }, b: { type: 'string', pattern: '^[0-9]+$' } },
      });
      expect([first({ a: 'xx' }), first({ a: 'ab' })]).toEqual([true, false]);
      expect([second({ a: 'aaa', b: '12' }), second({ a: `${'a'.repeat(50)}!` }), second({ b: 'x' })]).toEqual([true, false, false]);
    }
  });

  it('refuses to match a text whose length times the pattern’s program size is past the budget', () => {
    const small = linearRegExp('^[a-z]+$');
    expect(small.test('a'.repeat(100_000))).toBe(true);
    const large = linearRegExp('[abc]*a[abc]{999}c$');
    expect(() => large.test('a'.repeat(100_000))).toThrow(PatternTooCostly);
    expect(large.test(`a${'b'.repeat(999)}c`)).toBe(true);
  });
});

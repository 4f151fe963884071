import { templateMatches } from './uri-template-match.js';

describe('templateMatches', () => {
  it('matches a simple expression to one path segment, and only that', () => {
    expect(templateMatches('test://template/{id}/data', 'test://template/123/data')).toBe(true);
    expect(templateMatches('test://template/{id}/data', 'test://template/1/2/data')).toBe(false);
    expect(templateMatches('test://template/{id}/data', 'test://template//data')).toBe(false);
    expect(templateMatches('test://template/{id}/data', 'test://template/123/data/more')).toBe(false);
  });

  it('lets a reserved expression span segments, and a query expression be absent', () => {
    expect(templateMatches('repo://{+path}', 'repo://src/a/b.ts')).toBe(true);
    expect(templateMatches('search://items{?q,page}', 'search://items')).toBe(true);
    expect(templateMatches('search://items{?q,page}', 'search://items?q=a&page=2')).toBe(true);
    expect(templateMatches('doc://{a}-{b}', 'doc://x-y-z')).toBe(true);
    expect(templateMatches('doc://{a}-{b}', 'doc://xyz')).toBe(false);
  });

  it('refuses a malformed or oversized template instead of matching everything', () => {
    expect(templateMatches('test://{unclosed', 'test://{unclosed')).toBe(false);
    expect(templateMatches('test://{a b}', 'test://x')).toBe(false);
    expect(templateMatches(`test://${'{a}'.repeat(33)}`, 'test://x')).toBe(false);
  });

  // A regex built from this template backtracks for longer than any test runs; the walk takes milliseconds.
  it('answers a hostile template on a long URI that does not match in linear time', () => {
    const template = `evil://${Array.from({ length: 30 }, (_, i) => `{v${i}}`).join('-')}!`;
    const uri = `evil://${'a-'.repeat(2000)}`;
    const started = process.hrtime.bigint();
    expect(templateMatches(template, uri)).toBe(false);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2_000);
  });
});

import { TtlLruCache } from './ttl-lru-cache.js';

describe('TtlLruCache', () => {
  it('forgets an entry once its time to live has passed', () => {
    let now = 0;
    const cache = new TtlLruCache<string, number>(100, 10, () => now);
    cache.set('a', 1);
    now = 99;
    expect(cache.get('a')).toBe(1);
    now = 100;
    expect(cache.get('a')).toBeUndefined();
  });

  it('evicts the least recently used entry when full', () => {
    const cache = new TtlLruCache<string, number>(10_000, 2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    expect(cache.size).toBe(2);
  });

  it('stores nothing when the time to live is zero', () => {
    const cache = new TtlLruCache<string, number>(0, 10);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });

  it('counts hits, and misses for absent and expired entries (read by the metrics)', () => {
    let now = 0;
    const cache = new TtlLruCache<string, number>(100, 10, () => now);
    cache.get('a');
    cache.set('a', 1);
    cache.get('a');
    cache.get('a');
    now = 100;
    cache.get('a');
    expect({ hits: cache.hits, misses: cache.misses }).toEqual({ hits: 2, misses: 2 });
  });

  it('does not store a value loaded across a delete, a deleteWhere or a clear (it may be the old one)', () => {
    const cache = new TtlLruCache<string, number>(10_000, 10);
    for (const invalidate of [() => cache.delete('a'), () => cache.deleteWhere(() => false), () => cache.clear()]) {
      const version = cache.version;
      invalidate();
      cache.setIfUnchanged(version, 'a', 1);
      expect(cache.get('a')).toBeUndefined();
    }
    const version = cache.version;
    cache.set('other', 2); // storing is not an invalidation
    cache.setIfUnchanged(version, 'a', 1);
    expect(cache.get('a')).toBe(1);
  });
});

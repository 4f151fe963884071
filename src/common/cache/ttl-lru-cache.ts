// A bounded map whose entries expire: the least recently used entry goes first when it is full.
// Map iteration order is insertion order, so re-inserting on read keeps the oldest entry first.
export class TtlLruCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  // Lookups answered and not (absent or expired), read by the metrics when scraped.
  hits = 0;
  misses = 0;
  // Bumped by every delete and clear. A caller that loads a value across an await reads `version` first and
  // stores with setIfUnchanged: a load that overlapped an invalidation may hold the old value, so it is
  // answered but not cached (it would otherwise hide the change until the TTL).
  private invalidations = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      this.misses++;
      return undefined;
    }
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) {
      this.misses++;
      return undefined;
    }
    this.entries.set(key, entry);
    this.hits++;
    return entry.value;
  }

  // Whether a live entry is held, without counting a lookup or making it recent.
  holds(key: K): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.expiresAt > this.now();
  }

  set(key: K, value: V): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  get version(): number {
    return this.invalidations;
  }

  setIfUnchanged(version: number, key: K, value: V): void {
    if (version === this.invalidations) this.set(key, value);
  }

  delete(key: K): void {
    this.invalidations++;
    this.entries.delete(key);
  }

  deleteWhere(predicate: (value: V, key: K) => boolean): void {
    this.invalidations++;
    for (const [key, entry] of this.entries) if (predicate(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.invalidations++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

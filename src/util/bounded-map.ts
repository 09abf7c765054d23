/**
 * A Map of at most `max` entries that starts over when full. For memos of hot keys (routes of
 * internal URIs, a bucket's handle, a tid's date) it costs a plain Map's lookup, where an LRU's
 * bookkeeping cost about as much as what it saved; a key evicted early is only made again.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.clear();
    return super.set(key, value);
  }

  /** The value kept for `key`, made by `make` and kept if there is none. */
  remember(key: K, make: () => V): V {
    let value = this.get(key);
    if (value === undefined) this.set(key, (value = make()));
    return value;
  }
}

/**
 * Admits a key the second time it is offered among the last `remembered` keys offered once (the
 * doorkeeper of TinyLFU): what a cache keeps only when asked for again soon, so a scan whose keys
 * come back further apart than that keeps nothing.
 */
export class SecondSight {
  /**
   * Keys by a 32-bit hash: small integers, which a Map holds without an object each. Kept as the
   * strings, the keys of reads spread wide (a query each) lived long enough to be promoted and then
   * collected with the old generation. Two keys of one hash admit each other once: a cache entry
   * made a read early.
   */
  private readonly seen: BoundedMap<number, true>;

  constructor(remembered: number) {
    this.seen = new BoundedMap(remembered);
  }

  /** True the second time `key` comes (it is then forgotten); false, and remembered, the first. */
  admits(key: string): boolean {
    const hash = fnv1a(key);
    if (this.seen.delete(hash)) return true;
    this.seen.set(hash, true);
    return false;
  }

  /** Whether `key` would be admitted now, without counting this as its coming. */
  wouldAdmit(key: string): boolean {
    return this.seen.has(fnv1a(key));
  }

  /** Counts `key` as seen once: the next time it comes, it is admitted. */
  note(key: string): void {
    this.seen.set(fnv1a(key), true);
  }
}

/** FNV-1a over a string's UTF-16 code units, to 30 bits: a small integer in V8, held without an object. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 2;
}

/**
 * lru-cache options bounding a cache to `entries` entries without allocating for them up front:
 * its `max` fills arrays of that length when the cache is made, which for the caches of a few
 * hundred thousand entries here cost start-up time and memory before any entry was kept.
 */
export function atMostEntries(entries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: entries, sizeCalculation: () => 1 };
}

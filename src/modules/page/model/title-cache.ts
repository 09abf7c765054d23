import { LRUCache } from 'lru-cache';

let generations = 0;

/**
 * Rows of a page kept in memory for a short time, so a stored read costs no storage query.
 * Every write of this process to a page bumps the page's generation, which drops all its entries
 * at once; the time limit bounds how long another process's writes can go unseen.
 */
export class TitleCache<V> {
  private readonly entries: LRUCache<string, { gen: number; value: V }>;
  private readonly gens: LRUCache<string, number>;

  /** Bounded in bytes: titles are client text. `valueBytes` estimates one value's size. */
  constructor(ttlMs: number, maxBytes = 8 * 1024 * 1024, valueBytes = 1024) {
    this.entries = new LRUCache({ maxSize: maxBytes, sizeCalculation: (_v, key) => 2 * key.length + valueBytes, ttl: Math.max(1, ttlMs) });
    this.gens = new LRUCache({ maxSize: maxBytes / 4, sizeCalculation: (_v, key) => 2 * key.length + 64 });
  }

  /** The page's current generation; take it before a read, hand it to `set` after. */
  generation(title: string): number {
    let gen = this.gens.get(title);
    if (gen === undefined) this.gens.set(title, (gen = ++generations));
    return gen;
  }

  /** Whether the page has not been written (by this process) since `generation` gave `gen`. */
  unchangedSince(title: string, gen: number): boolean {
    return this.gens.get(title) === gen;
  }

  get(title: string, sub: string): V | undefined {
    const entry = this.entries.get(`${title}\u0000${sub}`);
    return entry && entry.gen === this.gens.get(title) ? entry.value : undefined;
  }

  /** Keeps a value read under generation `gen`; if the page was written since, it is not kept. */
  set(title: string, sub: string, value: V, gen: number): void {
    if (gen === this.gens.get(title)) this.entries.set(`${title}\u0000${sub}`, { gen, value });
  }

  invalidate(title: string): void {
    this.gens.set(title, ++generations);
  }
}

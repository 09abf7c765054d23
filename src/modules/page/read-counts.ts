import { LRUCache } from 'lru-cache';

/** Titles whose reads are counted, per process: the most-read of them, recently. */
const TRACKED_TITLES = 100_000;

/**
 * How often each page has been read here lately, to do the most-read pages' work first (pages
 * re-rendered because a template changed). An approximation by design: per process, bounded,
 * and a page not read for a while drops out.
 */
export class ReadCounts {
  private readonly counts = new LRUCache<string, number>({ max: TRACKED_TITLES });

  note(domain: string, title: string): void {
    const key = `${domain}\u0000${title}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  of(domain: string, title: string): number {
    return this.counts.peek(`${domain}\u0000${title}`) ?? 0;
  }
}

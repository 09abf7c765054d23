import { BoundedMap } from '../../../util/bounded-map.js';

/** How long an early answer waits for its render to claim it once it has arrived. */
const UNCLAIMED_AFTER_MS = 5_000;
/** Early fetches in flight or waiting at once, at most (each may hold a large page bundle). */
const MAX_WAITING = 64;

/**
 * Upstream answers asked for before the caller knows it needs them: a revision's render requested
 * from Parsoid beside the question of its metadata, so a cold miss by revision id waits for the
 * slower of the two instead of both in a row. The render claims the answer by domain, title and
 * revision. One never claimed (the revision belongs to another page, or is hidden) is dropped, and
 * its revision is not fetched early again: a client naming revisions under the wrong titles cannot
 * make the wiki render more than reading them under the right ones would.
 */
export class EarlyFetches<T> {
  private readonly waiting = new Map<string, Promise<T>>();
  private readonly unclaimed = new BoundedMap<string, true>(10_000);

  /** Starts `fetch` for the revision unless it is under way, or went unclaimed before. */
  start(domain: string, title: string, rev: number, fetch: () => Promise<T>): void {
    const key = keyOf(domain, title, rev);
    const revKey = `${domain}\u0000${rev}`;
    if (this.waiting.has(key) || this.unclaimed.has(revKey) || this.waiting.size >= MAX_WAITING) return;
    const fetched = fetch();
    this.waiting.set(key, fetched);
    const expire = () => {
      setTimeout(() => {
        if (this.waiting.get(key) !== fetched) return;
        this.waiting.delete(key);
        this.unclaimed.set(revKey, true);
      }, UNCLAIMED_AFTER_MS).unref();
    };
    // Settled either way: a failure is the claimer's to see, never an unhandled rejection.
    fetched.then(expire, expire);
  }

  /** The early answer for the revision, taken out (each is claimed once), if one was started. */
  claim(domain: string, title: string, rev: number): Promise<T> | undefined {
    const key = keyOf(domain, title, rev);
    const fetched = this.waiting.get(key);
    if (fetched) this.waiting.delete(key);
    return fetched;
  }

  /** Early fetches in flight or waiting for their render. */
  get size(): number {
    return this.waiting.size;
  }
}

const keyOf = (domain: string, title: string, rev: number) => `${domain}\u0000${title}\u0000${rev}`;

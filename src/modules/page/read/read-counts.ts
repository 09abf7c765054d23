import { LRUCache } from 'lru-cache';
import { atMostEntries } from '../../../util/bounded-map.js';

/** Titles whose reads are counted, per process: the most-read of them, recently. */
const TRACKED_TITLES = 100_000;

/** One key per page whichever form its title comes in: reads note stored titles, the follower asks with the API's. */
const keyOf = (domain: string, title: string) => `${domain}\u0000${title.replaceAll(' ', '_')}`;

/**
 * How often each page has been read here lately, to do the most-read pages' work first (pages
 * re-rendered because a template changed). An approximation by design: per process, bounded,
 * and a page not read for a while drops out.
 */
export class ReadCounts {
  private readonly counts = new LRUCache<string, number>(atMostEntries(TRACKED_TITLES));

  note(domain: string, title: string): void {
    this.noteKey(keyOf(domain, title));
  }

  /** `note` for one page, its key made once: for an answer sent again many times. */
  noter(domain: string, title: string): () => void {
    const key = keyOf(domain, title);
    return () => this.noteKey(key);
  }

  private noteKey(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  /** `title` in either form: as stored (underscores) or as the wiki's API lists it (spaces). */
  of(domain: string, title: string): number {
    return this.counts.peek(keyOf(domain, title)) ?? 0;
  }
}

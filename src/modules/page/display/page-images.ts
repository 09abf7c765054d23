import { LRUCache } from 'lru-cache';
import { atMostEntries } from '../../../util/bounded-map.js';
import type { Logger } from 'pino';
import { isUnavailable } from '../../../upstream/wiki.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';

/** A page's image is asked again after this long even if no edit of the page was seen. */
const MAX_AGE_MS = 3600_000;

/** The image each page stands for (PageImages), asked of the wiki once and kept until the page changes. */
export class PageImages {
  private readonly known = new LRUCache<string, { file: string | undefined }>({ ...atMostEntries(100_000), ttl: MAX_AGE_MS });

  constructor(private readonly wikis: WikiDirectory, private readonly log: Logger) {}

  async of(domain: string, title: string): Promise<string | undefined> {
    const key = `${domain}\u0000${title}`;
    const hit = this.known.get(key);
    if (hit) return hit.file;
    try {
      const file = await this.wikis.of(domain).api.pageImage(title);
      this.known.set(key, { file });
      return file;
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      this.log.debug({ err, domain, title }, "a page's image could not be asked: the wiki is unreachable");
      return undefined;
    }
  }

  /** The page changed: its image is asked again. */
  forget(domain: string, title: string): void {
    this.known.delete(`${domain}\u0000${title}`);
  }
}

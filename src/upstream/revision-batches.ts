import DataLoader from 'dataloader';
import { BoundedMap } from '../util/bounded-map.js';
import { HttpError } from '../util/errors.js';
import { VALUES_PER_QUERY, type ActionApi, type ApiPage } from './action-api.js';

/** Queries of one kind to one wiki under way at once; what is asked meanwhile waits for one and goes together. */
const QUERIES_AT_ONCE = 2;
/** Keys of one wiki asked and not yet answered beyond which more are refused, as the wiki's own queue refuses. */
const MOST_WAITING = 1024;

/**
 * Questions to a wiki asked together, up to 50 a query (`revids=a|b|…`, `titles=a|b|…`), as a
 * database commits in groups: a key asked while the wiki is idle goes at once, alone; those asked
 * while `QUERIES_AT_ONCE` queries are under way wait for one to end and go together, so a wiki
 * answering in L ms answers up to 100 keys per L ms, and nobody waits for a batch to fill.
 */
class WikiBatches<K, V> {
  private readonly wikis = new BoundedMap<string, OneWiki<K, V>>(1024);

  constructor(private readonly ask: (domain: string, keys: readonly K[]) => Promise<Map<K, V>>, private readonly what: string) {}

  /** The wiki's answer for `key`, or undefined if its answer left it out. */
  get(domain: string, key: K): Promise<V | undefined> {
    return this.wikis.remember(domain, () => new OneWiki((keys) => this.ask(domain, keys), this.what)).get(key);
  }
}

class OneWiki<K, V> {
  private underWay = 0;
  /** Keys asked and not yet answered. */
  private asked = 0;
  /** Batches waiting for a query to end (one gathering; more once each is full), in order. */
  private readonly waiting: (() => void)[] = [];
  private readonly loader: DataLoader<K, V | undefined, K>;

  constructor(ask: (keys: readonly K[]) => Promise<Map<K, V>>, private readonly what: string) {
    this.loader = new DataLoader(
      async (keys) => {
        this.underWay++;
        try {
          const answers = await ask(keys);
          return keys.map((key) => answers.get(key));
        } finally {
          this.underWay--;
          this.waiting.shift()?.();
        }
      },
      {
        cache: false,
        maxBatchSize: VALUES_PER_QUERY,
        // With a query free, after this turn's I/O (every request read in it joins); else once one ends.
        batchScheduleFn: (run) => {
          if (this.underWay < QUERIES_AT_ONCE) setImmediate(run);
          else this.waiting.push(run);
        },
      },
    );
  }

  async get(key: K): Promise<V | undefined> {
    // A wiki that answers slower than it is asked would otherwise gather batches without end.
    if (this.asked >= MOST_WAITING) throw new HttpError(503, 'upstream-busy', `More than ${MOST_WAITING} ${this.what} wait to be asked of the wiki.`, { headers: { 'retry-after': '5' } });
    this.asked++;
    try {
      return await this.loader.load(key);
    } finally {
      this.asked--;
    }
  }
}

/**
 * Revisions described by the wiki in batches, as a stored revision is checked again before it is
 * served (its text or user may have been hidden, its page deleted). Reads of old revisions are each
 * a check once the last one is older than the recheck interval: one query per revision made the
 * wiki's request budget and its round trip the limit of every such read.
 */
export class RevisionBatches {
  private readonly batches: WikiBatches<number, ApiPage>;

  constructor(api: (domain: string) => ActionApi) {
    this.batches = new WikiBatches((domain, revids) => api(domain).revisions(revids), 'revisions');
  }

  /** The revision as the wiki describes it (its page with that revision alone), or undefined if the wiki has it not. */
  describe(domain: string, revid: number): Promise<ApiPage | undefined> {
    return this.batches.get(domain, revid);
  }
}

/** A page as the wiki described it, and when it was asked. */
export interface PageAnswer {
  page: ApiPage;
  askedAt: number;
}

/**
 * Pages' latest revisions asked of the wiki in batches: the checks of a stored page's latest
 * revision made after its reader was answered from storage, one a page read once its last check is
 * older than the latest-check interval. Asked one query a page, a wiki's pages read across an hour
 * cost as many requests, out of the request budget its cold renders wait on.
 */
export class LatestBatches {
  private readonly batches: WikiBatches<string, PageAnswer>;

  constructor(api: (domain: string) => ActionApi) {
    this.batches = new WikiBatches(async (domain, titles) => {
      const askedAt = Date.now();
      const pages = await api(domain).pages([...titles]);
      return new Map([...pages].map(([title, page]) => [title, { page, askedAt }]));
    }, 'pages');
  }

  /** The page by the title asked, with its newest revision; undefined if the answer left it out (asked alone then). */
  latest(domain: string, title: string): Promise<PageAnswer | undefined> {
    return this.batches.get(domain, title);
  }
}

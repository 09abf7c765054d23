import DataLoader from 'dataloader';
import { BoundedMap } from '../util/bounded-map.js';
import { HttpError } from '../util/errors.js';
import { REVISIONS_PER_QUERY, type ActionApi, type ApiPage } from './action-api.js';

/** Queries of one wiki's revisions under way at once; revisions asked meanwhile wait for one and go together. */
const QUERIES_AT_ONCE = 2;
/** Revisions of one wiki asked and not yet answered beyond which more are refused, as the wiki's own queue refuses. */
const MOST_WAITING = 1024;

/**
 * Revisions described by the wiki in batches (`revids=a|b|…`, up to 50 a query), as a stored
 * revision is checked again before it is served (its text or user may have been hidden, its page
 * deleted). Reads of old revisions are each a check once the last one is older than the recheck
 * interval: one query per revision made the wiki's request budget and its round trip the limit of
 * every such read. Batched as a database commits in groups: a revision asked while the wiki is
 * idle goes at once, alone; those asked while `QUERIES_AT_ONCE` queries are under way wait for one
 * to end and go together, so a wiki answering in L ms checks up to 100 revisions per L ms.
 */
export class RevisionBatches {
  private readonly wikis = new BoundedMap<string, WikiRevisionBatches>(1024);

  constructor(private readonly api: (domain: string) => ActionApi) {}

  /** The revision as the wiki describes it (its page with that revision alone), or undefined if the wiki has it not. */
  describe(domain: string, revid: number): Promise<ApiPage | undefined> {
    return this.wikis.remember(domain, () => new WikiRevisionBatches(() => this.api(domain))).describe(revid);
  }
}

class WikiRevisionBatches {
  private underWay = 0;
  /** Revisions asked and not yet answered. */
  private asked = 0;
  /** Batches waiting for a query to end (one gathering; more once each is full), in order. */
  private readonly waiting: (() => void)[] = [];
  private readonly loader: DataLoader<number, ApiPage | undefined, number>;

  constructor(api: () => ActionApi) {
    this.loader = new DataLoader(
      async (revids) => {
        this.underWay++;
        try {
          const pages = await api().revisions(revids);
          return revids.map((revid) => pages.get(revid));
        } finally {
          this.underWay--;
          this.waiting.shift()?.();
        }
      },
      {
        cache: false,
        maxBatchSize: REVISIONS_PER_QUERY,
        // With a query free, after this turn's I/O (every request read in it joins); else once one ends.
        batchScheduleFn: (run) => {
          if (this.underWay < QUERIES_AT_ONCE) setImmediate(run);
          else this.waiting.push(run);
        },
      },
    );
  }

  async describe(revid: number): Promise<ApiPage | undefined> {
    // A wiki that answers slower than it is asked would otherwise gather batches without end.
    if (this.asked >= MOST_WAITING) throw new HttpError(503, 'upstream-busy', `More than ${MOST_WAITING} revisions wait to be asked of the wiki.`, { headers: { 'retry-after': '5' } });
    this.asked++;
    try {
      return await this.loader.load(revid);
    } finally {
      this.asked--;
    }
  }
}

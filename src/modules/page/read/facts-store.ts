import DataLoader from 'dataloader';
import { HttpError } from '../../../util/errors.js';
import type { Logger } from 'pino';
import type { RequestContext } from '../../../router/types.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { BoundedMap } from '../../../util/bounded-map.js';
import type { RevisionRow } from '../model/revision.js';
import { PageFactsTable } from '../tables/page-facts.js';
import { askFacts, FACTS_BATCH, FACTS_ENDPOINT, type FactsRequest, type PageFacts } from '../../../upstream/page-facts.js';

/** How long a reader's request for facts waits for others to join its batch. */
const BATCH_WAIT_MS = 3;
/**
 * How long facts asked as renders are stored wait for others: nobody waits for them, and a
 * backfill or a busy follower stores a few dozen renders a second, so that a batch is full.
 */
const BACKGROUND_WAIT_MS = 5_000;

/** What a revision asks facts for: its page, its editor (if registered and visible) and its parent. */
export function factsRequest(row: RevisionRow): FactsRequest {
  return {
    title: row.title,
    rev: row.rev,
    ...(row.parent_id ? { parent: row.parent_id } : {}),
    ...(row.user_id && !row.user_hidden && row.user_text ? { user: row.user_text } : {}),
    ...(row.timestamp ? { timestamp: row.timestamp } : {}),
  };
}

/**
 * Pages' facts (page-facts.ts): stored, else asked of the wiki, the requests of every reader in a
 * few milliseconds gathered into batches of 50 (a snapshot's pages, a farm's renders, on-demand
 * readers at once), and stored. Facts asked for another revision than the stored ones are asked
 * anew; the change path marks a page's stale (`changed`).
 */
export class PageFactsStore {
  private readonly tables = new BoundedMap<string, PageFactsTable>(1024);
  private readonly loaders = new BoundedMap<string, DataLoader<FactsRequest, PageFacts | undefined, string>>(1024);
  private readonly background = new BoundedMap<string, DataLoader<FactsRequest, PageFacts | undefined, string>>(1024);
  /** Batches waiting for their time, each sent at once by calling it (at close). */
  private readonly waiting = new Set<() => void>();
  /** Facts being asked for renders stored: waited for at close. */
  private readonly refreshing = new Set<Promise<void>>();
  /** Flushes under way: batches are sent at once meanwhile. */
  private flushing = 0;

  constructor(private readonly wiki: (domain: string) => Wiki, private readonly log: Logger) {}

  table(domain: string): PageFactsTable {
    return this.tables.remember(domain, () => new PageFactsTable(domain));
  }

  create(ctx: RequestContext, domain: string): Promise<void> {
    return this.table(domain).create(ctx);
  }

  /**
   * Batches of a wiki's requests for facts: a reader's (a few milliseconds, the creation time
   * asked where it is not known), or those of renders being stored (`background`: seconds, the
   * creation time left to the first reader).
   */
  private loader(domain: string, background = false): DataLoader<FactsRequest, PageFacts | undefined, string> {
    return (background ? this.background : this.loaders).remember(domain, () => new DataLoader(async (requests: readonly FactsRequest[]) => {
      const facts = await askFacts(this.wiki(domain).api, [...requests], { askCreated: !background, background });
      return requests.map((r) => facts.get(r.title));
    }, { cache: false, maxBatchSize: FACTS_BATCH, batchScheduleFn: (run) => this.schedule(run, background ? BACKGROUND_WAIT_MS : BATCH_WAIT_MS) }));
  }

  private schedule(run: () => void, wait: number): void {
    const ms = this.flushing ? 0 : wait;
    const go = () => {
      clearTimeout(timer);
      this.waiting.delete(go);
      run();
    };
    const timer = setTimeout(go, ms);
    timer.unref();
    this.waiting.add(go);
  }

  /**
   * The facts of a revision: stored if asked for it and not made stale since; else (`ask`) asked
   * of the wiki and stored, unless the page has moved on from it since (the wiki's lists are then
   * another revision's: those stored for it stay). Without `ask` (a snapshot from storage alone),
   * as stored, or none.
   */
  async of(ctx: RequestContext, domain: string, row: RevisionRow, { ask, background = false }: { ask: boolean; background?: boolean }): Promise<PageFacts | undefined> {
    const table = this.table(domain);
    const stored = await table.get(ctx, row.title, row.rev);
    // A reader asks once for the creation time the render's batch left out ('' once asked and not given).
    const lacking = stored && stored.created === undefined && !background;
    if (stored && !stored.stale && !(ask && lacking)) return stored;
    if (!ask) return stored;
    const newest = stored ?? (await table.get(ctx, row.title));
    const asked = await this.loader(domain, background).load({ ...factsRequest(row), ...(newest?.created !== undefined ? { created: newest.created } : {}) });
    if (!asked) return stored;
    const created = asked.created ?? (background ? undefined : '');
    if (asked.latest !== row.rev && stored) {
      // The page has moved on: its lists are another revision's. What never changes is kept, so
      // that this revision's readers do not ask again.
      if (stored.created !== undefined || created === undefined) return stored;
      const kept = { ...stored, created };
      await table.put(ctx, row.title, kept);
      return kept;
    }
    const facts = created === undefined ? asked : { ...asked, created };
    await table.put(ctx, row.title, facts);
    return facts;
  }

  /** Asks a revision's facts and stores them, as its render is stored (a failure is logged: the next record asks). */
  refresh(ctx: RequestContext, domain: string, row: RevisionRow): Promise<void> {
    const asking = this.of(ctx, domain, row, { ask: true, background: true }).then(
      () => undefined,
      (err: unknown) => this.log.warn({ err, domain, title: row.title }, 'asking a page\'s Enterprise facts failed; its next record asks again'),
    ).finally(() => this.refreshing.delete(asking));
    this.refreshing.add(asking);
    return asking;
  }

  /**
   * The batches waiting are sent now, and their facts stored (at the process's end, and by
   * `PageService.drain`); batches made meanwhile are sent at once.
   */
  async flush(): Promise<void> {
    this.flushing++;
    try {
      while (this.refreshing.size) {
        for (const go of [...this.waiting]) go();
        await Promise.all([...this.refreshing]);
      }
    } finally {
      this.flushing--;
    }
  }

  /**
   * Pages the wiki changed: their facts and those of the pages they redirected to, before and now,
   * marked stale (kept: what never changes, the creation time, is not asked again). Returns the
   * other pages whose records changed with them (redirect targets).
   */
  async changed(ctx: RequestContext, domain: string, titles: string[]): Promise<string[]> {
    const table = this.table(domain);
    const others = new Set<string>();
    // The newest facts of each page: those of an earlier revision stay as the wiki gave them then.
    const stale = async (title: string) => {
      const stored = await table.get(ctx, title);
      if (stored && !stored.stale) await table.put(ctx, title, { ...stored, stale: true });
      return stored;
    };
    const before = await Promise.all(titles.map(stale));
    for (const facts of before) if (facts?.redirectTo) others.add(facts.redirectTo);
    // Where the pages redirect now: one request for up to 50. The wiki not answering costs the
    // targets their notice, not the change its application (the next record of a target asks anew
    // once its own facts go stale).
    try {
      for (let i = 0; i < titles.length; i += FACTS_BATCH) {
        const { redirects } = await this.wiki(domain).api.queryPages({ action: 'query', prop: 'info', redirects: '1', titles: titles.slice(i, i + FACTS_BATCH).join('|') }, { maxRequests: 1, endpoint: FACTS_ENDPOINT, background: true });
        for (const { from, to } of redirects) {
          others.add(to.replace(/ /g, '_'));
          const own = await table.get(ctx, from.replace(/ /g, '_'));
          // Remembered (with no facts of a revision of its own: rev 0) so that the target it leaves is told too.
          await table.put(ctx, from.replace(/ /g, '_'), { ...(own ?? noFacts()), stale: true, redirectTo: to.replace(/ /g, '_') });
        }
      }
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      this.log.warn({ err, domain }, 'asking where changed pages redirect failed; their targets\' records are not marked');
    }
    const changed = new Set(titles);
    const targets = [...others].filter((t) => !changed.has(t));
    await Promise.all(targets.map(stale));
    return targets;
  }
}

const noFacts = (): PageFacts => ({ rev: 0, latest: 0, asked: new Date(0).toISOString(), categories: [], templates: [], redirects: [], protection: [] });

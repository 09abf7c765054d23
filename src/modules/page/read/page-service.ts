import type { Logger } from 'pino';
import type { RequestContext } from '../../../router/types.js';
import type { CachePurger } from '../../../upstream/cache-purger.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { SingleFlight } from '../model/single-flight.js';
import { RenderStore } from '../tables/render-store.js';
import { StoredSiteInfo } from '../tables/stored-site-info.js';
import { ChangeLogs } from '../tables/change-log.js';
import { KnownRevisions } from './known-revisions.js';
import type { PageCaches } from './page-caches.js';
import { PageListings } from './page-listings.js';
import { ReadCounts } from './read-counts.js';
import { Renderer, type LatestRenderStored } from './renderer.js';
import { PageFactsStore } from './facts-store.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';

/**
 * Page content on top of storage, in its parts: the revisions known and kept in step with the
 * wiki, their renders (made once on a miss), listings of what is stored, and what is read most.
 * Built once (page/index.ts); each part of the page module takes only the ones it uses, declared
 * as a `Pick` of these in its constructor (named where it is passed on: `SnapshotSources`,
 * `MergeSources`, `ApplierSources`, `DependentsSources`). A reader that renders next passes the
 * renderer to the revision lookups, which start the render as soon as the wiki names the revision.
 */
export class PageService {
  readonly renders: RenderStore;
  readonly revisions: KnownRevisions;
  readonly renderer: Renderer;
  /** Pages read here lately, most-read first for background work. */
  readonly reads = new ReadCounts();
  /** The stored pages and renders, listed. */
  readonly listings: PageListings;
  /** What changed, per wiki, for the change stream. */
  readonly changes: ChangeLogs;

  constructor(
    private readonly wikis: WikiDirectory,
    readonly caches: PageCaches,
    freshness: { latestCheckMs: number; revisionRecheckMs: number },
    private readonly log: Logger,
    readonly purger: CachePurger,
    /** How long the change log keeps each change (s). */
    changeLogSeconds = 7 * 86400,
    /** Told of each page's latest render as it is stored (its snapshot body is made then). */
    private readonly latestStored?: LatestRenderStored,
    /** Pages' Enterprise facts (categories, templates, redirects, ...), asked of the wiki in batches. */
    readonly facts: PageFactsStore = new PageFactsStore((domain) => wikis.of(domain), log),
  ) {
    this.changes = new ChangeLogs(changeLogSeconds, (domain) => wikis.homeOf(domain));
    this.renders = new RenderStore(caches);
    const flights = new SingleFlight();
    this.revisions = new KnownRevisions(wikis, caches, flights, this.renders, freshness, log, purger, this.changes);
    this.renderer = new Renderer(wikis, this.revisions, this.renders, flights, log, purger, this.latestStored);
    this.listings = new PageListings((domain) => this.revisions.table(domain), this.renders);
  }

  domains(): string[] {
    return this.wikis.domains();
  }

  wiki(domain: string): Wiki {
    return this.wikis.of(domain);
  }

  /** Each wiki, as it is made, keeps its site info in storage. */
  keepSiteInfo(ctx: RequestContext): void {
    this.wikis.onMade((wiki) => wiki.useSiteInfoStore(new StoredSiteInfo(wiki.domain, ctx)));
  }

  /** Creates the read side's tables, all at once (each create is a round trip, a schema change on Cassandra). */
  async createTables(ctx: RequestContext, domain: string): Promise<void> {
    await Promise.all([
      this.revisions.table(domain).create(ctx), this.renders.create(ctx, domain), this.renderer.renderLeases(domain).create(ctx),
      new StoredSiteInfo(domain, ctx).create(), this.latestStored?.create(ctx, domain),
      // A storage group's home keeps the group's change log.
      this.wikis.homeOf(domain) === domain ? this.changes.ofGroup(domain).create(ctx) : undefined,
    ]);
    // A wiki that sends notices has its title rules loaded now, not by its first notice: a notice
    // is answered without asking the wiki, whose worker waits for that answer.
    if (!this.wikis.isFarmed(domain) && this.wiki(domain).noticeSecret) this.wiki(domain).siteInfo().catch((err) => this.log.warn({ err, domain }, 'loading the wiki\'s site info failed; the first request that needs it asks again'));
  }

  /** Resolves once every render already handed to clients is stored, with its page's facts. */
  async drain(): Promise<void> {
    await this.renderer.drain();
    await this.facts.flush();
  }

  /** At the process's end: the renders being stored are, then what stores with them ends. */
  async close(): Promise<void> {
    await this.drain();
    await this.latestStored?.close?.();
  }
}

import { madeFrom } from '../../../storage/answer-validity.js';
import { mapAtMost } from '../../../util/concurrency-limit.js';
import type { RequestContext } from '../../../router/types.js';
import type { Row } from '../../../storage/types.js';
import { ListingCoverage } from './listing-coverage.js';
import type { RenderStore } from '../tables/render-store.js';
import type { PageRevisions } from '../tables/page-revisions.js';
import type { RevisionRow } from '../model/revision.js';

/** Storage reads one listing at a time has under way at once. */
const READS_AT_ONCE = 8;

/** One page of the page listing (see PageListings.listPages). */
export interface PageListing {
  items: { title: string; rev: number; tid: string | null }[];
  next?: string;
  complete: boolean;
}

/** What is stored, listed: the pages (the latest ones, or as they were at a time) and a page's renders. */
export class PageListings {
  private readonly coverage = new ListingCoverage();
  /** Latest listings by the stored answer they were made from (see listPages). */
  private readonly latestListings = new WeakMap<object, PageListing>();

  constructor(private readonly revisions: (domain: string) => PageRevisions, private readonly renders: RenderStore) {}

  /**
   * Stored pages, paged, each with its revision and render: the latest ones, or with `at` (wiki
   * time) the pages that existed then, each with the revision current then (the newest stored
   * revision made at or before `at`) and that revision's render, so a client can fetch a
   * consistent snapshot without one more lookup per page. A page deleted since counts until it
   * was known deleted. `complete` says whether the stored pages are all the wiki's content pages
   * (at `at`, if given): see ListingCoverage.
   */
  async listPages(ctx: RequestContext, domain: string, paging: { limit?: number; next?: string }, at?: number): Promise<PageListing> {
    const [stored, since] = await Promise.all([this.revisions(domain).list(ctx, paging), this.coverage.completeSince(ctx, domain)]);
    const complete = since !== undefined && (at === undefined || at >= since);
    const reused = at === undefined ? this.latestListings.get(stored) : undefined;
    if (reused?.complete === complete) return reused;
    const listing = { ...(await this.pagesAt(ctx, domain, stored.items as unknown as RevisionRow[], at)), next: stored.next, complete };
    // An answer the read cache hands out again (frozen) is the same listing until it changes: kept,
    // and frozen in turn, so the next request costs neither the filtering nor the JSON.
    if (at === undefined && Object.isFrozen(stored)) {
      for (const item of listing.items) Object.freeze(item);
      Object.freeze(listing.items);
      this.latestListings.set(stored, Object.freeze(listing));
      madeFrom(listing, stored);
    }
    return listing;
  }

  private async pagesAt(ctx: RequestContext, domain: string, pages: RevisionRow[], at: number | undefined): Promise<{ items: { title: string; rev: number; tid: string | null }[] }> {
    const revs = this.revisions(domain);
    const deletedAt = (page: RevisionRow) => (page.deleted ? Date.parse(page.deleted) : Infinity);
    if (at === undefined) {
      const live = pages.filter((page) => deletedAt(page) === Infinity && page.latest_rev !== null);
      return { items: live.map((page) => ({ title: page.title, rev: page.latest_rev!, tid: page.latest_tid })) };
    }
    // Each page's revision at that time is in its own partition: looked up side by side, a few at
    // a time, so that a listing of a thousand pages does not hold every other request's reads
    // behind its thousand in the connection pool.
    const then = await mapAtMost(pages.filter((page) => deletedAt(page) > at), READS_AT_ONCE, async (page) => ({ page, row: await revs.currentAt(ctx, page.title, at) }));
    return { items: then.filter(({ row }) => row).map(({ page, row }) => ({ title: page.title, rev: row!.rev, tid: row!.tid })) };
  }

  /** The stored renders of a page, newest first; those of a page that moved away from this title are not its. */
  async listRenders(ctx: RequestContext, domain: string, title: string, paging: { limit?: number; next?: string }): Promise<{ items: Row[]; next?: string }> {
    const revs = this.revisions(domain);
    const { items, next } = await this.renders.list(ctx, domain, title, paging);
    const moved = (await revs.newest(ctx, title))?.moved_page;
    if (moved === null || moved === undefined) return { items, next };
    const revisions = items.map((item) => item.rev as number);
    const rows = revisions.length ? await revs.range(ctx, title, Math.min(...revisions), Math.max(...revisions)) : [];
    const pageOf = new Map(rows.map((row) => [row.rev, row.page_id]));
    return { items: items.filter((item) => pageOf.get(item.rev as number) !== moved), next };
  }
}

import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { compress } from '../../http/encoding.js';
import { HttpError, badRequest, forbidden, notFound } from '../../errors.js';
import type { RequestContext } from '../../router/types.js';
import { newTid } from '../../tid.js';
import type { ApiPage } from '../../upstream/action-api.js';
import type { PageBundle, Part } from '../../upstream/parsoid.js';
import type { CachePurger } from '../../upstream/cache-purger.js';
import { requestMark, requestsWritten } from '../../upstream/fetch.js';
import { isUnavailable, type Wiki } from '../../upstream/wiki.js';
import { PageListings } from './page-listings.js';
import { movedAway, PageMoved, RevisionMoved } from './page-moves.js';
import { fromCore, redirectTarget, UNAVAILABLE } from './core-render.js';
import type { PageCaches } from './page-caches.js';
import { RenderLeases } from './render-leases.js';
import { PROPS, RenderStore, type Prop, type Render } from './renders.js';
import { latestFromApi, PageRevisions, revisionMetadata, type RevisionRow } from './revisions.js';
import { latestPurge, pagePurge, revisionPurge, type Purge } from './purge-urls.js';
import { ReadCounts } from './read-counts.js';
import { StoredSiteInfo } from './site-info.js';

/**
 * Resolves after the answers finished in this turn of the event loop are written. An immediate
 * writes them (http/write-batch.ts); a storage write waiting on an immediate queued before theirs
 * went first and held them up, since SQLite writes a render's parts synchronously (a cold miss's
 * answer waited about a millisecond for its own render to be stored). The second wait is queued
 * after their write.
 */
async function afterAnswersOfThisTurn(): Promise<void> {
  await nextTurn();
  await nextTurn();
}

/** Keys of the wiki's remembered "not found" answers. */
const missingPage = (domain: string, title: string) => `page\u0000${domain}\u0000${title}`;
const missingRevision = (domain: string, revid: number) => `rev\u0000${domain}\u0000${revid}`;
/** How long re-checks of stored revisions wait after the wiki was found unreachable. */
const RECHECK_PAUSE_MS = 10_000;
/** Key of one render in progress (coalesced, then tracked until stored). */
const renderKey = (domain: string, title: string, rev: number, force: boolean) => `render\u0000${domain}\u0000${title}\u0000${rev}\u0000${force}`;

/**
 * Page content on top of storage: revisions as first seen, renders made on demand by the wiki's
 * Parsoid (one upstream request however many clients wait for the same miss), and the page's
 * latest revision refreshed from the wiki when it is older than the check interval.
 */
export class PageService {
  /** Renders being stored after their clients were answered, by render key; shutdown waits for them. */
  private readonly storing = new Map<string, Promise<void>>();
  /**
   * A page's state being written after the wiki named its latest revision, by domain and title: a
   * render started meanwhile writes its pointers after it (they would be overwritten otherwise).
   */
  private readonly stateWrites = new Map<string, Promise<void>>();
  private readonly revisionTables = new Map<string, PageRevisions>();
  private readonly renderLeaseTables = new Map<string, RenderLeases>();
  /** Per domain: until when revision re-checks are skipped because the wiki was found down. */
  private readonly recheckPausedUntil = new Map<string, number>();
  readonly renders: RenderStore;
  /** Pages read here lately, most-read first for background work. */
  readonly reads = new ReadCounts();
  /** The stored pages and renders, listed. */
  readonly listings: PageListings;

  /**
   * `caches` hold what is kept in memory; among them the wiki's recent "no such page / revision"
   * answers: without those, anyone could make the service send the wiki a request per request.
   */
  constructor(
    private readonly wikis: Map<string, Wiki>,
    readonly caches: PageCaches,
    private readonly freshness: { latestCheckMs: number; revisionRecheckMs: number },
    private readonly log: Logger,
    readonly purger: CachePurger,
  ) {
    this.renders = new RenderStore(caches);
    this.listings = new PageListings((domain) => this.revisions(domain), this.renders);
  }


  domains(): string[] {
    return [...this.wikis.keys()];
  }

  wiki(domain: string): Wiki {
    return this.wikis.get(domain)!;
  }

  revisions(domain: string): PageRevisions {
    let t = this.revisionTables.get(domain);
    if (!t) this.revisionTables.set(domain, (t = new PageRevisions(domain, this.caches.rowsOf(domain))));
    return t;
  }

  renderLeases(domain: string): RenderLeases {
    let t = this.renderLeaseTables.get(domain);
    if (!t) this.renderLeaseTables.set(domain, (t = new RenderLeases(domain, this.log)));
    return t;
  }

  async createTables(ctx: RequestContext, domain: string): Promise<void> {
    await this.revisions(domain).create(ctx);
    await this.renders.create(ctx, domain);
    await this.renderLeases(domain).create(ctx);
    const siteInfo = new StoredSiteInfo(domain, ctx);
    await siteInfo.create();
    this.wiki(domain).useSiteInfoStore(siteInfo);
  }

  /** Resolves once every render already handed to clients is stored. */
  async drain(): Promise<void> {
    while (this.storing.size > 0) await Promise.all([...this.storing.values()]);
  }

  // ---- revisions ----------------------------------------------------------------------------

  /**
   * The page's latest revision: from storage while fresh, else asked of the wiki. `prerender`: the
   * caller renders it next; when the wiki names a revision not stored as the latest, its render
   * starts at once, while its metadata is written (a cold miss waits for one, not both).
   */
  async latest(ctx: RequestContext, domain: string, title: string, force: boolean, prerender = false): Promise<RevisionRow> {
    const revs = this.revisions(domain);
    const newest = await revs.newest(ctx, title);
    // The newest stored revision is the latest one unless the wiki named a later one not stored yet.
    const pointsElsewhere = newest && newest.latest_rev !== null && newest.latest_rev !== newest.rev;
    const row = pointsElsewhere ? await revs.get(ctx, title, newest.latest_rev!) : newest;
    const age = row?.checked ? Date.now() - Date.parse(row.checked) : Infinity;
    if (row && !force && age <= this.freshness.latestCheckMs) return this.servedAsLatest(ctx, domain, title, row);
    const refresh = () =>
      this.caches.coalesce(`latest\u0000${domain}\u0000${title}`, () =>
        this.caches.unlessMissing(missingPage(domain, title), force || !!row, () => this.refreshLatest(ctx, domain, title, row ?? newest, prerender && !force)),
      );
    if (row && !force && row.latest_rev !== null) {
      // Serve what is stored and let the wiki's answer update it for the next reader.
      refresh().catch((err) => this.log.warn({ err, domain, title }, 'refreshing the latest revision failed'));
      return this.servedAsLatest(ctx, domain, title, row);
    }
    try {
      return this.live(await refresh());
    } catch (e) {
      if (row && row.latest_rev !== null && isUnavailable(e)) return this.live(row);
      throw e;
    }
  }

  /** The stored latest revision; if its page moved away, the wiki says what is at this title now. */
  private async servedAsLatest(ctx: RequestContext, domain: string, title: string, row: RevisionRow): Promise<RevisionRow> {
    try {
      return await this.visible(ctx, domain, row);
    } catch (e) {
      if (!(e instanceof RevisionMoved)) throw e;
      return this.latest(ctx, domain, title, true);
    }
  }

  private live(row: RevisionRow): RevisionRow {
    if (movedAway(row)) throw new RevisionMoved(row.moved_to!);
    if (row.deleted) throw row.moved_to ? new PageMoved(row.title, row.moved_to) : notFound(`${row.title} has been deleted.`, 'page-deleted');
    return row;
  }

  /**
   * A stored revision whose page moved to `to`: its metadata and render are stored there too (the
   * render keeps its tid, so its URLs under the old title redirect to ones that answer), and the
   * old title records the move, so its other revisions redirect at once.
   */
  private async moveRevision(ctx: RequestContext, domain: string, row: RevisionRow, to: string, page: ApiPage): Promise<void> {
    const revs = this.revisions(domain);
    await revs.saveFromApi(ctx, to, page, page.revisions ?? []);
    const render = row.tid ? await this.renders.byTid(ctx, domain, row.title, row.tid, row.rev) : undefined;
    if (render) {
      await this.renders.save(ctx, domain, { ...render, title: to }).catch((e) => {
        if (!(e instanceof HttpError && e.status === 412)) throw e; // copied before
      });
      await revs.setRenderTid(ctx, to, row.rev, render.tid, false);
    }
    if (page.pageid !== undefined) await revs.markMoved(ctx, row.title, to, page.pageid);
    this.purgeLater(pagePurge(domain, row.title));
  }

  /** Tells the caches in front, in the background: for changes the service learns of itself. */
  private purgeLater(what: Purge): void {
    this.purger.purgeLater(what.urls, what.keys);
  }

  /**
   * A stored revision, as the wiki last described it; once that is older than the recheck
   * interval the wiki is asked again (its text or user may have been hidden, its page deleted),
   * so hidden state is never stale for longer. While the wiki is down, what is stored stands.
   */
  private async visible(ctx: RequestContext, domain: string, row: RevisionRow, force = false): Promise<RevisionRow> {
    const age = row.seen ? Date.now() - Date.parse(row.seen) : Infinity;
    const paused = (this.recheckPausedUntil.get(domain) ?? 0) > Date.now();
    // A deleted or moved page is learned again through its latest revision, not revision by revision.
    if (!force && (paused || age <= this.freshness.revisionRecheckMs || row.deleted || movedAway(row))) return this.live(row);
    const revs = this.revisions(domain);
    let page: ApiPage;
    try {
      page = await this.fetchRevision(domain, row.rev, force);
    } catch (e) {
      if (isUnavailable(e) && !force) {
        // The wiki is down: serve what is stored, and do not make every reader wait for it meanwhile.
        this.recheckPausedUntil.set(domain, Date.now() + RECHECK_PAUSE_MS);
        return this.live(row);
      }
      if (!(e instanceof HttpError && e.status === 404)) throw e;
      // Gone from the wiki's view: its page was deleted (recorded now, for every URL of it), or the
      // revision alone, which is then kept as hidden.
      await this.latest(ctx, domain, row.title, true);
      await revs.markGone(ctx, row.title, row.rev);
      this.purgeLater(revisionPurge(domain, row.title, row.rev, row.tid));
      throw notFound(`Revision ${row.rev} of ${row.title} is no longer visible on the wiki.`, 'revision-not-found');
    }
    const owner = await this.wiki(domain).normalize(page.title);
    if (owner !== row.title && page.pageid === row.page_id) {
      await this.moveRevision(ctx, domain, row, owner, page);
      throw new RevisionMoved(owner);
    }
    await revs.saveFromApi(ctx, row.title, page, page.revisions ?? []);
    const now = (await revs.get(ctx, row.title, row.rev)) ?? row;
    if (!!now.text_hidden !== !!row.text_hidden) this.purgeLater(revisionPurge(domain, row.title, row.rev, row.tid));
    return this.live(now);
  }

  // ---- what the change follower learned -----------------------------------------------------

  /**
   * Asks the wiki for the page's state now (latest revision, deleted, moved), stores it and
   * purges what changed; undefined if the page is gone from this title.
   */
  async refresh(ctx: RequestContext, domain: string, title: string): Promise<RevisionRow | undefined> {
    try {
      return await this.latest(ctx, domain, title, true);
    } catch (e) {
      if (e instanceof RevisionMoved || (e instanceof HttpError && e.status === 404)) return undefined;
      throw e;
    }
  }

  /** Renders a revision unless a render is stored, and resolves once it is stored. */
  async prerender(ctx: RequestContext, domain: string, row: RevisionRow): Promise<void> {
    if (row.text_hidden) return;
    await this.render(ctx, domain, row, false);
    await this.storing.get(renderKey(domain, row.title, row.rev, false));
  }

  /** Asks the wiki again about a stored revision (hidden, shown again); false if it is not stored here. */
  async recheck(ctx: RequestContext, domain: string, title: string, revid: number): Promise<boolean> {
    const row = await this.revisions(domain).get(ctx, title, revid);
    if (!row) return false;
    try {
      await this.visible(ctx, domain, row, true);
    } catch (e) {
      if (!(e instanceof RevisionMoved || (e instanceof HttpError && e.status === 404))) throw e;
    }
    return true;
  }

  /**
   * Renders a stored page's latest revision again (a template it uses changed); a render with the
   * same content keeps its tid. Returns whether the page's answers changed (and were purged);
   * undefined if the page has no stored render to refresh.
   */
  async rerenderLatest(ctx: RequestContext, domain: string, title: string): Promise<boolean | undefined> {
    const newest = await this.revisions(domain).newest(ctx, title);
    if (!newest?.latest_tid || newest.deleted || newest.moved_to) return undefined;
    const row = await this.revisions(domain).get(ctx, title, newest.latest_rev!);
    if (!row || row.text_hidden) return undefined;
    const render = await this.render(ctx, domain, row, true);
    if (render.tid === newest.latest_tid) return false;
    await this.storing.get(renderKey(domain, title, row.rev, true));
    this.purgeLater(latestPurge(domain, title));
    return true;
  }

  private async refreshLatest(ctx: RequestContext, domain: string, title: string, current: RevisionRow | undefined, prerender = false): Promise<RevisionRow> {
    const revs = this.revisions(domain);
    const wiki = this.wiki(domain);
    const page = await wiki.api.page(title);
    const gone = page.missing || page.invalid || !page.revisions?.length;
    // The page stored here is not the one the wiki has here now: moved away, or deleted.
    if (current?.page_id && (gone || page.pageid !== current.page_id) && current.moved_page !== current.page_id) {
      const target = await wiki.api.movedTo(title);
      if (target) await revs.markMoved(ctx, title, await wiki.normalize(target), current.page_id);
      // Every answer under this title was of the page that left it.
      this.purgeLater(pagePurge(domain, title, current));
    }
    if (gone) {
      if (current) {
        await revs.tombstone(ctx, title);
        this.purgeLater(pagePurge(domain, title, current));
      }
      const moved = await revs.newest(ctx, title);
      if (moved?.moved_to) throw new PageMoved(title, moved.moved_to);
      throw notFound(`The wiki has no page ${title}.`, 'page-not-found');
    }
    // A page moved away and back again is this title's own once more.
    if (current && current.moved_page === page.pageid) await revs.clearMoved(ctx, title);
    const latest = page.revisions![0]!;
    return this.writingState(domain, title, async () => {
      const named = latestFromApi(title, page, latest);
      // Never a revision whose text is hidden; one rendered before is found stored, not rendered again.
      if (prerender && !named.text_hidden && current?.rev !== latest.revid) {
        const mark = requestMark();
        this.render(ctx, domain, named, false).catch((err) => this.log.debug({ err, domain, title }, 'an early render failed; the read renders again'));
        // The state is written once the render's requests to Parsoid are on the wire: the writes
        // (a millisecond or more on SQLite) would otherwise hold them up, though nothing needs the
        // state before Parsoid answers. On SQLite the render has begun them by the next turn.
        await nextTurn();
        await requestsWritten(mark);
      }
      await revs.saveFromApi(ctx, title, page, [latest]);
      const stored = await revs.get(ctx, title, latest.revid);
      await revs.markLatest(ctx, title, latest.revid, stored?.tid ?? null, current);
      if (current && current.latest_rev !== latest.revid) this.purgeLater(latestPurge(domain, title));
      return (await revs.get(ctx, title, latest.revid))!;
    });
  }

  /** Runs `write` as the page's state write in flight (see `stateWrites`). */
  private async writingState<T>(domain: string, title: string, write: () => Promise<T>): Promise<T> {
    const key = `${domain}\u0000${title}`;
    let finished!: () => void;
    const settled = new Promise<void>((resolve) => (finished = resolve));
    this.stateWrites.set(key, settled);
    try {
      return await write();
    } finally {
      finished();
      if (this.stateWrites.get(key) === settled) this.stateWrites.delete(key);
    }
  }

  /** One revision of the page, from storage or, on a miss (or when forced), from the wiki. */
  async revision(ctx: RequestContext, domain: string, title: string, revid: number, force: boolean): Promise<RevisionRow> {
    const revs = this.revisions(domain);
    const row = await revs.get(ctx, title, revid);
    if (row && !force) return this.visible(ctx, domain, row);
    const fetched = await this.fetchRevision(domain, revid, force);
    const owner = await this.wiki(domain).normalize(fetched.title);
    if (owner !== title) {
      await revs.saveFromApi(ctx, owner, fetched, fetched.revisions!);
      const stored = await revs.newest(ctx, title);
      if (stored?.page_id !== undefined && stored.page_id === fetched.pageid) await revs.markMoved(ctx, title, owner, fetched.pageid);
      throw new RevisionMoved(owner);
    }
    await this.store(ctx, domain, title, fetched);
    return (await revs.get(ctx, title, revid))!;
  }

  /** The wiki's page of a revision id (wherever the page is now); coalesced, and misses remembered. */
  private fetchRevision(domain: string, revid: number, force: boolean): Promise<ApiPage> {
    return this.caches.coalesce(`rev\u0000${domain}\u0000${revid}\u0000${force}`, () =>
      this.caches.unlessMissing(missingRevision(domain, revid), force, async () => {
        const page = await this.wiki(domain).api.revision(revid);
        if (!page || page.missing || !page.revisions?.length) throw notFound(`The wiki has no revision ${revid}.`, 'revision-not-found');
        return page;
      }),
    );
  }

  /** Saves what the wiki said about a page that exists, lifting a stale tombstone. */
  private async store(ctx: RequestContext, domain: string, title: string, page: ApiPage): Promise<void> {
    const revs = this.revisions(domain);
    const latestRev = page.lastrevid ?? page.revisions?.[0]?.revid;
    if (latestRev === undefined) return;
    // The page exists after all: forget that it was missing.
    this.caches.forgetMiss(missingPage(domain, title));
    const newest = await revs.newest(ctx, title);
    await revs.saveFromApi(ctx, title, page, page.revisions ?? []);
    if (!newest || newest.deleted || newest.latest_rev === null) {
      const latestRow = await revs.get(ctx, title, latestRev);
      await revs.markLatest(ctx, title, latestRev, latestRow?.tid ?? null, newest);
    }
  }

  /** A revision id's page and metadata, wherever the page is now. */
  async lookupRevision(ctx: RequestContext, domain: string, revid: number): Promise<RevisionRow> {
    const revs = this.revisions(domain);
    const titles = await revs.titlesOf(ctx, revid);
    if (titles.length === 1) {
      try {
        return await this.visible(ctx, domain, (await revs.get(ctx, titles[0]!, revid))!);
      } catch (e) {
        if (!(e instanceof RevisionMoved)) throw e;
        return this.revision(ctx, domain, e.title, revid, false);
      }
    }
    const page = await this.fetchRevision(domain, revid, false);
    const title = await this.wiki(domain).normalize(page.title);
    await this.store(ctx, domain, title, page);
    return this.live((await revs.get(ctx, title, revid))!);
  }

  /** One page of the page's history, from the wiki (it follows moves); each revision is stored as seen. */
  async history(ctx: RequestContext, domain: string, title: string, limit: number, next: string | undefined): Promise<{ items: Record<string, unknown>[]; next?: string }> {
    let cont: string | undefined;
    if (next !== undefined) {
      try {
        cont = (JSON.parse(Buffer.from(next, 'base64url').toString('utf8')) as { c?: unknown }).c as string;
      } catch {
        cont = undefined;
      }
      if (typeof cont !== 'string' || !/^[\w|:-]{1,200}$/.test(cont)) throw badRequest('The paging token (next) is malformed.', 'invalid-paging-token');
    }
    const { page, cont: more } = await this.caches.unlessMissing(missingPage(domain, title), false, async () => {
      const answer = await this.wiki(domain).api.history(title, limit, cont);
      if (answer.page.missing || answer.page.invalid) {
        const known = await this.revisions(domain).newest(ctx, title);
        if (known) await this.revisions(domain).tombstone(ctx, title);
        throw notFound(`The wiki has no page ${title}.`, 'page-not-found');
      }
      return answer;
    });
    const revisions = page.revisions ?? [];
    await this.store(ctx, domain, title, page);
    const ids = revisions.map((r) => r.revid);
    const rows = ids.length ? await this.revisions(domain).range(ctx, title, Math.min(...ids), Math.max(...ids)) : [];
    const byRev = new Map(rows.map((r) => [r.rev, r]));
    return {
      items: ids.map((id) => byRev.get(id)).filter((r): r is RevisionRow => r !== undefined).map(revisionMetadata),
      next: more ? Buffer.from(JSON.stringify({ c: more })).toString('base64url') : undefined,
    };
  }

  /** The revision that was current at `ms` (by revision timestamp). */
  async revisionAt(ctx: RequestContext, domain: string, title: string, ms: number): Promise<RevisionRow> {
    const revs = this.revisions(domain);
    try {
      const page = await this.caches.unlessMissing(missingPage(domain, title), false, async () => {
        const answer = await this.wiki(domain).api.page(title, { before: new Date(ms).toISOString() });
        if (answer.missing || answer.invalid) throw notFound(`The wiki has no page ${title}.`, 'page-not-found');
        return answer;
      });
      if (!page.revisions?.length) throw notFound(`${title} had no revision at ${new Date(ms).toISOString()}.`, 'no-revision-at-time');
      await this.store(ctx, domain, title, page);
      return this.live((await revs.get(ctx, title, page.revisions[0]!.revid))!);
    } catch (e) {
      if (!isUnavailable(e)) throw e;
      // The wiki is down: answer from the revisions stored so far.
      const row = await revs.currentAt(ctx, title, ms);
      if (!row) throw e;
      return this.live(row);
    }
  }

  // ---- renders ------------------------------------------------------------------------------

  /**
   * Makes sure a revision stored a moment ago (a save) has its exact metadata and a stored render:
   * both are asked of the wiki at once; resolves once they are stored. Idempotent.
   */
  async materialize(ctx: RequestContext, domain: string, title: string, rev: number): Promise<Render> {
    const revs = this.revisions(domain);
    const row = await revs.get(ctx, title, rev);
    if (!row) throw notFound(`Revision ${rev} of ${title} is not stored.`, 'revision-not-found');
    const metadata = row.sha1 === null ? this.wiki(domain).api.revision(rev) : undefined;
    const [, page] = await Promise.all([this.render(ctx, domain, row, false), metadata]);
    await this.storing.get(renderKey(domain, title, rev, false));
    if (page?.revisions?.length) await revs.saveFromApi(ctx, title, page, page.revisions);
    // Storing a render reports failures only to the log: whether it landed is read back.
    const stored = await this.renders.newestOf(ctx, domain, title, rev);
    if (!stored) throw new HttpError(503, 'render-not-stored', `The render of revision ${rev} could not be stored yet.`, { headers: { 'retry-after': '5' } });
    const now = await revs.get(ctx, title, rev);
    if (!now?.tid) await revs.setRenderTid(ctx, title, rev, stored.tid, now?.latest_rev === rev);
    return stored;
  }

  /** A stored render by tid; refused as the revision would be (hidden: 403, page deleted: 404). */
  async renderByTid(ctx: RequestContext, domain: string, title: string, tid: string): Promise<Render> {
    const render = await this.renders.byTid(ctx, domain, title, tid);
    if (!render) throw notFound(`No render ${tid} of ${title}.`, 'render-not-found');
    const stored = await this.revisions(domain).get(ctx, title, render.rev);
    let row: RevisionRow | undefined;
    try {
      row = stored && (await this.visible(ctx, domain, stored));
    } catch (e) {
      // Its page moved: the render goes with it under its tid, so the redirect to the same URL
      // under the new title finds it (a move copies only the revision's newest render).
      if (e instanceof RevisionMoved) {
        await this.renders.save(ctx, domain, { ...render, title: e.title }).catch((err) => {
          if (!(err instanceof HttpError && err.status === 412)) throw err;
        });
      }
      throw e;
    }
    if (row?.text_hidden) throw forbidden(`The text of revision ${render.rev} is hidden.`, 'revision-hidden');
    return render;
  }

  /** The newest render of a revision; rendered now (once for all waiting callers) on a miss. */
  async render(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean): Promise<Render> {
    if (row.text_hidden) throw forbidden(`The text of revision ${row.rev} is hidden.`, 'revision-hidden');
    const stored = async () =>
      (row.tid ? await this.renders.byTid(ctx, domain, row.title, row.tid, row.rev) : undefined) ??
      (await this.renders.newestOf(ctx, domain, row.title, row.rev));
    if (!force) {
      const render = await stored();
      if (render) return render;
    }
    // A render another process made while this one waited: the newest, forced or not.
    const madeElsewhere = async () => {
      const render = await this.renders.newestOf(ctx, domain, row.title, row.rev);
      return render && { render, stored: Promise.resolve() };
    };
    try {
      return await this.renderOnce(renderKey(domain, row.title, row.rev, force), () =>
        this.renderLeases(domain).once(ctx, String(row.rev), () => this.renderNow(ctx, domain, row, force), madeElsewhere),
      );
    } catch (e) {
      // A forced re-render the wiki cannot answer falls back to what is stored.
      const fallback = force && isUnavailable(e) ? await stored() : undefined;
      if (fallback) return fallback;
      throw e;
    }
  }

  /**
   * Coalesces renders, answering waiters as soon as the render exists; the key stays taken until
   * it is stored, so requests arriving meanwhile join it instead of rendering again.
   */
  private renderOnce(key: string, make: () => Promise<{ render: Render; stored: Promise<void> }>): Promise<Render> {
    return this.caches.coalesceUntil(key, async () => {
      const { render, stored } = await make();
      const tracked: Promise<void> = stored
        .catch((err) => this.log.error({ err, title: render.title, rev: render.rev }, 'storing a render failed'))
        .finally(() => {
          if (this.storing.get(key) === tracked) this.storing.delete(key);
        });
      this.storing.set(key, tracked);
      return { value: render, settled: tracked };
    });
  }

  private async renderNow(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean): Promise<{ render: Render; stored: Promise<void> }> {
    const wiki = this.wiki(domain);
    let bundle: PageBundle;
    let wikitext: Part;
    try {
      ({ bundle, wikitext } = await wiki.withMode(async (mode) => {
        if (mode === 'v3') {
          const [b, w] = await Promise.all([wiki.parsoid.pagebundle(row.title, row.rev), wiki.parsoid.wikitext(row.title, row.rev)]);
          return { bundle: b, wikitext: w };
        }
        return fromCore(await wiki.parsoid.core(row.rev));
      }));
    } catch (e) {
      if (e instanceof HttpError && e.problemType === 'urn:problem:revision-hidden') {
        // Hidden or deleted since it was stored: learn which, and remember it.
        const fresh = await this.revision(ctx, domain, row.title, row.rev, true);
        if (fresh.text_hidden) throw forbidden(`The text of revision ${row.rev} is hidden.`, 'revision-hidden');
      }
      throw e;
    }
    const raw: Record<Prop, Part> = { html: bundle.html, 'data-parsoid': bundle.dataParsoid ?? UNAVAILABLE, 'data-mw': bundle.dataMw, wikitext };
    const hash = createHash('sha256');
    for (const p of PROPS) hash.update(raw[p].contentType).update('\u0000').update(raw[p].body).update('\u0000');
    const digest = hash.digest('hex');
    // A forced re-render that changed nothing keeps the stored render and its tid.
    const previous = force ? await this.renders.newestOf(ctx, domain, row.title, row.rev) : undefined;
    if (previous?.digest === digest) return { render: previous, stored: Promise.resolve() };

    // Small parts are compressed on this thread (the pool's hand-off cost more than the work: a
    // cold miss waited 2.7 ms for four parts of 15 KB), large ones on the pool, all at once.
    const zipped = await Promise.all(PROPS.map((p) => compress(raw[p].body, 'gzip')));
    const render: Render = {
      title: row.title,
      rev: row.rev,
      tid: newTid(),
      parts: Object.fromEntries(PROPS.map((p, i) => [p, zipped[i]!])) as Record<Prop, Buffer>,
      types: Object.fromEntries(PROPS.map((p) => [p, raw[p].contentType])) as Record<Prop, string>,
      digest,
      redirect: redirectTarget(bundle.html.body.toString('utf8')),
    };
    // Waiting clients are answered from memory while it is stored: the render first, then the
    // pointers to it, so a crash in between leaves only an unused render. Storing starts once the
    // answer has gone out (see `afterAnswersOfThisTurn`).
    this.renders.remember(domain, render);
    const stored = (async () => {
      await afterAnswersOfThisTurn();
      await this.renders.save(ctx, domain, render);
      await this.stateWrites.get(`${domain}\u0000${row.title}`);
      await this.revisions(domain).setRenderTid(ctx, row.title, row.rev, render.tid, row.latest_rev === row.rev);
    })();
    return { render, stored };
  }
}

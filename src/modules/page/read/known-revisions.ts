import { PageStateWrites } from './page-state-writes.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { BoundedMap } from '../../../util/bounded-map.js';
import { HttpError, notFound } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import type { ApiPage } from '../../../upstream/action-api.js';
import type { CachePurger } from '../../../upstream/cache-purger.js';
import type { Part } from '../../../upstream/parsoid.js';
import { revisionText, wikitextIn, type KnownWikitext } from '../../../upstream/revision-text.js';
import { RevisionBatches } from '../../../upstream/revision-batches.js';
import { isUnavailable } from '../../../upstream/wiki.js';
import { movedAway, PageMoved, RevisionMoved } from '../model/page-moves.js';
import { pagePurge, latestPurge, revisionPurge } from '../model/purge-urls.js';
import type { ChangeLogs } from '../tables/change-log.js';
import type { RevisionRow } from '../model/revision.js';
import { describedAsStored, latestFromApi, PageRevisions } from '../tables/page-revisions.js';
import type { RenderStore } from '../tables/render-store.js';
import type { SingleFlight } from '../model/single-flight.js';
import type { PageCaches } from './page-caches.js';

import { missingPage, missingRevision, RevisionHistory } from './revision-history.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';
/** How long re-checks of stored revisions wait after the wiki was found unreachable. */
const RECHECK_PAUSE_MS = 10_000;

/** The wiki's answer about a page, asked moments ago beside others' (a backfill's chunk), and when it was asked. */
export interface WikiAnswer {
  page: ApiPage;
  askedAt: number;
}

/**
 * What a caller that renders a revision next passes to the lookups (the renderer), so that a cold
 * miss waits for the wiki's two answers at once rather than one after the other.
 */
export interface RenderAhead {
  /**
   * The wiki named a page's latest revision that is not stored as such; called before its state
   * is written, which waits for it (the render starts here). `wikitext`: the revision's, where the
   * wiki's answer carried it.
   */
  startEarly(ctx: RequestContext, domain: string, row: RevisionRow, wikitext?: Part): Promise<void>;
  /** The wiki is being asked about a revision not stored here (its wikitext to come with the answer). */
  fetchEarly(domain: string, title: string, revid: number, wikitext: KnownWikitext): void;
}

/**
 * The revisions the service knows, kept in step with the wiki: a page's latest revision (from
 * storage while fresh, else asked of the wiki), any revision by id or time, its history, and
 * what the wiki says of them since (hidden, deleted, moved), stored and purged as it changes.
 */
export class KnownRevisions {
  /** Per wiki (a handle made again after the map starts over shares the wiki's page-state cache). */
  private readonly tables = new BoundedMap<string, PageRevisions>(1024);
  private readonly stateWrites = new PageStateWrites();
  /** Per domain: until when revision re-checks are skipped because the wiki was found down. */
  private readonly recheckPausedUntil = new Map<string, number>();

  /**
   * `caches` hold what is kept in memory; among them the wiki's recent "no such page / revision"
   * answers: without those, anyone could make the service send the wiki a request per request.
   */
  constructor(
    readonly wikis: WikiDirectory,
    readonly caches: PageCaches,
    private readonly flights: SingleFlight,
    private readonly renders: RenderStore,
    private readonly freshness: { latestCheckMs: number; revisionRecheckMs: number },
    private readonly log: Logger,
    private readonly purger: CachePurger,
    /** Every change to what is stored of a page, recorded where it happens (see tables/change-log.ts). */
    readonly changes: ChangeLogs,
  ) {}

  private readonly byTime = new RevisionHistory(this);
  /** Revisions described by the wiki in batches: the checks of stored revisions, and lookups of ids without their text. */
  private readonly described = new RevisionBatches((domain) => this.wikis.of(domain).api);


  /** The domain's page_revisions table. */
  table(domain: string): PageRevisions {
    return this.tables.remember(domain, () => new PageRevisions(domain, this.caches.rowsOf(domain), this.changes.of(domain)));
  }

  /** Resolves once the page's state write in flight, if any, is done (see PageStateWrites). */
  stateWritten(domain: string, title: string): Promise<void> | undefined {
    return this.stateWrites.written(domain, title);
  }

  /**
   * The page's latest revision: from storage while fresh, else asked of the wiki. `prerender`: the
   * caller renders it next; when the wiki names a revision not stored as the latest, its render
   * starts at once, while its metadata is written (a cold miss waits for one, not both).
   * `answered`: the wiki's answer about the page, asked moments ago beside others' (a backfill's
   * chunk): used rather than asked again.
   */
  async latest(ctx: RequestContext, domain: string, title: string, force: boolean, prerender?: RenderAhead, answered?: WikiAnswer): Promise<RevisionRow> {
    const revs = this.table(domain);
    const newest = await revs.newest(ctx, title);
    // The newest stored revision is the latest one unless the wiki named a later one not stored yet.
    const pointsElsewhere = newest && newest.latest_rev !== null && newest.latest_rev !== newest.rev;
    const row = pointsElsewhere ? await revs.get(ctx, title, newest.latest_rev!) : newest;
    const age = row?.checked ? Date.now() - Date.parse(row.checked) : Infinity;
    if (row && !force && age <= this.freshness.latestCheckMs) return this.servedAsLatest(ctx, domain, title, row);
    const ask = () => this.caches.unlessMissing(missingPage(domain, title), force || !!row, () => this.askWikiForLatest(ctx, domain, title, row ?? newest, force ? undefined : prerender, answered));
    // A forced check asks the wiki anew: a check already under way may have been asked before
    // what its caller knows happened (a promote right after an edit on the wiki would merge over
    // the revision before that edit, and the wiki take it as an edit conflict with oneself).
    // A state marked unchecked (the wiki's notice of a change) is asked anew too: a check under way
    // may have been asked before the change.
    const unchecked = !!row && row.checked === null;
    const refresh = () => (force || unchecked ? ask() : this.flights.run(`latest\u0000${domain}\u0000${title}`, ask));
    if (row && !force && !unchecked && row.latest_rev !== null) {
      // Serve what is stored and let the wiki's answer update it for the next reader.
      refresh().catch((err) => this.log.warn({ err, domain, title }, 'refreshing the latest revision failed'));
      return this.servedAsLatest(ctx, domain, title, row);
    }
    try {
      return this.servable(await refresh());
    } catch (e) {
      if (row && row.latest_rev !== null && isUnavailable(e)) return this.servable(row);
      throw e;
    }
  }

  /** The stored latest revision; if its page moved away, the wiki says what is at this title now. */
  private async servedAsLatest(ctx: RequestContext, domain: string, title: string, row: RevisionRow): Promise<RevisionRow> {
    try {
      return await this.checkedWithWiki(ctx, domain, row);
    } catch (e) {
      if (!(e instanceof RevisionMoved)) throw e;
      return this.latest(ctx, domain, title, true);
    }
  }

  /** (For RevisionHistory.) */
  servable(row: RevisionRow): RevisionRow {
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
    const revs = this.table(domain);
    await revs.saveFromApi(ctx, to, page, page.revisions ?? []);
    const render = row.tid ? await this.renders.byTid(ctx, domain, row.title, row.tid, row.rev) : undefined;
    if (render) {
      await this.renders.save(ctx, domain, { ...render, title: to }).catch((e) => {
        if (!(e instanceof HttpError && e.status === 412)) throw e; // copied before
      });
      await revs.setRenderTid(ctx, to, row.rev, render.tid, false);
    }
    if (page.pageid !== undefined) await revs.markMoved(ctx, row.title, to, page.pageid);
    this.purger.purgeLater(pagePurge(domain, row.title));
  }

  /**
   * A stored revision, as the wiki last described it; once that is older than the recheck
   * interval the wiki is asked again (its text or user may have been hidden, its page deleted),
   * so hidden state is never stale for longer. While the wiki is down, what is stored stands.
   */
  async checkedWithWiki(ctx: RequestContext, domain: string, row: RevisionRow, force = false): Promise<RevisionRow> {
    const age = row.seen ? Date.now() - Date.parse(row.seen) : Infinity;
    const paused = (this.recheckPausedUntil.get(domain) ?? 0) > Date.now();
    // A deleted or moved page is learned again through its latest revision, not revision by revision.
    if (!force && (paused || age <= this.freshness.revisionRecheckMs || row.deleted || movedAway(row))) return this.servable(row);
    const revs = this.table(domain);
    let page: ApiPage;
    try {
      page = await this.fetchRevision(domain, row.rev, force);
    } catch (e) {
      if (isUnavailable(e) && !force) {
        // The wiki is down: serve what is stored, and do not make every reader wait for it meanwhile.
        this.recheckPausedUntil.set(domain, Date.now() + RECHECK_PAUSE_MS);
        return this.servable(row);
      }
      if (!(e instanceof HttpError && e.status === 404)) throw e;
      // Gone from the wiki's view: its page was deleted (recorded now, for every URL of it), or the
      // revision alone, which is then kept as hidden.
      await this.latest(ctx, domain, row.title, true);
      await revs.markGone(ctx, row.title, row.rev);
      this.purger.purgeLater(revisionPurge(domain, row.title, row.rev, row.tid));
      if (!row.text_hidden) await revs.changes.record(ctx, { kind: 'visibility', title: row.title, rev: row.rev });
      throw notFound(`Revision ${row.rev} of ${row.title} is no longer visible on the wiki.`, 'revision-not-found');
    }
    const owner = await this.wikis.of(domain).normalize(page.title);
    if (owner !== row.title && page.pageid === row.page_id) {
      await this.moveRevision(ctx, domain, row, owner, page);
      throw new RevisionMoved(owner);
    }
    await revs.saveFromApi(ctx, row.title, page, page.revisions ?? []);
    const now = (await revs.get(ctx, row.title, row.rev)) ?? row;
    if (!!now.text_hidden !== !!row.text_hidden) this.purger.purgeLater(revisionPurge(domain, row.title, row.rev, row.tid));
    if (!!now.text_hidden !== !!row.text_hidden || !!now.user_hidden !== !!row.user_hidden || !!now.comment_hidden !== !!row.comment_hidden) {
      await revs.changes.record(ctx, { kind: 'visibility', title: row.title, rev: row.rev });
    }
    return this.servable(now);
  }

  /**
   * Asks the wiki for the page's state now (latest revision, deleted, moved), stores it and
   * purges what changed; undefined if the page is gone from this title.
   */
  async refreshFromWiki(ctx: RequestContext, domain: string, title: string, answered?: WikiAnswer): Promise<RevisionRow | undefined> {
    try {
      return await this.latest(ctx, domain, title, true, undefined, answered);
    } catch (e) {
      if (e instanceof RevisionMoved || (e instanceof HttpError && e.status === 404)) return undefined;
      throw e;
    }
  }

  /**
   * The wiki told of a change to the page (its notice, sent before it answered whoever made the
   * change): the stored state is marked unchecked, so the next read asks the wiki rather than
   * serve it (and the CDN is purged). Asks the wiki nothing: a notice is answered at once, however
   * busy the wiki is.
   */
  async noticed(ctx: RequestContext, domain: string, title: string): Promise<void> {
    this.caches.forgetMiss(missingPage(domain, title));
    const revs = this.table(domain);
    // Nothing stored: a read asks the wiki anyway.
    if (!(await revs.newest(ctx, title))) return;
    await revs.markUnchecked(ctx, title);
    this.purger.purgeLater(latestPurge(domain, title));
  }

  /** Asks the wiki again about a stored revision (hidden, shown again); false if it is not stored here. */
  async recheckWithWiki(ctx: RequestContext, domain: string, title: string, revid: number): Promise<boolean> {
    const row = await this.table(domain).get(ctx, title, revid);
    if (!row) return false;
    try {
      await this.checkedWithWiki(ctx, domain, row, true);
    } catch (e) {
      if (!(e instanceof RevisionMoved || (e instanceof HttpError && e.status === 404))) throw e;
    }
    return true;
  }

  private async askWikiForLatest(ctx: RequestContext, domain: string, title: string, current: RevisionRow | undefined, prerender?: RenderAhead, answered?: WikiAnswer): Promise<RevisionRow> {
    const revs = this.table(domain);
    const wiki = this.wikis.of(domain);
    // A page never seen here is rendered next: its wikitext comes with the answer.
    // When the wiki was asked: a notice of a change since leaves the page unchecked.
    const askedAt = answered?.askedAt ?? Date.now();
    const page = answered?.page ?? (await wiki.api.page(title, { withText: !!prerender && !current }));
    const gone = page.missing || page.invalid || !page.revisions?.length;
    // The page stored here is not the one the wiki has here now: moved away, or deleted.
    if (current?.page_id && (gone || page.pageid !== current.page_id) && current.moved_page !== current.page_id) {
      const target = await wiki.api.movedTo(title);
      if (target) await revs.markMoved(ctx, title, await wiki.normalize(target), current.page_id);
      // Every answer under this title was of the page that left it.
      this.purger.purgeLater(pagePurge(domain, title, current));
    }
    if (gone) {
      if (current) {
        await revs.tombstone(ctx, title, askedAt);
        this.purger.purgeLater(pagePurge(domain, title, current));
      }
      const moved = await revs.newest(ctx, title);
      if (moved?.moved_to) throw new PageMoved(title, moved.moved_to);
      throw notFound(`The wiki has no page ${title}.`, 'page-not-found');
    }
    // A page moved away and back again is this title's own once more.
    if (current && current.moved_page === page.pageid) await revs.clearMoved(ctx, title);
    const latest = page.revisions![0]!;
    return this.stateWrites.writing(domain, title, async () => {
      // Nothing changed: one write, and nothing to purge or record.
      if (current && current.rev === latest.revid && current.latest_rev === latest.revid && describedAsStored(current, page, latest)) {
        const marked = await revs.markStillLatest(ctx, title, page, latest, askedAt);
        if (marked) return marked;
      }
      const named = latestFromApi(title, page, latest);
      // Never a revision whose text is hidden; one rendered before is found stored, not rendered again.
      if (prerender && !named.text_hidden && current?.rev !== latest.revid) await prerender.startEarly(ctx, domain, named, revisionText(page, latest.revid));
      await revs.saveFromApi(ctx, title, page, [latest]);
      const stored = await revs.get(ctx, title, latest.revid);
      await revs.markLatest(ctx, title, latest.revid, stored?.tid ?? null, current, askedAt);
      if (current && current.latest_rev !== latest.revid) this.purger.purgeLater(latestPurge(domain, title));
      return (await revs.get(ctx, title, latest.revid))!;
    });
  }

  /**
   * One revision of the page, from storage or, on a miss (or when forced), from the wiki.
   * `prerender`: the caller renders it next, so on a miss its render is asked for at once, beside
   * its metadata.
   */
  async revision(ctx: RequestContext, domain: string, title: string, revid: number, force: boolean, prerender?: RenderAhead): Promise<RevisionRow> {
    const revs = this.table(domain);
    const row = await revs.get(ctx, title, revid);
    if (row && !force) return this.checkedWithWiki(ctx, domain, row);
    const beside = prerender && !force && !row ? (wikitext: KnownWikitext) => prerender.fetchEarly(domain, title, revid, wikitext) : undefined;
    const fetched = await this.fetchRevision(domain, revid, force, beside);
    const owner = await this.wikis.of(domain).normalize(fetched.title);
    if (owner !== title) {
      await revs.saveFromApi(ctx, owner, fetched, fetched.revisions!);
      const stored = await revs.newest(ctx, title);
      if (stored?.page_id !== undefined && stored.page_id === fetched.pageid) await revs.markMoved(ctx, title, owner, fetched.pageid);
      throw new RevisionMoved(owner);
    }
    await this.storeWikiPage(ctx, domain, title, fetched);
    return (await revs.get(ctx, title, revid))!;
  }

  /**
   * The wiki's page of a revision id (wherever the page is now); coalesced, and misses remembered.
   * `beside` runs when the wiki is asked (not when it said "no such revision" moments ago), with
   * the revision's wikitext to come: the wiki is asked for it too.
   */
  private fetchRevision(domain: string, revid: number, force: boolean, beside?: (wikitext: KnownWikitext) => void): Promise<ApiPage> {
    return this.flights.run(`rev\u0000${domain}\u0000${revid}\u0000${force}`, () =>
      this.caches.unlessMissing(missingRevision(domain, revid), force, async () => {
        const ask = () => (beside ? this.wikis.of(domain).api.revision(revid, { withText: true }) : this.described.describe(domain, revid));
        // With its render asked for beside it, the question goes out a turn later: the page
        // bundle, the slower of the two and the one the miss waits for, is begun first.
        const asked = beside ? nextTurn().then(ask) : ask();
        beside?.(wikitextIn(asked, revid));
        const page = await asked;
        if (!page || page.missing || !page.revisions?.length) throw notFound(`The wiki has no revision ${revid}.`, 'revision-not-found');
        return page;
      }),
    );
  }

  /** Saves what the wiki said about a page that exists, lifting a stale tombstone. */
  /** (For RevisionHistory.) */
  async storeWikiPage(ctx: RequestContext, domain: string, title: string, page: ApiPage): Promise<void> {
    const revs = this.table(domain);
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
    const revs = this.table(domain);
    const titles = await revs.titlesOf(ctx, revid);
    if (titles.length === 1) {
      try {
        return await this.checkedWithWiki(ctx, domain, (await revs.get(ctx, titles[0]!, revid))!);
      } catch (e) {
        if (!(e instanceof RevisionMoved)) throw e;
        return this.revision(ctx, domain, e.title, revid, false);
      }
    }
    const page = await this.fetchRevision(domain, revid, false);
    const title = await this.wikis.of(domain).normalize(page.title);
    await this.storeWikiPage(ctx, domain, title, page);
    return this.servable((await revs.get(ctx, title, revid))!);
  }

  /** One page of the page's history, from the wiki (see RevisionHistory). */
  history(ctx: RequestContext, domain: string, title: string, limit: number, next: string | undefined): Promise<{ items: Record<string, unknown>[]; next?: string }> {
    return this.byTime.history(ctx, domain, title, limit, next);
  }

  /** The revision that was current at `ms` (see RevisionHistory). */
  revisionAt(ctx: RequestContext, domain: string, title: string, ms: number): Promise<RevisionRow> {
    return this.byTime.revisionAt(ctx, domain, title, ms);
  }
}

import { createHash } from 'node:crypto';
import PQueue from 'p-queue';
import { HttpError } from '../../../util/errors.js';
import { TableClient } from '../../../table-access/table-client.js';
import type { RequestContext } from '../../../router/types.js';
import type { ApiPage, ListedPage } from '../../../upstream/action-api.js';
import type { WikiAnswer } from '../read/known-revisions.js';
import { revisionText } from '../../../upstream/revision-text.js';
import { COMPLETE_RUN } from '../tables/backfill-runs.js';
import type { PageService } from '../read/page-service.js';

const PAGE_BACKFILL_SCHEMA = {
  version: 1,
  attributes: { run: 'string', cont: 'json', counts: 'json', started: 'timestamp' },
  index: [{ attribute: 'run', type: 'hash' }],
};

/** The record of a finished run over every content page, and when it began. */


/** Which pages a backfill goes through. */
export type BackfillSource =
  | { kind: 'all'; namespaces?: number[] }
  | { kind: 'titles'; titles: string[] }
  | { kind: 'category'; category: string };

export type Outcome = 'rendered' | 'skipped' | 'failed';

export interface BackfillCounts {
  rendered: number;
  skipped: number;
  failed: number;
}

/** Where a run stopped: the listing's continuation at the start of the first chunk not finished. */
interface Position {
  /** Index into the namespaces (all) or the titles (titles from a file). */
  at: number;
  cont: Record<string, string> | null;
}

export interface BackfillReport {
  counts: BackfillCounts;
  /** Failures by reason, each with a few of the titles it hit. */
  failures: Map<string, { count: number; titles: string[] }>;
  /** Whether it went on from an earlier run's stored position. */
  resumed: boolean;
  /** Whether it went through every page (not stopped). */
  complete: boolean;
}

export interface BackfillOptions {
  concurrency: number;
  /** Forget an earlier unfinished run's position and start from the first page. */
  restart?: boolean;
  /** Called after each page. */
  progress?: (outcome: Outcome, title: string) => void;
  /** Checked between chunks: true stops the run (its position is kept for the next one). */
  stopped?: () => boolean;
}

/** Titles asked of the wiki per request. */
const CHUNK = 50;
/** Pages beyond which the total is the wiki's own estimate rather than counted. */
const COUNT_LIMIT = 10_000;

const reasonOf = (e: unknown) => (e instanceof HttpError ? `${e.status} ${e.problemType}: ${e.message}` : String((e as Error)?.message ?? e)).slice(0, 300);

/**
 * Stores and renders every page of a source, a chunk of titles at a time with bounded
 * concurrency. A page whose latest revision is stored with a render is skipped, so a second run
 * costs one listing request per chunk; the position is stored after each chunk, so a run stopped
 * (Ctrl-C, a crash) goes on where it stopped.
 */
export class Backfill {
  private readonly table: TableClient;

  constructor(private readonly service: Pick<PageService, 'renderer' | 'revisions' | 'wiki'>, private readonly domain: string) {
    this.table = new TableClient(domain, 'page_backfill');
  }

  /** A stable name for a source, so the same command resumes the same run. */
  static runId(source: BackfillSource): string {
    if (source.kind === 'all') return `all:${(source.namespaces ?? []).join(',')}`;
    if (source.kind === 'category') return `category:${source.category}`;
    return `titles:${createHash('sha256').update(source.titles.join('\n')).digest('hex').slice(0, 16)}`;
  }

  private async namespaces(source: Extract<BackfillSource, { kind: 'all' }>): Promise<number[]> {
    if (source.namespaces?.length) return source.namespaces;
    const info = await this.service.wiki(this.domain).api.siteInfo();
    return Object.values(info.namespaces as Record<string, { id: number; content?: boolean }>)
      .filter((ns) => ns.content)
      .map((ns) => ns.id)
      .sort((a, b) => a - b);
  }

  /** How many pages the source holds: counted when that is cheap, else the wiki's estimate. */
  async total(source: BackfillSource): Promise<{ total: number; estimated: boolean }> {
    const api = this.service.wiki(this.domain).api;
    if (source.kind === 'titles') return { total: source.titles.length, estimated: false };
    if (source.kind === 'category') return { total: await api.pageCount(`Category:${source.category.replace(/^Category:/i, '')}`), estimated: false };
    let counted = 0;
    for (const ns of await this.namespaces(source)) {
      let cont: Record<string, string> | undefined;
      do {
        const chunk = await api.listPages('allpages', { gapnamespace: String(ns), gaplimit: 'max' }, cont);
        counted += chunk.pages.length;
        cont = chunk.cont;
        if (counted > COUNT_LIMIT) return { total: await api.pageCount(), estimated: true };
      } while (cont);
    }
    return { total: counted, estimated: false };
  }

  /** One chunk of the source from `pos`, and the position after it (undefined: the source is done). */
  private async chunk(source: BackfillSource, namespaces: number[], pos: Position): Promise<{ pages: ListedPage[]; next?: Position }> {
    const api = this.service.wiki(this.domain).api;
    if (source.kind === 'titles') {
      const titles = source.titles.slice(pos.at, pos.at + CHUNK);
      const pages = titles.length ? await api.info(titles) : [];
      return { pages, next: pos.at + CHUNK < source.titles.length ? { at: pos.at + CHUNK, cont: null } : undefined };
    }
    const [generator, params] =
      source.kind === 'category'
        ? (['categorymembers', { gcmtitle: `Category:${source.category.replace(/^Category:/i, '')}`, gcmlimit: String(CHUNK), gcmtype: 'page' }] as const)
        : (['allpages', { gapnamespace: String(namespaces[pos.at]), gaplimit: String(CHUNK) }] as const);
    const { pages, cont } = await api.listPages(generator, params, pos.cont ?? undefined);
    if (cont) return { pages, next: { at: pos.at, cont } };
    const more = source.kind === 'all' && pos.at + 1 < namespaces.length;
    return { pages, next: more ? { at: pos.at + 1, cont: null } : undefined };
  }

  /** Whether the page's latest revision, as listed, is stored with a render. */
  private async upToDate(ctx: RequestContext, listed: ListedPage): Promise<boolean> {
    if (listed.missing) return false;
    const title = await this.service.wiki(this.domain).normalize(listed.title);
    const stored = await this.service.revisions.table(this.domain).newest(ctx, title);
    return !!stored && !stored.deleted && stored.latest_rev === listed.lastrevid && !!stored.latest_tid;
  }

  /**
   * What the wiki says of a chunk's pages not stored yet, each with its newest revision and that
   * revision's wikitext: one request for the chunk rather than two for each page (its state, and
   * its wikitext beside the render). A page the answer lacks is asked about alone.
   */
  private async answersFor(ctx: RequestContext, pages: ListedPage[]): Promise<Map<string, WikiAnswer>> {
    const stale = (await Promise.all(pages.map(async (p) => ((await this.upToDate(ctx, p).catch(() => false)) ? [] : [p.title])))).flat();
    if (!stale.length) return new Map();
    const askedAt = Date.now();
    const answers = await this.service.wiki(this.domain).api.pages(stale, { withText: true }).catch(() => new Map<string, ApiPage>());
    return new Map([...answers].map(([title, page]) => [title, { page, askedAt }]));
  }

  /** One page: skipped if its latest revision is stored and rendered, else stored and rendered. */
  private async page(ctx: RequestContext, listed: ListedPage, answered?: WikiAnswer): Promise<Outcome> {
    if (listed.missing) throw new HttpError(404, 'page-not-found', 'the wiki has no such page');
    if (await this.upToDate(ctx, listed)) return 'skipped';
    const title = await this.service.wiki(this.domain).normalize(listed.title);
    const row = await this.service.revisions.refreshFromWiki(ctx, this.domain, title, answered);
    if (!row) throw new HttpError(404, 'page-not-found', 'gone from the wiki since it was listed');
    await this.service.renderer.renderAndStore(ctx, this.domain, row, revisionText(answered?.page, row.rev));
    return 'rendered';
  }

  async run(ctx: RequestContext, source: BackfillSource, options: BackfillOptions): Promise<BackfillReport> {
    await this.table.create(ctx, PAGE_BACKFILL_SCHEMA);
    const run = Backfill.runId(source);
    const [saved] = options.restart ? [] : (await this.table.query(ctx, { attributes: { run } })).items;
    // A copy: this run counts on from where the stored one stopped; rows read are not to be changed.
    const counts: BackfillCounts = { rendered: 0, skipped: 0, failed: 0, ...(saved?.counts as BackfillCounts | undefined) };
    let pos: Position | undefined = (saved?.cont as Position | undefined) ?? { at: 0, cont: null };
    const report: BackfillReport = { counts, failures: new Map(), resumed: !!saved, complete: false };
    const namespaces = source.kind === 'all' ? await this.namespaces(source) : [];
    const queue = new PQueue({ concurrency: options.concurrency });
    // Wiki time (its newest change) rather than this machine's: compared with when following began.
    const started = saved?.started ?? (await this.service.wiki(this.domain).api.newestChangeTime());

    const one = async (listed: ListedPage, answered?: WikiAnswer) => {
      let outcome: Outcome;
      try {
        outcome = await this.page(ctx, listed, answered);
      } catch (e) {
        outcome = 'failed';
        const reason = reasonOf(e);
        const entry = report.failures.get(reason) ?? { count: 0, titles: [] };
        entry.count++;
        if (entry.titles.length < 5) entry.titles.push(listed.title);
        report.failures.set(reason, entry);
      }
      counts[outcome]++;
      options.progress?.(outcome, listed.title);
    };
    // Chunks overlap: the next is listed and started once every page of this one has started, so
    // the slowest pages of a chunk do not leave the others idle. A chunk's position is stored
    // once it and every chunk before it are done, so a stopped run never skips a page.
    let stored: Promise<void> = Promise.resolve();
    while (pos && !options.stopped?.()) {
      const { pages, next } = await this.chunk(source, namespaces, pos);
      const answers = await this.answersFor(ctx, pages);
      const done = Promise.all(pages.map((listed) => queue.add(() => one(listed, answers.get(listed.title)))));
      const before = stored;
      stored = (async () => {
        await Promise.all([done, before]);
        if (next) await this.table.put(ctx, { attributes: { run, cont: next, counts, started } });
      })();
      stored.catch(() => undefined); // its failure is thrown where it is awaited, below or by the next chunk
      pos = next;
      await queue.onEmpty();
    }
    await stored;
    if (!pos) {
      report.complete = true;
      await this.table.delete(ctx, { run });
      // Every content page as of the run's start: what makes the page listing complete (see ListingCoverage).
      if (source.kind === 'all' && !source.namespaces?.length) await this.table.put(ctx, { attributes: { run: COMPLETE_RUN, started } });
    }
    return report;
  }
}

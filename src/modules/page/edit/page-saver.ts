import type { Logger } from 'pino';
import { HttpError, badRequest } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import { newTid } from '../../../util/tid.js';
import { ApiError, type Credentials, type EditContext, type EditResult } from '../../../upstream/action-api.js';
import type { Wiki } from '../../../upstream/wiki.js';
import { renderedTid, saveTransaction, type SaveStep } from './save-steps.js';
import { editRefused } from './edit-errors.js';
import { htmlToWikitext } from './html-to-wikitext.js';
import type { PageService } from '../read/page-service.js';
import { RevisionMoved } from '../model/page-moves.js';
import type { Render } from '../model/render.js';
import type { SaveLocks } from '../tables/save-locks.js';
import { withSection } from '../model/sections.js';
import type { Html2Cache } from '../model/html-versions.js';

/** One save as a client asks for it (title already normalised). */
export interface SaveRequest {
  title: string;
  wikitext?: string;
  html?: string;
  /** The edited HTML's data-mw, when it travels apart from the HTML. */
  dataMw?: unknown;
  /** The stored render the HTML was edited from (selective serialisation). */
  tid?: string;
  /** The revision the edit is based on; absent only when creating the page. */
  baseRevid?: number;
  /**
   * A base older than the page's latest goes to the wiki to merge with the revisions made since
   * (MediaWiki's REST API does: its editors' changes merged by diff3, a 409 only where they
   * overlap), not refused at once as the service's own API refuses it.
   */
  mergeStale?: boolean;
  /** The content is this section's (data-mw-section-id); the rest of the page keeps its bytes. */
  section?: number;
  comment?: string;
  minor?: boolean;
  bot?: boolean;
  credentials: Credentials;
  /** More steps of the save's transaction, after the revision and its render are recorded. */
  alsoRecord?: (rev: number) => SaveStep[];
}

export interface SaveResult {
  /** 201 a new revision, 200 the wiki had nothing to change. */
  status: 200 | 201;
  title: string;
  rev: number;
  /** The stored render of `rev`, or null if it is still being made. */
  tid: string | null;
}


/** The revision an edit is based on, as far as it is stored. */
interface Base {
  rev: number;
  timestamp?: string;
  tid: string | null;
}

const conflict = (detail: string, latest: number | null, kind = 'edit-conflict') =>
  new HttpError(409, kind, detail, { extensions: { latest_revid: latest } });

/**
 * Saves pages through the wiki, as the caller (docs/architecture.md, "The life of a save"): conflicts are found per page before
 * the wiki is asked (the stored latest revision, then one save at a time per page), the wiki
 * decides, and what it accepted is recorded in one HTTP transaction (the page's latest revision,
 * conditionally; then its render), so the next read is served from storage.
 */
export class PageSaver {
  constructor(
    private readonly service: Pick<PageService, 'purger' | 'renders' | 'revisions' | 'wiki'>,
    private readonly locks: (domain: string) => SaveLocks,
    private readonly log: Logger,
    private readonly html2: Html2Cache,
  ) {}

  async save(ctx: RequestContext, domain: string, req: SaveRequest): Promise<SaveResult> {
    const base = await this.checkBase(ctx, domain, req);
    const text = await this.wikitextOf(ctx, domain, req, base);
    const locks = this.locks(domain);
    const lock = newTid();
    if (!(await locks.acquire(ctx, req.title, lock, req.baseRevid ?? null))) {
      throw conflict(`Another save of ${req.title} is in progress; reload the page and edit its new revision.`, await this.storedLatest(ctx, domain, req.title), 'save-in-progress');
    }
    let recorded = false;
    try {
      const { context, result } = await this.editAsCaller(ctx, domain, req, base, text);
      if (result.nochange || result.newrevid === undefined) {
        return { status: 200, title: req.title, rev: base?.rev ?? context.page.latest?.revid ?? 0, tid: base?.tid ?? null };
      }
      recorded = true;
      return { status: 201, title: req.title, rev: result.newrevid, tid: await this.record(ctx, domain, req, lock, base, context, result, text) };
    } finally {
      // Once recorded, the transaction frees the page (even if this process dies).
      if (!recorded) await locks.release(ctx, req.title, lock).catch((err) => this.log.warn({ err, title: req.title }, 'releasing a save lock failed'));
    }
  }

  /** The edit, sent to the wiki with the caller's credentials; a token that expired meanwhile is replaced once. */
  private async editAsCaller(
    ctx: RequestContext, domain: string, req: SaveRequest, base: Base | undefined, text: string,
  ): Promise<{ context: EditContext; result: EditResult }> {
    const startTimestamp = new Date().toISOString();
    const wiki = this.service.wiki(domain);
    let context = await this.context(ctx, domain, wiki, req);
    // The caller's own token when they gave one (a cookie session must): the wiki checks it.
    const own = req.credentials.csrfToken;
    const edit = () =>
      wiki.api.edit(
        {
          title: req.title, text, summary: req.comment, minor: req.minor, bot: req.bot, startTimestamp, token: own ?? context.token,
          // Section wikitext is put in place by the wiki; edited section HTML became the whole page's.
          section: req.wikitext !== undefined ? req.section : undefined,
          // The base's own time: a later one would tell the wiki there was nothing to merge.
          base: base && { revid: base.rev, timestamp: context.baseTimestamp ?? base.timestamp ?? context.page.latest!.timestamp },
        },
        req.credentials,
      );
    try {
      try {
        return { context, result: await edit() };
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 'badtoken') || own !== undefined) throw e;
        context = await this.context(ctx, domain, wiki, req);
        return { context, result: await edit() };
      }
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (e.code === 'editconflict') this.refreshLatestLater(ctx, domain, req.title);
      throw editRefused(e, e.code === 'editconflict' ? { latest_revid: context.page.latest?.revid ?? null } : {});
    }
  }

  /**
   * The base revision, checked against what is stored: a base older than the stored latest is a
   * 409 at once. A base not stored yet (made outside the service) is checked by the wiki's answer
   * in `context`: if it is the page's latest there, it is the page's.
   */
  private async checkBase(ctx: RequestContext, domain: string, req: SaveRequest): Promise<Base | undefined> {
    const latest = await this.storedLatest(ctx, domain, req.title);
    if (req.baseRevid === undefined) {
      if (latest !== null) throw conflict(`${req.title} exists (revision ${latest}); a save needs base_revid.`, latest, 'page-exists');
      return undefined;
    }
    if (latest !== null && req.baseRevid < latest && !req.mergeStale) {
      throw conflict(`Revision ${req.baseRevid} is not the latest revision of ${req.title} (${latest}).`, latest);
    }
    const row = await this.service.revisions.table(domain).get(ctx, req.title, req.baseRevid);
    if (row?.deleted) throw new HttpError(404, 'page-deleted', `${req.title} has been deleted.`);
    return { rev: req.baseRevid, timestamp: row?.timestamp ?? undefined, tid: row?.tid ?? null };
  }

  /**
   * A base the wiki has moved past although the service had it as the latest (its own state was
   * behind): not refused here. The edit goes to the wiki with the base's own timestamp, and the
   * wiki merges it with the revisions made since, as it does for its own editors, or answers
   * editconflict (409). A base of another page, or none, is a 400.
   */
  private async behindBase(ctx: RequestContext, domain: string, req: SaveRequest, latest: number | null): Promise<string> {
    this.refreshLatestLater(ctx, domain, req.title);
    try {
      const row = await this.service.revisions.revision(ctx, domain, req.title, req.baseRevid!, false);
      if (row.timestamp) return row.timestamp;
    } catch (e) {
      if (e instanceof RevisionMoved) throw badRequest(`Revision ${req.baseRevid} belongs to ${e.title}, not to ${req.title}.`, 'base-of-another-page');
      if (e instanceof HttpError && e.status === 404 && e.problemType !== 'urn:problem:page-deleted') {
        throw badRequest(`There is no revision ${req.baseRevid} of ${req.title}.`, 'unknown-base-revision');
      }
      // A base since hidden or of a deleted page: there is nothing the wiki could merge with.
      if (!(e instanceof HttpError && (e.status === 404 || e.status === 403))) throw e;
    }
    // Without the base's time the wiki could not merge safely.
    throw conflict(`${req.title} was edited meanwhile: its latest revision is ${latest}, not ${req.baseRevid}.`, latest);
  }

  /** The latest revision stored for the page, if it exists (a deleted page has none). */
  private async storedLatest(ctx: RequestContext, domain: string, title: string): Promise<number | null> {
    const newest = await this.service.revisions.table(domain).newest(ctx, title);
    if (!newest || newest.deleted) return null;
    return newest.latest_rev ?? newest.rev;
  }

  /**
   * Edited HTML as wikitext, serialised selectively from the render it was edited from (`tid`,
   * else the base revision's newest), as a save of it would be; a base need not be the latest.
   */
  async htmlAsWikitext(ctx: RequestContext, domain: string, req: Pick<SaveRequest, 'title' | 'html' | 'tid' | 'dataMw' | 'baseRevid'>): Promise<string> {
    const row = req.baseRevid === undefined ? undefined : await this.service.revisions.table(domain).get(ctx, req.title, req.baseRevid);
    const base = req.baseRevid === undefined ? undefined : { rev: req.baseRevid, timestamp: row?.timestamp ?? undefined, tid: row?.tid ?? null };
    return this.wikitextOf(ctx, domain, { ...req, credentials: {} }, base);
  }

  /** The wikitext to save: as given, or the edited HTML turned into wikitext (selser from its render). */
  private async wikitextOf(ctx: RequestContext, domain: string, req: SaveRequest, base: Base | undefined): Promise<string> {
    if (req.wikitext !== undefined) return req.wikitext;
    const render = await this.originalRender(ctx, domain, req, base);
    let html = req.html!;
    if (req.section !== undefined) {
      // The edited section in its place in the render it was read from (2.x, as it was served):
      // serialised selectively, every other section keeps its exact wikitext.
      const whole = render && withSection(await this.html2.textOf(domain, render), req.section, html);
      if (!whole) throw new HttpError(404, 'section-not-found', `The render edited has no editable section ${req.section}.`);
      html = whole;
    }
    const part = await htmlToWikitext(this.service.wiki(domain), req.title, html, { render, revid: base?.rev, dataMw: req.dataMw });
    return part.body.toString('utf8');
  }

  /** The render the HTML was edited from: the one named by tid, else the base revision's newest stored. */
  private async originalRender(ctx: RequestContext, domain: string, req: SaveRequest, base: Base | undefined): Promise<Render | undefined> {
    if (req.tid === undefined) return base ? this.service.renders.newestOf(ctx, domain, req.title, base.rev) : undefined;
    const render = await this.service.renders.byTid(ctx, domain, req.title, req.tid);
    if (!render) throw badRequest(`${req.tid} is not a stored render of ${req.title}.`, 'unknown-render');
    if (base && render.rev !== base.rev) throw badRequest(`Render ${req.tid} is of revision ${render.rev}, not of base_revid ${base.rev}.`, 'render-of-another-revision');
    return render;
  }

  /** Token and caller from the wiki, and its own latest revision: an edit made outside the service is a 409 here. */
  private async context(ctx: RequestContext, domain: string, wiki: Wiki, req: SaveRequest): Promise<EditContext & { baseTimestamp?: string }> {
    let context: EditContext;
    try {
      context = await wiki.api.editContext(req.title, req.credentials);
    } catch (e) {
      if (e instanceof ApiError) throw editRefused(e);
      throw e;
    }
    const latest = context.page.latest?.revid ?? null;
    if (req.baseRevid === undefined && context.page.exists) {
      this.refreshLatestLater(ctx, domain, req.title);
      throw conflict(`${req.title} was created meanwhile (revision ${latest}).`, latest, 'page-exists');
    }
    if (req.baseRevid !== undefined && !context.page.exists) {
      this.refreshLatestLater(ctx, domain, req.title);
      throw new HttpError(404, 'page-deleted', `${req.title} was deleted meanwhile.`);
    }
    if (req.baseRevid !== undefined && latest !== req.baseRevid) return { ...context, baseTimestamp: await this.behindBase(ctx, domain, req, latest) };
    return context;
  }

  /** Stored state fell behind the wiki: the next reader gets the wiki's latest (in the background). */
  private refreshLatestLater(ctx: RequestContext, domain: string, title: string): void {
    this.service.revisions.latest(ctx, domain, title, true).catch(() => undefined);
  }

  /**
   * The edit the wiki accepted, recorded as one transaction (save-steps.ts). It is stored before
   * it runs, so a process that dies meanwhile leaves it to another to finish. Answers the render's tid.
   */
  private async record(
    ctx: RequestContext, domain: string, req: SaveRequest, lock: string, base: Base | undefined, context: EditContext, result: EditResult, text: string,
  ): Promise<string | null> {
    const rev = result.newrevid!;
    const row = {
      page_id: result.pageid ?? null, timestamp: result.newtimestamp ?? new Date().toISOString(),
      user_id: context.user.id, user_text: context.user.name, comment: req.comment ?? '', minor: !!req.minor,
      size: Buffer.byteLength(text), content_model: 'wikitext',
    };
    const txn = saveTransaction({ domain, title: req.title, rev, from: base?.rev ?? null, row, lock, purge: this.service.purger.enabled, more: req.alsoRecord?.(rev) });
    try {
      const res = await ctx.request({ method: 'PUT', uri: `/${domain}/sys/transactions/${newTid()}`, headers: { 'content-type': 'application/json' }, body: txn });
      return renderedTid(res.body);
    } catch (err) {
      // The wiki has the edit whatever happens here: the stored transaction will be finished later.
      this.log.warn({ err, domain, title: req.title, rev }, 'recording a save is not finished yet');
      return (await this.service.revisions.table(domain).get(ctx, req.title, rev).catch(() => undefined))?.tid ?? null;
    }
  }
}

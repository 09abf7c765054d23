import { HttpError, badRequest } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import type { Part, TransformTarget } from '../../../upstream/parsoid.js';
import { htmlToWikitext } from './html-to-wikitext.js';
import type { PageService } from '../read/page-service.js';
import { RevisionMoved } from '../model/page-moves.js';
import type { Render } from '../model/render.js';
import { STASH_SECONDS, TransformStash } from '../tables/transform-stash.js';

/**
 * Parsoid's transforms for a domain, with the service's knowledge added: the revision named is
 * checked to be the page's, and HTML of a stored render is serialised selectively from it.
 */
export class Transforms {
  private readonly stash = new TransformStash();

  constructor(private readonly service: Pick<PageService, 'renders' | 'revisions' | 'wiki'>) {}

  createTables(ctx: RequestContext, domain: string): Promise<void> {
    return this.stash.create(ctx, domain);
  }

  /** Checks that `revid` is a revision of `title` (a moved page's revision is refused: it is another page's now). */
  async check(ctx: RequestContext, domain: string, target: TransformTarget): Promise<void> {
    if (target.title === undefined || target.revid === undefined) return;
    try {
      await this.service.revisions.revision(ctx, domain, target.title, target.revid, false);
    } catch (e) {
      if (e instanceof RevisionMoved) throw badRequest(`Revision ${target.revid} belongs to ${e.title}, not to ${target.title}.`, 'revision-of-another-page');
      throw e;
    }
  }

  /**
   * Wikitext to HTML. Given no wikitext, the named revision's (the page's latest when only the
   * title is named: a page the wiki lacks is a 404), as MediaWiki's REST API renders it; given
   * neither, a 400. A content model other than wikitext (`json`) is Parsoid's to render.
   */
  async toHtml(ctx: RequestContext, domain: string, target: TransformTarget, wikitext: string | undefined, bodyOnly: boolean, contentModel?: string): Promise<Part> {
    await this.check(ctx, domain, target);
    const options = { body_only: bodyOnly, ...(contentModel ? { contentmodel: contentModel } : {}) };
    if (wikitext !== undefined) return this.service.wiki(domain).transform('wikitext', 'html', target, { wikitext, ...options });
    if (target.title === undefined) throw badRequest('No title or wikitext was provided.', 'invalid-transform');
    const revid = target.revid ?? (await this.service.revisions.latest(ctx, domain, target.title, false)).rev;
    return this.service.wiki(domain).transform('wikitext', 'html', { ...target, revid }, options);
  }

  /**
   * Parsoid's lint of wikitext (a JSON array of lint errors, each with its type, source range
   * `dsr` and `params`), or, given no wikitext, of the named revision's (the page's latest when
   * only the title is named: a page the wiki lacks is a 404).
   */
  async toLint(ctx: RequestContext, domain: string, target: TransformTarget, wikitext: string | undefined): Promise<Part> {
    await this.check(ctx, domain, target);
    if (wikitext === undefined && target.title === undefined) throw badRequest('No title or wikitext was provided.', 'invalid-transform');
    const revid = wikitext === undefined && target.revid === undefined ? (await this.service.revisions.latest(ctx, domain, target.title!, false)).rev : target.revid;
    return this.service.wiki(domain).transform('wikitext', 'lint', { ...target, revid }, wikitext === undefined ? {} : { wikitext });
  }

  /**
   * Wikitext to HTML, kept (`stash`) with its data-parsoid so a later transform of the edited
   * HTML, naming the answer's ETag `"{rev}/{tid}/stash"` in If-Match, is serialised selectively
   * from it. A wiki without Parsoid's page bundles (the core REST API) answers plain HTML, no ETag.
   */
  async toStashedHtml(ctx: RequestContext, domain: string, target: TransformTarget, wikitext: string, bodyOnly: boolean): Promise<{ part: Part; etag?: string }> {
    if (target.title === undefined) throw badRequest('A stashed transform needs the page title in its path.', 'invalid-transform');
    await this.check(ctx, domain, target);
    let bundle: Part;
    try {
      bundle = await this.service.wiki(domain).transform('wikitext', 'pagebundle', target, { wikitext, body_only: bodyOnly });
    } catch (e) {
      if (e instanceof HttpError && e.status === 501) return { part: await this.toHtml(ctx, domain, target, wikitext, bodyOnly) };
      throw e;
    }
    const json = JSON.parse(bundle.body.toString('utf8')) as { html: { headers?: Record<string, string>; body: string }; 'data-parsoid': unknown; 'data-mw'?: unknown };
    const original = { html: json.html, 'data-parsoid': json['data-parsoid'], ...(json['data-mw'] ? { 'data-mw': json['data-mw'] } : {}) };
    const rev = target.revid ?? 0;
    const tid = await this.stash.put(ctx, domain, target.title, rev, original);
    const contentType = json.html.headers?.['content-type'] ?? 'text/html; charset=utf-8';
    return { part: { contentType, body: Buffer.from(json.html.body) }, etag: `"${rev}/${tid}/stash"` };
  }

  /** The stored render an edit started from: named by tid, else the revision's newest; none is fine. */
  private async original(ctx: RequestContext, domain: string, target: TransformTarget, tid: string | undefined): Promise<Render | undefined> {
    const { title, revid } = target;
    if (title === undefined || revid === undefined) {
      if (tid !== undefined) throw badRequest('A tid needs the title and revision of its render.', 'invalid-transform');
      return undefined;
    }
    if (tid === undefined) return this.service.renders.newestOf(ctx, domain, title, revid);
    const render = await this.service.renders.byTid(ctx, domain, title, tid.toLowerCase());
    if (!render || render.rev !== revid) throw badRequest(`${tid} is not a stored render of revision ${revid} of ${title}.`, 'unknown-render');
    return render;
  }

  async toWikitext(
    ctx: RequestContext, domain: string, target: TransformTarget, html: string,
    options: { tid?: string; stashed?: boolean; dataMw?: unknown; scrubWikitext?: boolean; original?: Record<string, unknown>; contentModel?: string } = {},
  ): Promise<Part> {
    await this.check(ctx, domain, target);
    if (options.stashed && options.tid !== undefined) {
      // A stashed transform, else a stored render (page/html?stash=true names one with /stash too).
      const stashed = target.title === undefined ? undefined : await this.stash.get(ctx, domain, target.title, options.tid.toLowerCase());
      if (stashed) {
        return htmlToWikitext(this.service.wiki(domain), target.title, html, { revid: target.revid, dataMw: options.dataMw, scrubWikitext: options.scrubWikitext, original: stashed.original });
      }
    }
    let render: Render | undefined;
    try {
      render = options.original ? undefined : await this.original(ctx, domain, target, options.tid);
    } catch (e) {
      if (options.stashed && e instanceof HttpError && (e.problemType === 'urn:problem:unknown-render' || e.problemType === 'urn:problem:invalid-transform')) {
        throw new HttpError(412, 'stash-not-found', `${options.tid} is neither a stashed transform nor a stored render of ${target.title} (a stash is kept ${STASH_SECONDS / 3600} hours).`);
      }
      throw e;
    }
    return htmlToWikitext(this.service.wiki(domain), target.title, html, { render, revid: target.revid, ...options });
  }
}

import { badRequest } from '../../errors.js';
import type { RequestContext } from '../../router/types.js';
import type { Part } from '../../upstream/parsoid.js';
import { htmlToWikitext } from './html-to-wikitext.js';
import { RevisionMoved, type PageService } from './page-service.js';
import type { Render } from './renders.js';

/** The page and revision a transform is for (both optional). */
export interface TransformTarget {
  title?: string;
  revid?: number;
}

/**
 * Parsoid's transforms for a domain, with the service's knowledge added: the revision named is
 * checked to be the page's, and HTML of a stored render is serialised selectively from it.
 */
export class Transforms {
  constructor(private readonly service: PageService) {}

  /** Checks that `revid` is a revision of `title` (a moved page's revision is refused: it is another page's now). */
  async check(ctx: RequestContext, domain: string, target: TransformTarget): Promise<void> {
    if (target.title === undefined || target.revid === undefined) return;
    try {
      await this.service.revision(ctx, domain, target.title, target.revid, false);
    } catch (e) {
      if (e instanceof RevisionMoved) throw badRequest(`Revision ${target.revid} belongs to ${e.title}, not to ${target.title}.`, 'revision-of-another-page');
      throw e;
    }
  }

  async toHtml(ctx: RequestContext, domain: string, target: TransformTarget, wikitext: string, bodyOnly: boolean): Promise<Part> {
    await this.check(ctx, domain, target);
    return this.service.wiki(domain).transform('wikitext', 'html', target, { wikitext, body_only: bodyOnly });
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
    options: { tid?: string; dataMw?: unknown; scrubWikitext?: boolean; original?: Record<string, unknown> } = {},
  ): Promise<Part> {
    await this.check(ctx, domain, target);
    const render = options.original ? undefined : await this.original(ctx, domain, target, options.tid);
    return htmlToWikitext(this.service.wiki(domain), target.title, html, { render, revid: target.revid, ...options });
  }
}

import { badRequest } from '../../errors.js';
import type { OperationSpec, RequestContext, Response, Route, RouteRequest } from '../../router/types.js';
import type { Part } from '../../upstream/parsoid.js';
import { htmlToWikitext } from './html-to-wikitext.js';
import { RevisionMoved, type PageService } from './page-service.js';
import type { Render } from './renders.js';
import { parseDataMw, type NormalizeTitle } from './save-routes.js';
import { transformSpecs } from './write-spec.js';

const transformed = (part: Part): Response => ({ status: 200, headers: { 'content-type': part.contentType, 'cache-control': 'no-store' }, body: part.body });

/**
 * `POST /transform/wikitext/to/html[/{title}[/{revid}]]` and `/transform/html/to/wikitext[...]`:
 * Parsoid's transforms with Wikimedia's REST API conventions (form or JSON bodies, body_only).
 * HTML of a revision whose render is stored is serialised selectively from that render.
 */
export function transformRoutes(service: PageService, normalize: NormalizeTitle): Route[] {
  /** The page and revision a transform is for, the revision checked to be the page's. */
  async function target(req: RouteRequest, ctx: RequestContext): Promise<{ title?: string; revid?: number }> {
    if (req.params.title === undefined) return {};
    const title = await normalize(req);
    if (req.params.revid === undefined) return { title };
    const revid = Number(req.params.revid);
    try {
      await service.revision(ctx, req.domain, title, revid, false);
    } catch (e) {
      if (e instanceof RevisionMoved) throw badRequest(`Revision ${revid} belongs to ${e.title}, not to ${title}.`, 'revision-of-another-page');
      throw e;
    }
    return { title, revid };
  }

  /** The stored render an edit started from: named by tid, else the revision's newest; none is fine. */
  async function original(req: RouteRequest, ctx: RequestContext, title: string | undefined, revid: number | undefined, tid: string | undefined): Promise<Render | undefined> {
    if (title === undefined || revid === undefined) {
      if (tid !== undefined) throw badRequest('A tid needs the title and revision of its render in the path.', 'invalid-transform');
      return undefined;
    }
    if (tid === undefined) return service.renders.newestOf(ctx, req.domain, title, revid);
    const render = await service.renders.byTid(ctx, req.domain, title, tid.toLowerCase());
    if (!render || render.rev !== revid) throw badRequest(`${tid} is not a stored render of revision ${revid} of ${title}.`, 'unknown-render');
    return render;
  }

  const toHtml: Route['handler'] = async (req, ctx) => {
    const body = req.body as { wikitext: string; body_only?: boolean };
    const where = await target(req, ctx);
    return transformed(await service.wiki(req.domain).parsoid.transform('wikitext', 'html', where, { wikitext: body.wikitext, body_only: !!body.body_only }));
  };

  const toWikitext: Route['handler'] = async (req, ctx) => {
    const body = req.body as { html: string; tid?: string; 'data-mw'?: unknown };
    const { title, revid } = await target(req, ctx);
    const render = await original(req, ctx, title, revid, body.tid);
    return transformed(await htmlToWikitext(service.wiki(req.domain), title, body.html, { render, revid, dataMw: parseDataMw(body['data-mw']) }));
  };

  const three = (path: string, handler: Route['handler'], specs: Record<'bare' | 'title' | 'revision', OperationSpec>): Route[] => [
    { method: 'POST', path, body: 'form', spec: specs.bare, handler },
    { method: 'POST', path: `${path}/{title}`, body: 'form', spec: specs.title, handler },
    { method: 'POST', path: `${path}/{title}/{revid}`, body: 'form', spec: specs.revision, handler },
  ];
  return [...three('/transform/wikitext/to/html', toHtml, transformSpecs.toHtml), ...three('/transform/html/to/wikitext', toWikitext, transformSpecs.toWikitext)];
}

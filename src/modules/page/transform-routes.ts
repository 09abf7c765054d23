import type { OperationSpec, Response, Route, RouteRequest } from '../../router/types.js';
import type { Part } from '../../upstream/parsoid.js';
import { parseDataMw, type NormalizeTitle } from './save-routes.js';
import type { TransformTarget, Transforms } from './transforms.js';
import { transformSpecs } from './write-spec.js';

const transformed = (part: Part): Response => ({ status: 200, headers: { 'content-type': part.contentType, 'cache-control': 'no-store' }, body: part.body });

/** The optional `{title}` and `{revid}` of a transform's path, the title normalised. */
export async function targetOf(req: RouteRequest, normalize: NormalizeTitle, revParam = 'revid'): Promise<TransformTarget> {
  if (req.params.title === undefined) return {};
  const title = await normalize(req);
  const revid = req.params[revParam];
  return revid === undefined ? { title } : { title, revid: Number(revid) };
}

/** Each transform at its three paths: bare, for a page, for a revision of a page. */
export function threePaths(path: string, revParam: string, handler: Route['handler'], specs: Record<'bare' | 'title' | 'revision', OperationSpec>): Route[] {
  return [
    { method: 'POST', path, body: 'form', spec: specs.bare, handler },
    { method: 'POST', path: `${path}/{title}`, body: 'form', spec: specs.title, handler },
    { method: 'POST', path: `${path}/{title}/{${revParam}}`, body: 'form', spec: specs.revision, handler },
  ];
}

/**
 * `POST /transform/wikitext/to/html[/{title}[/{revid}]]` and `/transform/html/to/wikitext[...]`:
 * Parsoid's transforms with Wikimedia's REST API conventions (form or JSON bodies, body_only).
 * HTML of a revision whose render is stored is serialised selectively from that render.
 */
export function transformRoutes(transforms: Transforms, normalize: NormalizeTitle): Route[] {
  const toHtml: Route['handler'] = async (req, ctx) => {
    const body = req.body as { wikitext: string; body_only?: boolean };
    return transformed(await transforms.toHtml(ctx, req.domain, await targetOf(req, normalize), body.wikitext, !!body.body_only));
  };
  const toWikitext: Route['handler'] = async (req, ctx) => {
    const body = req.body as { html: string; tid?: string; 'data-mw'?: unknown };
    return transformed(await transforms.toWikitext(ctx, req.domain, await targetOf(req, normalize), body.html, { tid: body.tid, dataMw: parseDataMw(body['data-mw']) }));
  };
  return [
    ...threePaths('/transform/wikitext/to/html', 'revid', toHtml, transformSpecs.toHtml),
    ...threePaths('/transform/html/to/wikitext', 'revid', toWikitext, transformSpecs.toWikitext),
  ];
}

import { withBody } from '../../../router/typed-body.js';
import { badRequest } from '../../../util/errors.js';
import type { OperationSpec, Response, Route, RouteRequest } from '../../../router/types.js';
import type { Part } from '../../../upstream/parsoid.js';
import type { NormalizeTitle } from '../model/title-url.js';
import { parseDataMw } from './save-routes.js';
import type { TransformTarget } from '../../../upstream/parsoid.js';
import type { Transforms } from './transforms.js';
import { toHtmlBody, toWikitextBody, transformSpecs } from './write-spec.js';

const transformed = (part: Part): Response => ({ status: 200, headers: { 'content-type': part.contentType, 'cache-control': 'no-store' }, body: part.body });

/** The optional `{title}` and `{revid}` of a transform's path, the title normalised. */
export async function targetOf(req: RouteRequest, normalize: NormalizeTitle, revParam = 'revid'): Promise<TransformTarget> {
  if (req.params.title === undefined) return {};
  const title = await normalize(req);
  const revid = req.params[revParam];
  if (revid === undefined) return { title };
  // Digits past a safe integer name no revision (MediaWiki's ids are 32-bit) and cannot be read exactly.
  if (!Number.isSafeInteger(Number(revid))) throw badRequest(`Revision ${revid} is not a revision id: one is at most ${Number.MAX_SAFE_INTEGER}.`, 'invalid-revision');
  return { title, revid: Number(revid) };
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
  const toHtml = withBody(toHtmlBody, async (req, ctx) =>
    transformed(await transforms.toHtml(ctx, req.domain, await targetOf(req, normalize), req.body.wikitext, !!req.body.body_only)),
  );
  const toWikitext = withBody(toWikitextBody, async (req, ctx) => {
    const { html, tid, 'data-mw': dataMw } = req.body;
    return transformed(await transforms.toWikitext(ctx, req.domain, await targetOf(req, normalize), html, { tid, dataMw: parseDataMw(dataMw) }));
  });
  return [
    ...threePaths('/transform/wikitext/to/html', 'revid', toHtml, transformSpecs.toHtml),
    ...threePaths('/transform/html/to/wikitext', 'revid', toWikitext, transformSpecs.toWikitext),
  ];
}

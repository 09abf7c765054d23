import { badRequest, HttpError } from '../../../util/errors.js';
import { withBody } from '../../../router/typed-body.js';
import type { Handler, Response, Route, RouteRequest } from '../../../router/types.js';
import type { PageSaver } from '../edit/page-saver.js';
import { credentialsOf, parseDataMw, parseOriginal } from '../edit/save-routes.js';
import { targetOf } from '../edit/transform-routes.js';
import { MediaWikiError } from './errors.js';
import type { PageApi } from '../page-api.js';
import { titleSegment } from '../model/title-url.js';

/** `PUT page/{title}` as MediaWiki takes it. */
const updateBody = {
  type: 'object', required: ['source', 'comment'],
  properties: {
    source: { type: 'string' }, comment: { type: 'string' }, content_model: { type: 'string' }, token: { type: 'string' },
    latest: { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 }, timestamp: { type: 'string' } } },
  },
} as const;
/** `POST page` as MediaWiki takes it. */
const createBody = {
  type: 'object', required: ['title', 'source', 'comment'],
  properties: { title: { type: 'string', minLength: 1 }, source: { type: 'string' }, comment: { type: 'string' }, content_model: { type: 'string' }, token: { type: 'string' } },
} as const;
const toHtmlBody = {
  type: 'object', required: ['wikitext'],
  properties: { wikitext: { type: 'string' }, body_only: { type: 'boolean' }, bodyOnly: { type: 'boolean' }, stash: { type: 'boolean' }, contentmodel: { type: 'string' }, original: { type: ['object', 'string'] } },
} as const;
const toLintBody = {
  type: 'object',
  properties: { wikitext: { type: 'string' }, contentmodel: { type: 'string' } },
} as const;
const toWikitextBody = {
  type: 'object', required: ['html'],
  properties: {
    html: { type: ['string', 'object'] }, scrub_wikitext: { type: 'boolean' }, contentmodel: { type: 'string' },
    original: { type: ['object', 'string'] }, 'data-mw': { type: ['object', 'string'] },
  },
} as const;

/** The render an `If-Match` names: `"{rev}/{tid}[/{flavor}/html]"` as served, or a stash's `"{rev}/{tid}/stash"`. */
function renderOfIfMatch(value: string | undefined): { rev: number; tid: string; stashed: boolean } | undefined {
  const m = /^\s*(?:W\/)?"?(\d+)\/([0-9a-fA-F-]{36})((?:\/[a-z_]+)*)"?\s*$/.exec(value ?? '');
  return m ? { rev: Number(m[1]), tid: m[2]!.toLowerCase(), stashed: m[3]!.split('/').includes('stash') } : undefined;
}

/**
 * MediaWiki's check of a write's CSRF token, made as it makes it, before anything about the page:
 * a write not authenticated in a way safe against CSRF (OAuth's `Authorization`) needs `token`,
 * else the action API's `missingparam` (400); an anonymous caller's (no session cookie) can only
 * be the logged-out token `+\`, else `badtoken` (403), as the wiki would answer it.
 */
function checkToken(req: RouteRequest, token: string | undefined): void {
  if (req.headers.authorization) return;
  const given = token || req.headers['x-csrf-token'];
  if (!given) throw new MediaWikiError(400, 'apierror-missingparam', 'The "token" parameter must be set.', { actionModuleErrorCode: 'missingparam' });
  if (!req.headers.cookie && given !== LOGGED_OUT_TOKEN) {
    throw new HttpError(403, 'bad-token', 'The wiki refused the edit: Invalid CSRF token.', { extensions: { wiki_code: 'badtoken', wiki_message: 'Invalid CSRF token.' } });
  }
}

/** The CSRF token of a caller without a session (MediaWiki's LoggedOutEditToken). */
const LOGGED_OUT_TOKEN = '+\\';

const requestBody = (schema: object) => ({ required: true, content: { 'application/json': { schema }, 'application/x-www-form-urlencoded': { schema }, 'multipart/form-data': { schema } } });
const tags = ['MediaWiki REST API'];
const titleParam = { name: 'title', in: 'path', required: true, schema: { type: 'string' } };
const revisionParam = { name: 'revision', in: 'path', required: true, schema: { type: 'string', pattern: '^\\d+$' } };

/**
 * The writes of MediaWiki's REST API the service makes itself: saves (`PUT page/{title}`,
 * `POST page`) through its own save path (a transaction, the page's CAS, the render stored at
 * once), and the transforms, so HTML it served (`flavor=stash` or not) is serialised back
 * selectively from the render its ETag names. A content model other than wikitext is the wiki's
 * to handle: passed on.
 */
export function restPhpWrites(api: PageApi, saver: PageSaver, pageAnswer: (req: RouteRequest, ctx: Parameters<Handler>[1], title: string) => Promise<Response>, passThrough: Handler): Route[] {
  const { normalize, transforms } = api;

  const saved = async (req: RouteRequest, ctx: Parameters<Handler>[1], title: string, status: 200 | 201): Promise<Response> => {
    const page = await pageAnswer(req, ctx, title);
    const headers: Record<string, string> = { ...page.headers, 'cache-control': 'no-store' };
    if (status === 201) headers.location = `/${req.domain}/rest.php/v1/page/${titleSegment(title)}`;
    return { ...page, status, headers };
  };

  const update = withBody(updateBody, async (req, ctx) => {
    const body = req.body;
    if (body.content_model !== undefined && body.content_model !== 'wikitext') return passThrough(req, ctx);
    checkToken(req, body.token);
    const title = await normalize(req);
    const result = await saver.save(ctx, req.domain, {
      title, wikitext: body.source, baseRevid: body.latest?.id, mergeStale: true, comment: body.comment, credentials: credentialsOf(req, ctx, body.token),
    });
    return saved(req, ctx, result.title, body.latest === undefined && result.status === 201 ? 201 : 200);
  });

  const create = withBody(createBody, async (req, ctx) => {
    const body = req.body;
    if (body.content_model !== undefined && body.content_model !== 'wikitext') return passThrough(req, ctx);
    checkToken(req, body.token);
    const title = await normalize({ ...req, params: { ...req.params, title: body.title } });
    const result = await saver.save(ctx, req.domain, { title, wikitext: body.source, comment: body.comment, credentials: credentialsOf(req, ctx, body.token) });
    return saved(req, ctx, result.title, 201);
  });

  const transformed = (part: { contentType: string; body: Buffer }, etag?: string): Response => ({
    status: 200, headers: { 'content-type': part.contentType, 'cache-control': 'private, max-age=0, s-maxage=0', ...(etag ? { etag } : {}) }, body: part.body,
  });

  const toHtml = withBody(toHtmlBody, async (req, ctx) => {
    const body = req.body;
    const target = await targetOf(req, normalize, 'revision');
    if (!body.stash && req.query.get('stash') !== 'true') return transformed(await transforms.toHtml(ctx, req.domain, target, body.wikitext, !!(body.body_only ?? body.bodyOnly)));
    const { part, etag } = await transforms.toStashedHtml(ctx, req.domain, target, body.wikitext, !!(body.body_only ?? body.bodyOnly));
    return transformed(part, etag);
  });

  const toWikitext = withBody(toWikitextBody, async (req, ctx) => {
    const body = req.body;
    const target = await targetOf(req, normalize, 'revision');
    const html = typeof body.html === 'string' ? body.html : (body.html as { body?: unknown }).body;
    if (typeof html !== 'string') throw badRequest('html is the HTML, or {body: the HTML}.', 'invalid-transform');
    const ifMatch = req.headers['if-match'];
    const named = renderOfIfMatch(ifMatch);
    if (ifMatch && !named) throw new HttpError(412, 'precondition-failed', 'If-Match names no render this service served (an ETag "{revision}/{tid}/…").');
    const where = target.title !== undefined && target.revid === undefined && named && named.rev > 0 ? { ...target, revid: named.rev } : target;
    const original = parseOriginal(body.original);
    return transformed(await transforms.toWikitext(ctx, req.domain, where, html, {
      tid: named?.tid, stashed: named?.stashed, dataMw: parseDataMw(body['data-mw']), scrubWikitext: !!body.scrub_wikitext, original,
    }));
  });

  const toLint = withBody(toLintBody, async (req, ctx) => {
    const target = await targetOf(req, normalize, 'revision');
    return transformed(await transforms.toLint(ctx, req.domain, target, req.body.wikitext));
  });

  const transformSpec = (summary: string, body: object, params: object[]) => ({ tags, summary, parameters: params, requestBody: requestBody(body) });
  const three = (path: string, handler: Handler, summary: string, body: object): Route[] => [
    { method: 'POST', path, body: 'form', handler, spec: transformSpec(summary, body, []) },
    { method: 'POST', path: `${path}/{title}`, body: 'form', handler, spec: transformSpec(`${summary}, for a page`, body, [titleParam]) },
    { method: 'POST', path: `${path}/{title}/{revision}`, body: 'form', handler, spec: transformSpec(`${summary}, for a revision`, body, [titleParam, revisionParam]) },
  ];
  return [
    { method: 'PUT', path: '/page/{title}', body: 'json', handler: update, spec: { tags, summary: "Saves a page's new source through the service (latest.id: the base revision)", parameters: [titleParam], requestBody: { required: true, content: { 'application/json': { schema: updateBody } } } } },
    { method: 'POST', path: '/page', body: 'json', handler: create, spec: { tags, summary: 'Creates a page through the service', requestBody: { required: true, content: { 'application/json': { schema: createBody } } } } },
    ...three('/transform/wikitext/to/html', toHtml, 'Wikitext to HTML (stash: kept for the transform back)', toHtmlBody),
    ...three('/transform/wikitext/to/lint', toLint, "Wikitext's lint errors (Parsoid's), or a revision's", toLintBody),
    ...three('/transform/html/to/wikitext', toWikitext, 'HTML to wikitext, selectively from the render or stash If-Match names', toWikitextBody),
  ];
}

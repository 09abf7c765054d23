import { badRequest, HttpError } from '../../util/errors.js';
import { withBody } from '../../router/typed-body.js';
import type { Handler, Response, Route, RouteRequest } from '../../router/types.js';
import { ParsoidRefusal } from '../../upstream/parsoid.js';
import { MediaWikiBody, MediaWikiError, transformProblem, withinStashLimit } from './errors.js';
import { credentialsOf, parseDataMw, parseOriginal, renderOfETag, targetOf, type PageDoor as PageApi } from '../../modules/page/door.js';

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
/** A flag as MediaWiki's clients send it: JSON's true or 1, a form's `true` or `1`. */
const flag = { type: ['boolean', 'integer', 'string'] } as const;
const isSet = (value: boolean | number | string | undefined) => value === true || value === 1 || value === 'true' || value === '1';
/** Wikitext as text, or as Parsoid's `{headers, body}`. */
const wikitextPart = { type: ['string', 'object'], properties: { body: { type: 'string' } } } as const;
const toHtmlBody = {
  type: 'object',
  properties: {
    wikitext: wikitextPart, body_only: flag, bodyOnly: flag, stash: flag, contentmodel: { type: 'string' },
    original: { type: ['object', 'string'], properties: { wikitext: wikitextPart } },
  },
} as const;
/**
 * Whether an `Accept` header takes the 2.x HTML Parsoid's transforms answer, as MediaWiki's
 * Parsoid handler decides it: no header, a range without a profile, or the HTML spec's 2.x (at
 * most 2.6); an older or newer version, or another profile, alone, is a 406.
 */
function acceptsHtml2(accept: string | undefined): boolean {
  if (!accept?.trim()) return true;
  return accept.split(',').some((range) => {
    const [type = '', ...params] = range.split(';').map((p) => p.trim());
    const param = (name: string) => params.find((p) => p.toLowerCase().startsWith(`${name}=`))?.slice(name.length + 1).replace(/^"|"$/g, '');
    if (!['*/*', 'text/*', 'text/html'].includes(type.toLowerCase()) || Number(param('q') ?? 1) <= 0) return false;
    const profile = param('profile');
    if (profile === undefined) return true;
    const version = /^https?:\/\/www\.mediawiki\.org\/wiki\/Specs\/HTML\/(\d+)\.(\d+)\.\d+$/.exec(profile);
    return !!version && version[1] === '2' && Number(version[2]) <= 6;
  });
}

/** The text of a wikitext part, if it is one. */
const textOf = (part: unknown): string | undefined =>
  typeof part === 'string' ? part : typeof part === 'object' && part !== null && typeof (part as { body?: unknown }).body === 'string' ? (part as { body: string }).body : undefined;
const toLintBody = {
  type: 'object',
  properties: { wikitext: { type: 'string' }, contentmodel: { type: 'string' } },
} as const;
const toWikitextBody = {
  type: 'object',
  properties: {
    html: { type: ['string', 'object'] }, scrub_wikitext: { type: 'boolean' }, contentmodel: { type: 'string' },
    original: { type: ['object', 'string'] }, 'data-mw': { type: ['object', 'string'] },
  },
} as const;

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
/** A revision segment MediaWiki's router takes empty (none). */
const revisionParamOrEmpty = { ...revisionParam, schema: { type: 'string', pattern: '^\\d*$' } };

/** How a save is answered: the page as `page/{title}` answers it, and the URL of a page created. */
export interface SavedAnswers {
  pageAnswer: (req: RouteRequest, ctx: Parameters<Handler>[1], title: string) => Promise<Response>;
  createdAt: (domain: string, title: string) => Promise<string>;
}

/**
 * The writes of MediaWiki's REST API the service makes itself: saves (`PUT page/{title}`,
 * `POST page`) through its own save path (a transaction, the page's CAS, the render stored at
 * once), and the transforms, so HTML it served (`flavor=stash` or not) is serialised back
 * selectively from the render its ETag names. A content model other than wikitext is the wiki's
 * to handle: passed on.
 */
export function restPhpWrites(api: PageApi, answers: SavedAnswers, passThrough: Handler): Route[] {
  const { saver } = api;
  const { normalize, transforms } = api;

  const saved = async (req: RouteRequest, ctx: Parameters<Handler>[1], title: string, status: 200 | 201): Promise<Response> => {
    const page = await answers.pageAnswer(req, ctx, title);
    const headers: Record<string, string> = { ...page.headers, 'cache-control': 'no-store' };
    // Absolute, as MediaWiki gives it: its clients follow it as it is.
    if (status === 201) headers.location = await answers.createdAt(req.domain, title);
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

  /**
   * A transform's handler as MediaWiki's router and handlers take it: an empty title or revision
   * segment is none (`html/to/wikitext/Main_Page/` is for the page), and Parsoid's refusals are
   * answered with its status and words.
   */
  const asWiki = <T extends Handler>(handler: T): Handler => async (req, ctx) => {
    try {
      const { title, revision, ...params } = req.params;
      const given = title ? { title, ...(revision ? { revision } : {}) } : {};
      return await handler({ ...req, params: { ...params, ...given } }, ctx);
    } catch (e) {
      if (e instanceof ParsoidRefusal) throw transformProblem(e.parsoidStatus, e.parsoidMessage);
      throw e;
    }
  };

  const transformed = (part: { contentType: string; body: Buffer }, etag?: string): Response => ({
    status: 200, headers: { 'content-type': part.contentType, 'cache-control': 'private, max-age=0, s-maxage=0', ...(etag ? { etag } : {}) }, body: part.body,
  });

  const toHtml = withBody(toHtmlBody, async (req, ctx) => {
    const body = req.body ?? {};
    if (!acceptsHtml2(req.headers.accept)) throw new MediaWikiError(406, 'rest-not-acceptable', 'Not acceptable', { message: 'Not acceptable' });
    const target = await targetOf(req, normalize, 'revision');
    // The wikitext given, else the original's (`original.wikitext`), else the revision's own.
    const original = typeof body.original === 'object' ? textOf((body.original as { wikitext?: unknown }).wikitext) : undefined;
    const wikitext = textOf(body.wikitext) ?? original;
    if (body.wikitext !== undefined && textOf(body.wikitext) === undefined) throw badRequest('wikitext is the wikitext, or {body: the wikitext}.', 'invalid-transform');
    if (wikitext === undefined && target.title === undefined) throw transformProblem(400, 'No title or wikitext was provided.');
    const bodyOnly = isSet(body.body_only ?? body.bodyOnly);
    if (!isSet(body.stash) && req.query.get('stash') !== 'true') return transformed(await transforms.toHtml(ctx, req.domain, target, wikitext, bodyOnly, body.contentmodel));
    if (wikitext === undefined) throw badRequest('A stashed transform needs its wikitext.', 'invalid-transform');
    await withinStashLimit(api, req, ctx);
    const { part, etag } = await transforms.toStashedHtml(ctx, req.domain, target, wikitext, bodyOnly);
    return transformed(part, etag);
  });

  const toWikitext = withBody(toWikitextBody, async (req, ctx) => {
    const body = req.body ?? {};
    if (body.html === undefined) throw transformProblem(400, 'No html was supplied.');
    const target = await targetOf(req, normalize, 'revision');
    const html = typeof body.html === 'string' ? body.html : (body.html as { body?: unknown }).body;
    if (typeof html !== 'string') throw badRequest('html is the HTML, or {body: the HTML}.', 'invalid-transform');
    const ifMatch = req.headers['if-match'];
    const named = renderOfETag(ifMatch);
    if (ifMatch && !named) throw new HttpError(412, 'precondition-failed', 'If-Match names no render this service served (an ETag "{revision}/{tid}/…").');
    const where = target.title !== undefined && target.revid === undefined && named && named.rev > 0 ? { ...target, revid: named.rev } : target;
    const original = parseOriginal(body.original);
    return transformed(await transforms.toWikitext(ctx, req.domain, where, html, {
      tid: named?.tid, stashed: named?.stashed, dataMw: parseDataMw(body['data-mw']), scrubWikitext: !!body.scrub_wikitext, original, contentModel: body.contentmodel,
    }));
  });

  const toLint = withBody(toLintBody, async (req, ctx) => {
    const target = await targetOf(req, normalize, 'revision');
    const wikitext = req.body?.wikitext;
    if (wikitext === undefined && target.title === undefined) throw transformProblem(400, 'No title or wikitext was provided.');
    return transformed(await transforms.toLint(ctx, req.domain, target, wikitext));
  });

  /** A transform MediaWiki does not offer (pagebundle's are disabled there): its 404, word for word. */
  const invalidTransform: Handler = (req) => {
    throw new MediaWikiBody(404, { message: `Invalid transform: ${req.params.from}/to/${req.params.format}`, httpCode: 404, httpReason: 'Not Found' });
  };

  const transformSpec = (summary: string, body: object, params: object[]) => ({ tags, summary, parameters: params, requestBody: requestBody(body) });
  // MediaWiki's router takes a trailing slash (an empty title) as the form without a title, and so
  // do its clients: `transform/wikitext/to/html/` is `transform/wikitext/to/html`. A body is
  // optional: its absence is the handler's 400, in MediaWiki's words.
  const three = (path: string, handler: Handler, summary: string, body: object): Route[] => [
    { method: 'POST', path, body: 'optional-form', handler: asWiki(handler), spec: transformSpec(summary, body, []) },
    { method: 'POST', path: `${path}/`, body: 'optional-form', handler: asWiki(handler), spec: transformSpec(`${summary} (the trailing slash of MediaWiki's clients)`, body, []) },
    { method: 'POST', path: `${path}/{title}`, body: 'optional-form', handler: asWiki(handler), emptyParams: true, spec: transformSpec(`${summary}, for a page`, body, [titleParam]) },
    { method: 'POST', path: `${path}/{title}/{revision}`, body: 'optional-form', handler: asWiki(handler), emptyParams: true, spec: transformSpec(`${summary}, for a revision`, body, [titleParam, revisionParamOrEmpty]) },
  ];
  const fromTo = [{ name: 'from', in: 'path', required: true, schema: { type: 'string' } }, { name: 'format', in: 'path', required: true, schema: { type: 'string' } }];
  const invalid = ['', '/', '/{title}', '/{title}/{revision}'].map((rest): Route => ({
    method: 'POST', path: `/transform/{from}/to/{format}${rest}`, body: 'raw', handler: invalidTransform, emptyParams: true,
    spec: { tags, summary: 'A transform MediaWiki does not offer (pagebundle and others): 404', parameters: [...fromTo, ...(rest.includes('{title}') ? [titleParam] : []), ...(rest.includes('{revision}') ? [{ ...revisionParam, schema: { type: 'string' } }] : [])] },
  }));
  return [
    { method: 'PUT', path: '/page/{title}', body: 'json', handler: update, spec: { tags, summary: "Saves a page's new source through the service (latest.id: the base revision)", parameters: [titleParam], requestBody: { required: true, content: { 'application/json': { schema: updateBody } } } } },
    { method: 'POST', path: '/page', body: 'json', handler: create, spec: { tags, summary: 'Creates a page through the service', requestBody: { required: true, content: { 'application/json': { schema: createBody } } } } },
    ...three('/transform/wikitext/to/html', toHtml, 'Wikitext to HTML (stash: kept for the transform back)', toHtmlBody),
    ...three('/transform/wikitext/to/lint', toLint, "Wikitext's lint errors (Parsoid's), or a revision's", toLintBody),
    ...three('/transform/html/to/wikitext', toWikitext, 'HTML to wikitext, selectively from the render or stash If-Match names', toWikitextBody),
    ...invalid,
  ];
}

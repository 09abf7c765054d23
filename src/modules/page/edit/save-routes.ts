import { HttpError, badRequest } from '../../../util/errors.js';
import { parseJson } from '../../../util/json.js';
import { withBody } from '../../../router/typed-body.js';
import type { RequestContext, Response, Route, RouteRequest } from '../../../router/types.js';
import type { Credentials } from '../../../upstream/action-api.js';
import type { PageSaver, SaveRequest, SaveResult } from './page-saver.js';
import { titleSegment, type NormalizeTitle } from '../model/title-url.js';
import { saveBody, saveSpecs } from './write-spec.js';

/** Route parameters are text; the normalised title comes from the page module's rules. */

/** What identifies the caller to the wiki, as they sent it: never the service's admin credential. */
export function forwardedCredentials(req: Pick<RouteRequest, 'headers'>, ctx: RequestContext): Credentials {
  const credentials: Credentials = {};
  if (req.headers.cookie) credentials.cookie = req.headers.cookie;
  if (req.headers.authorization && !ctx.admin) credentials.authorization = req.headers.authorization;
  if (req.headers['x-forwarded-for']) credentials.forwardedFor = req.headers['x-forwarded-for'];
  return credentials;
}

/**
 * The caller's own credentials for the wiki. The service's admin credential is never passed on:
 * it is ours, not the caller's identity on the wiki (the HTTP front removes it from the headers).
 *
 * A browser sends its cookies with any form a web page posts here, so a save known to the wiki
 * only by its Cookie must carry the caller's own CSRF token (`csrf_token` or `X-CSRF-Token`),
 * which the wiki checks against that session: without one it is 403, never a token fetched on
 * the caller's behalf. `Authorization` is not sent by browsers on their own: such saves (and
 * anonymous ones) may have the token fetched for them.
 */
export function credentialsOf(req: Pick<RouteRequest, 'headers'>, ctx: RequestContext, bodyToken?: unknown): Credentials {
  const credentials = forwardedCredentials(req, ctx);
  const token = typeof bodyToken === 'string' ? bodyToken : req.headers['x-csrf-token'];
  if (token) credentials.csrfToken = token;
  else if (credentials.cookie && !credentials.authorization) {
    throw new HttpError(403, 'bad-token', 'A save made with a Cookie needs your own CSRF token from the wiki (csrf_token in the body, or X-CSRF-Token).', {
      extensions: { wiki_code: 'badtoken' },
    });
  }
  return credentials;
}

/** A JSON object field: an object, or its JSON text (forms carry text). */
export function parseJsonField(value: unknown, name: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') {
    try {
      // Within the same depth and size limits as a JSON body.
      value = parseJson(Buffer.from(value));
    } catch (e) {
      if (e instanceof HttpError && e.status === 413) throw e;
      // refused below
    }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw badRequest(`${name} must be a JSON object.`, `invalid-${name}`);
}

/**
 * A transform's `original` (the client's own copy of the render, Parsoid's convention): each part
 * an object (`{headers, body}`) or a string, else a 400 here rather than a part Parsoid ignores.
 */
export function parseOriginal(value: unknown): Record<string, unknown> | undefined {
  const original = parseJsonField(value, 'original');
  for (const part of ['html', 'data-parsoid', 'data-mw', 'wikitext']) {
    const given = original?.[part];
    if (given !== undefined && typeof given !== 'string' && (typeof given !== 'object' || given === null || Array.isArray(given))) {
      throw badRequest(`original.${part} must be an object ({headers, body}) or a string.`, 'invalid-original');
    }
  }
  return original;
}

/** data-mw of an edited document. */
export const parseDataMw = (value: unknown) => parseJsonField(value, 'data-mw');

function answer(domain: string, result: SaveResult): Response {
  const body: Record<string, unknown> = { title: result.title, rev: result.rev, tid: result.tid };
  const headers: Record<string, string> = { 'cache-control': 'no-store' };
  if (result.tid) headers.etag = `"${result.rev}/${result.tid}"`;
  if (result.status === 200) return { status: 200, headers, body: { ...body, nochange: true } };
  headers.location = `/${domain}/v1/page/${titleSegment(result.title)}/html/${result.rev}`;
  return { status: 201, headers, body };
}

/** `"{revid}/{tid}"` or `"{revid}"` (the schema checked the form). */
function parseIfMatch(value: string): { baseRevid: number; tid?: string } {
  const [rev, tid] = value.slice(1, -1).split('/');
  return { baseRevid: Number(rev), tid: tid?.toLowerCase() };
}

const PUT_TYPES = { html: 'text/html', wikitext: 'text/plain' } as const;

/** `POST /page/{title}` (a save) and `PUT /page/{title}/{html|wikitext}` (the content itself). */
export function saveRoutes(saver: PageSaver, normalize: NormalizeTitle): Route[] {
  return [
    {
      method: 'POST',
      path: '/page/{title}',
      body: 'form',
      spec: saveSpecs.post,
      handler: withBody(saveBody, async (req, ctx) => {
        const body = req.body;
        if ((body.wikitext === undefined) === (body.html === undefined)) throw badRequest('Give either wikitext or html.', 'invalid-save');
        if (body.tid !== undefined && body.html === undefined) throw badRequest('tid names the render HTML was edited from; it goes with html.', 'invalid-save');
        if (body.section !== undefined && body.base_revid === undefined) throw badRequest('A section is saved on the revision it was read from: give base_revid.', 'invalid-save');
        const save: SaveRequest = {
          title: await normalize(req),
          wikitext: body.wikitext,
          html: body.html,
          dataMw: parseDataMw(body['data-mw']),
          tid: body.tid?.toLowerCase(),
          baseRevid: body.base_revid,
          section: body.section,
          comment: body.comment,
          minor: body.minor,
          bot: body.bot,
          credentials: credentialsOf(req, ctx, body.csrf_token),
        };
        return answer(req.domain, await saver.save(ctx, req.domain, save));
      }),
    },
    {
      method: 'PUT',
      path: '/page/{title}/{prop}',
      body: 'raw',
      spec: saveSpecs.put,
      handler: async (req, ctx) => {
        const prop = req.params.prop as keyof typeof PUT_TYPES;
        const type = req.headers['content-type']?.split(';', 1)[0]!.trim().toLowerCase();
        if (type !== PUT_TYPES[prop]) throw new HttpError(415, 'unsupported-media-type', `The ${prop} of a page is sent as ${PUT_TYPES[prop]}.`);
        if (!Buffer.isBuffer(req.body)) throw badRequest(`This request needs the ${prop} as its body.`, 'missing-body');
        const ifMatch = req.headers['if-match'];
        if (!ifMatch && req.headers['if-none-match'] !== '*') {
          throw new HttpError(428, 'precondition-required', 'Name the base revision with If-Match: "{revid}/{tid}" (the ETag you read), or create the page with If-None-Match: *.');
        }
        const base = ifMatch ? parseIfMatch(ifMatch) : undefined;
        const content = req.body.toString('utf8');
        const save: SaveRequest = {
          title: await normalize(req),
          ...(prop === 'html' ? { html: content, tid: base?.tid } : { wikitext: content }),
          baseRevid: base?.baseRevid,
          comment: req.query.get('comment') ?? undefined,
          minor: req.query.get('minor') === 'true',
          bot: req.query.get('bot') === 'true',
          credentials: credentialsOf(req, ctx),
        };
        return answer(req.domain, await saver.save(ctx, req.domain, save));
      },
    },
  ];
}

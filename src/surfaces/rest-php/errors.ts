import { HttpError } from '../../util/errors.js';
import type { RequestContext, RouteRequest } from '../../router/types.js';
import type { PageDoor } from '../../modules/page/door.js';

const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable',
  409: 'Conflict', 412: 'Precondition Failed', 413: 'Request Entity Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity',
  428: 'Precondition Required', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

/**
 * An error MediaWiki's REST API itself would answer, with its message key (`errorKey`) and
 * English text: thrown by this surface's handlers where MediaWiki names the failure.
 */
export class MediaWikiError extends HttpError {
  constructor(status: number, readonly errorKey: string, message: string, readonly data: Record<string, unknown> = {}) {
    super(status, errorKey, message);
  }
}

/** An error whose body MediaWiki's handlers write themselves, sent word for word (a transform it does not offer). */
export class MediaWikiBody extends HttpError {
  constructor(status: number, readonly body: Record<string, unknown> & { message: string }) {
    super(status, 'mediawiki-error', body.message);
  }
}

/**
 * A transform handler's refusal as MediaWiki's Parsoid handlers word it (`message`), with the
 * REST API's own fields beside it as current MediaWiki adds them.
 */
export const transformProblem = (status: number, message: string, key = 'rest-transform-error') => new MediaWikiError(status, key, message, { message });

/**
 * An error in MediaWiki's REST shape (`errorKey`, `messageTranslations`, `httpCode`,
 * `httpReason`, as MediaWiki 1.43 sends it); with `x-restbase-compat: true`, RESTBase's fields
 * beside them (`type`, `title`, `method`, `detail`, `uri`), as MediaWiki adds them then. The
 * service's own errors (a wiki that does not answer, storage down) keep their problem type as
 * the key, so a client can still tell them apart.
 */
export function mediaWikiProblem(error: HttpError, request: { method: string; uri: string; headers: Record<string, string | undefined> }): Record<string, unknown> {
  if (error instanceof MediaWikiBody) return error.body;
  const key = error instanceof MediaWikiError ? error.errorKey : error.problemType.replace(/^urn:problem:/, '');
  const reason = REASONS[error.status] ?? error.title;
  const compat = request.headers['x-restbase-compat'] === 'true'
    ? { type: `MediaWikiError/${reason.replace(/ /g, '_')}`, title: key, method: request.method.toLowerCase(), detail: error.detail, uri: request.uri }
    : {};
  const data = error instanceof MediaWikiError ? error.data : pick(error.extensions);
  return { ...data, ...compat, errorKey: key, messageTranslations: { en: error.detail }, httpCode: error.status, httpReason: reason };
}

/** What the service's own problems carry that a client may act on (the wiki's code of a refused edit). */
function pick(extensions: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['wiki_code', 'wiki_message', 'latest_revid']) if (k in extensions) out[k] = extensions[k];
  return out;
}

/**
 * A stash (`flavor=stash`, a transform with `stash`) counted against the wiki's own
 * `stashbasehtml` rate limit for its caller, as MediaWiki's HTML helper counts it, and refused past
 * it in that helper's words. While the wiki cannot say who a session is, the stash is served
 * uncounted: stored content is served while the wiki is down.
 */
export async function withinStashLimit(door: Pick<PageDoor, 'limit'>, req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext): Promise<void> {
  try {
    await door.limit(req, ctx, 'stashbasehtml');
  } catch (e) {
    if (e instanceof HttpError && e.status >= 500) return;
    if (!(e instanceof HttpError) || e.status !== 429) throw e;
    throw new MediaWikiError(429, 'parsoid-stash-rate-limit-error', 'Stashing failed because rate limit was exceeded. Please try again later.', {
      reason: 'Rate limiter tripped, wait for a few minutes and try again',
    });
  }
}

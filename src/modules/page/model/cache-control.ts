import type { RequestContext, RouteRequest } from '../../../router/types.js';

/** Cache-Control of the page API's answers, by what they are. */
export interface CachePolicy {
  /** The latest content of a page: it changes with each edit. */
  latest: string;
  /** Content or metadata of one revision: its text or user may be hidden later. */
  revision: string;
  /** One render by tid: its bytes never change, but it may stop being servable (hidden, deleted). */
  render: string;
}

/**
 * Until the service purges shared caches on every change, no cache may keep an answer longer
 * than the service itself would before asking the wiki again: the latest revision is re-checked
 * every `latestCheckSeconds`, a revision's visibility every `recheckSeconds`. `max-age` comes
 * first, as MediaWiki's REST API sends it (its clients' tests match `^max-age=`).
 */
export function cachePolicy(latestCheckSeconds: number, recheckSeconds: number): CachePolicy {
  return {
    latest: `max-age=0, s-maxage=${latestCheckSeconds}, must-revalidate`,
    revision: `max-age=0, s-maxage=${recheckSeconds}, must-revalidate`,
    render: `public, max-age=${recheckSeconds}`,
  };
}

/** An authorised caller's Cache-Control: no-cache asks for the wiki's answer, not storage's. */
export const askedAnew = (req: RouteRequest, ctx: RequestContext): boolean => ctx.admin && /no-cache/i.test(req.headers['cache-control'] ?? '');

import { HttpError } from '../../../util/errors.js';
import type { RequestContext, Response, RouteRequest } from '../../../router/types.js';
import { PageMoved, RevisionMoved } from './page-moves.js';
import { surrogateKeys, tagged } from './surrogate-keys.js';
import { titleSegment, type NormalizeTitle } from './title-url.js';

/** A `/{domain}/v1/page/{title}/...` handler given the normalized title. */
export type TitledHandler = (req: RouteRequest, ctx: RequestContext, title: string) => Promise<Response>;

/**
 * Wraps the `/v1/page/{title}/...` handlers: another spelling of the title is redirected (301) to
 * the normalized one, which every URL, purge and key of the page spells, so that no cache keeps
 * it apart; a page moved without a redirect is a 404 saying where it went, a revision moved with
 * its page a redirect (302) to the same URL under the new title.
 */
export function titledHandler(normalize: NormalizeTitle) {
  return (fn: TitledHandler) => async (req: RouteRequest, ctx: RequestContext): Promise<Response> => {
    const title = await normalize(req);
    const prefix = `/${req.domain}/v1/page/`;
    // The path as sent: `/{domain}/v1/page/{title}/...`, any segment perhaps percent-encoded
    // (`/%77iki.test/v%31/...` reaches the same route), so the title and what follows it are found
    // by position, not by the length of the canonical prefix.
    const segments = req.path.split('/');
    const rest = segments.length > 5 ? `/${segments.slice(5).join('/')}` : '';
    if (title !== req.params.title || segments[4] !== titleSegment(title) || `${segments.slice(0, 4).join('/')}/` !== prefix) {
      const query = req.uri.includes('?') ? req.uri.slice(req.uri.indexOf('?')) : '';
      return { status: 301, headers: { location: `${prefix}${titleSegment(title)}${rest}${query}`, 'cache-control': 'max-age=3600' } };
    }
    try {
      return await fn(req, ctx, title);
    } catch (e) {
      if (e instanceof PageMoved) {
        throw new HttpError(404, 'page-moved', e.detail, { headers: { location: `${prefix}${titleSegment(e.target)}${rest}` }, extensions: e.extensions });
      }
      if (!(e instanceof RevisionMoved)) throw e;
      return { status: 302, headers: tagged({ location: `${prefix}${titleSegment(e.title)}${rest}`, 'cache-control': 'no-cache' }, [surrogateKeys.page(req.domain, title)]) };
    }
  };
}

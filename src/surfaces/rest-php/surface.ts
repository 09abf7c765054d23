import { notFound } from '../../util/errors.js';
import type { Surface } from '../../router/surface.js';
import type { PageDoor } from '../../modules/page/door.js';
import { mediaWikiProblem } from './errors.js';
import { restPhpModule } from './index.js';

const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/**
 * MediaWiki's own REST API under `/{domain}/rest.php/v1/`, with its rules for every path below
 * `rest.php`: a title's bytes that are not UTF-8 read as U+FFFD, unknown query parameters ignored,
 * a path no handler takes (a parameter left empty included) answered in its words, errors in its
 * JSON shape, every OPTIONS a preflight.
 */
export function restPhpSurface(page: PageDoor): Surface {
  return {
    name: "MediaWiki's REST API (rest.php/v1)",
    prefix: 'rest.php/v1',
    claims: 'rest.php',
    routes: [restPhpModule(page)],
    openQuery: true,
    lenientUtf8: true,
    unmatched: (relative) => notFound(`The requested relative path (${safeDecode(relative)}) did not match any known handler`, 'rest-no-match'),
    renderProblem: (error, request) => ({ body: mediaWikiProblem(error, request), contentType: 'application/json' }),
    optionsArePreflights: true,
  };
}

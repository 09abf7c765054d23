import type { Surface } from '../router/surface.js';
import type { PageDoor } from '../modules/page/door.js';

/**
 * The service's own content API under `/{domain}/v1/` (DESIGN.md's layout): the page module's
 * public routes, with the router's defaults (unknown query parameters refused, RESTBase's
 * trailing-slash listings, problem+json errors).
 */
export function v1Surface(page: PageDoor): Surface {
  return { name: 'content API (v1)', prefix: 'v1', routes: page.modules.filter((m) => m.api === 'v1') };
}

import type { Surface } from '../../router/surface.js';
import type { PageDoor } from '../../modules/page/door.js';
import { enterpriseModule } from './index.js';

/**
 * Wikimedia Enterprise's APIs for any wiki, under `/{domain}/enterprise/v2/`: errors in its shape
 * (`{status, message}`). Reads are open, as the service's other public reads are: an operator who
 * wants Enterprise's bearer tokens puts them in front (docs/enterprise.md).
 */
export function enterpriseSurface(page: PageDoor): Surface {
  return {
    name: 'Wikimedia Enterprise API (enterprise/v2)',
    prefix: 'enterprise',
    routes: [enterpriseModule(page)],
    renderProblem: (error) => ({ body: { status: error.status, message: error.detail }, contentType: 'application/json' }),
  };
}

import type { Surface } from '../../router/surface.js';
import type { PageDoor } from '../../modules/page/door.js';
import { restV1Module } from './index.js';
import { restbaseProblem } from './problem.js';

/**
 * Wikimedia's REST API in RESTBase's layout, under `/{domain}/rest_v1/`, for RESTBase's clients
 * (VisualEditor, Wikimedia's apps): unknown query parameters ignored (its clients send
 * cache-busting ones), errors in RESTBase's shape.
 */
export function restV1Surface(page: PageDoor): Surface {
  return {
    name: "Wikimedia's REST API (rest_v1)",
    prefix: 'rest_v1',
    routes: [restV1Module(page)],
    openQuery: true,
    renderProblem: (error, request) => ({ body: restbaseProblem(error, request.method, request.path), contentType: 'application/problem+json' }),
  };
}

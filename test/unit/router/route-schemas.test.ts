import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HttpError } from '../../../src/util/errors.js';
import { startServer, type TestServer } from '../../helpers.js';

/**
 * Validators are compiled at a route's first request, not at start: a schema Ajv cannot compile
 * would otherwise be found by the first client of its route, as a 500.
 */
describe("every route's schemas", () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('compile, and answer a request without parameters with nothing or a 400', () => {
    const routes = s.app.router.routes().filter((entry) => entry.validate);
    assert.ok(routes.length > 50, `${routes.length} routes with schemas`);
    for (const entry of routes) {
      try {
        entry.validate!({ params: {}, query: new URLSearchParams(), headers: {}, body: undefined });
      } catch (e) {
        assert.ok(e instanceof HttpError && e.status === 400, `${entry.route.method} ${entry.template}: ${(e as Error).message}`);
      }
    }
  });
});

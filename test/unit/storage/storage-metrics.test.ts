import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, request, startServer, type TestServer } from '../../helpers.js';

/** What storage costs and when it fails, on /metrics: checked against the operations made. */
describe('storage metrics', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({});
  });
  after(() => s.close());

  const metric = async (pattern: RegExp) => Number(pattern.exec((await request(`${s.base}/metrics`)).text)?.[1] ?? 0);

  it('times every operation per table and counts failures by kind', async () => {
    const url = `${s.base}/${s.domain}/sys/table/measured`;
    const call = (method: string, path: string, body?: unknown) => request(`${url}${path}`, { method, headers: admin, body });
    assert.equal((await call('PUT', '', { attributes: { k: 'string', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }] })).status, 201);
    const puts = await metric(/^storage_operation_seconds_count\{operation="put",table="measured"\} (\d+)/m);
    for (let i = 0; i < 3; i++) assert.equal((await call('PUT', '/', { attributes: { k: `k${i}`, v: 'x' } })).status, 201);
    assert.equal(await metric(/^storage_operation_seconds_count\{operation="put",table="measured"\} (\d+)/m), puts + 3, 'each write timed once');
    assert.equal((await call('PUT', '/', { attributes: { k: 'k0', v: 'y' }, if: 'not exists' })).status, 412);
    assert.equal(await metric(/^storage_errors_total\{operation="put",kind="condition-failed"\} (\d+)/m), 1, 'a failed condition counted by its kind');
    assert.equal((await call('GET', '/', { attributes: { k: 'k1' } })).status, 200);
    assert.ok((await metric(/^storage_operation_seconds_count\{operation="get",table="measured"\} (\d+)/m)) >= 1);
  });
});

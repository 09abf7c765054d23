import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, BACKENDS, request, startServer, type TestServer } from '../helpers.js';

/** Events of pages: partitioned by wiki and page, ordered by time; indexed by user and by kind. */
const schema = {
  table: 'events',
  attributes: { wiki: 'string', page: 'string', at: 'int', user: 'string', kind: 'string', size: 'int' },
  index: [{ attribute: 'wiki', type: 'hash' }, { attribute: 'page', type: 'hash' }, { attribute: 'at', type: 'range', order: 'asc' }],
  secondaryIndexes: {
    by_user: [{ attribute: 'user', type: 'hash' }, { attribute: 'at', type: 'range', order: 'desc' }, { attribute: 'kind', type: 'proj' }],
  },
};

for (const backend of BACKENDS) {
  describe(`table GET by key path and by index: ${backend.name}`, () => {
    let s: TestServer;
    let url: string;
    const get = (path: string, headers: Record<string, string> = {}) => request(`${url}${path}`, { headers: { ...admin, ...headers } });
    before(async () => {
      s = await startServer({ storage: backend.storage() });
      url = `${s.base}/${s.domain}/sys/table/events`;
      assert.equal((await request(url, { method: 'PUT', headers: admin, body: schema })).status, 201);
      for (let at = 1; at <= 60; at++) {
        const row = { wiki: 'en', page: at <= 50 ? 'Moon' : 'Sun', at, user: at % 2 ? 'Alice' : 'Bob', kind: at % 3 ? 'edit' : 'move', size: at * 10 };
        assert.equal((await request(`${url}/`, { method: 'PUT', headers: admin, body: { attributes: row } })).status, 201);
      }
    });
    after(() => s.close());

    it('reads a partition by its hash keys, in declared order, paged with next', async () => {
      const first = await get('/en/Moon?limit=20');
      assert.equal(first.status, 200);
      assert.deepEqual(first.json.items.map((r: { at: number }) => r.at), Array.from({ length: 20 }, (_, i) => i + 1));
      const pages = [first.json.items];
      let next = first.json.next as string | undefined;
      while (next) {
        const page = await get(`/en/Moon?limit=20&next=${encodeURIComponent(next)}`);
        pages.push(page.json.items);
        next = page.json.next;
      }
      assert.deepEqual(pages.flat().map((r: { at: number }) => r.at), Array.from({ length: 50 }, (_, i) => i + 1));
      assert.deepEqual((await get('/en/Sun')).json.items.map((r: { at: number }) => r.at), [51, 52, 53, 54, 55, 56, 57, 58, 59, 60]);
    });

    it('reads one row when the path names every key, and 404 for a row that is not there', async () => {
      const row = await get('/en/Moon/7');
      assert.equal(row.status, 200);
      const { _tid, ...fields } = row.json;
      assert.deepEqual(fields, { wiki: 'en', page: 'Moon', at: 7, user: 'Alice', kind: 'edit', size: 70 });
      // The row's implicit time-uuid says when it was written.
      const written = Date.parse(row.headers['last-modified'] as string);
      assert.ok(written <= Date.now() && written > Date.now() - 600_000, `Last-Modified ${row.headers['last-modified']} for _tid ${_tid}`);
      assert.equal((await get('/en/Moon/7', { 'if-modified-since': row.headers['last-modified'] as string })).status, 304);
      const missing = await get('/en/Moon/99');
      assert.equal(missing.status, 404);
      assert.equal(missing.headers['content-type'], 'application/problem+json');
    });

    it('answers blobs as base64, as the JSON query does', async () => {
      const blobs = `${s.base}/${s.domain}/sys/table/blobs`;
      await request(blobs, { method: 'PUT', headers: admin, body: { attributes: { id: 'int', data: 'blob' }, index: [{ attribute: 'id', type: 'hash' }] } });
      const data = Buffer.from([0, 1, 2, 250, 255]).toString('base64');
      await request(`${blobs}/`, { method: 'PUT', headers: admin, body: { attributes: { id: 7, data } } });
      const { _tid, ...fields } = (await request(`${blobs}/7`, { headers: admin })).json;
      assert.deepEqual(fields, { id: 7, data });
      assert.match(_tid, /^[0-9a-f-]{36}$/);
    });

    it('takes range conditions on the next key, and order=desc reversed fully', async () => {
      const ats = async (path: string) => (await get(path)).json.items.map((r: { at: number }) => r.at);
      assert.deepEqual(await ats('/en/Moon?gt=10&le=13'), [11, 12, 13]);
      assert.deepEqual(await ats('/en/Moon?ge=10&lt=13'), [10, 11, 12]);
      assert.deepEqual(await ats('/en/Moon?ge=48'), [48, 49, 50]);
      assert.deepEqual(await ats('/en/Moon?lt=4&order=desc'), [3, 2, 1]);
      assert.deepEqual(await ats('/en/Moon?order=desc&limit=3'), [50, 49, 48]);
    });

    it('reads rows by secondary index after //, in the index order, paged across partitions of the table', async () => {
      const alice = await get('//by_user/Alice?limit=10');
      assert.equal(alice.status, 200);
      // Alice wrote the odd ones, on both pages; the index orders them newest first.
      assert.deepEqual(alice.json.items.map((r: { at: number }) => r.at), [59, 57, 55, 53, 51, 49, 47, 45, 43, 41]);
      assert.deepEqual({ ...alice.json.items[0], _tid: undefined }, { wiki: 'en', page: 'Sun', at: 59, user: 'Alice', kind: 'edit', size: 590, _tid: undefined });
      const all = [...alice.json.items];
      let next = alice.json.next as string | undefined;
      while (next) {
        const page = await get(`//by_user/Alice?limit=10&next=${encodeURIComponent(next)}`);
        all.push(...page.json.items);
        next = page.json.next;
      }
      assert.deepEqual(all.map((r: { at: number }) => r.at), Array.from({ length: 30 }, (_, i) => 59 - 2 * i));
      assert.deepEqual((await get('//by_user/Bob?gt=50&order=desc')).json.items.map((r: { at: number }) => r.at), [52, 54, 56, 58, 60]);
      assert.deepEqual((await get('//by_user/Bob/60')).json.items.map((r: { page: string }) => r.page), ['Sun']);
      assert.deepEqual((await get('//by_user/Nobody')).json.items, []);
    });

    it('answers an ETag of the answer and 304 to a client that has it', async () => {
      const first = await get('/en/Sun');
      const etag = first.headers.etag as string;
      assert.match(etag, /^W\/"[\w-]+"$/);
      assert.equal((await get('/en/Sun', { 'if-none-match': etag })).status, 304);
      await request(`${url}/`, { method: 'PUT', headers: admin, body: { attributes: { wiki: 'en', page: 'Sun', at: 61, user: 'Carol', kind: 'edit', size: 1 } } });
      const changed = await get('/en/Sun', { 'if-none-match': etag });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.etag, etag);
    });

    it('refuses what a table cannot answer with a 4xx naming the parameter', async () => {
      const problem = async (path: string, status: number, pattern: RegExp) => {
        const res = await get(path);
        assert.equal(res.status, status, `${path}: ${res.text}`);
        assert.equal(res.headers['content-type'], 'application/problem+json', path);
        assert.match(res.json.detail, pattern, path);
      };
      await problem('//no_such_index/x', 404, /no index 'no_such_index'/);
      await problem('/en', 400, /wiki, page/);
      await problem('/en/Moon/7/extra', 404, /3 keys/);
      await problem('/en/Moon/7?gt=1', 400, /'gt'/);
      await problem('/en/Moon?gt=1&ge=2', 400, /'gt' and 'ge'/);
      await problem('/en/Moon?lt=1&le=2', 400, /'lt' and 'le'/);
      await problem('/en/Moon/seven', 400, /'at' must be a number/);
      await problem('/en/Moon?gt=x', 400, /gt/);
      await problem('/en/Moon?order=sideways', 400, /order/);
      await problem('/en/Moon?limit=0', 400, /limit/);
      await problem('/en/Moon?next=garbage', 400, /next|paging/i);
      await problem('//by_user', 400, /partitioned by user/);
      const noTable = await request(`${s.base}/${s.domain}/sys/table/nothing/a`, { headers: admin });
      assert.equal(noTable.status, 404);
    });

    it('lists the GET forms in the OpenAPI document', async () => {
      const spec = (await request(`${s.base}/${s.domain}/sys/?spec`, { headers: admin })).json;
      const paths = Object.keys(spec?.paths ?? {});
      assert.ok(paths.includes('/sys/table/{table}/{k1}/{k2}'), paths.filter((p) => p.includes('table')).join(' '));
      assert.ok(paths.includes('/sys/table/{table}//{index}/{k1}'));
      const params = spec.paths['/sys/table/{table}//{index}/{k1}'].get.parameters.map((p: { name: string }) => p.name);
      for (const name of ['index', 'k1', 'gt', 'ge', 'lt', 'le', 'limit', 'next', 'order']) assert.ok(params.includes(name), name);
    });
  });
}

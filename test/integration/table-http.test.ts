import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { v1 as uuidv1 } from 'uuid';
import { admin, BACKENDS, request, sqliteConfig, startServer, type TestServer } from '../helpers.js';

const schema = {
  table: 'kv',
  attributes: { key: 'string', tid: 'timeuuid', value: 'blob', latest: 'timeuuid' },
  index: [
    { attribute: 'key', type: 'hash' },
    { attribute: 'latest', type: 'static' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
};
const T1 = '11111111-1dd2-11b2-8000-000000000001';
const T2 = '22222222-1dd2-11b2-8000-000000000002';

for (const backend of BACKENDS) {
  describe(`table API over HTTP: ${backend.name}`, () => {
    let s: TestServer;
    let url: string;
    before(async () => {
      s = await startServer({ storage: backend.storage() });
      url = `${s.base}/${s.domain}/sys/table/kv`;
    });
    after(() => s.close());
    const call = (method: string, path: string, body?: unknown) => request(`${url}${path}`, { method, headers: admin, body });

    it('creates (201), re-puts (200) and reads a schema', async () => {
      assert.equal((await call('PUT', '', schema)).status, 201);
      assert.equal((await call('PUT', '', schema)).status, 200);
      const got = await call('GET', '');
      assert.equal(got.status, 200);
      // As it was put, nothing added (no defaults, no implicit attribute): a client compares it with its own.
      assert.deepEqual(got.json, schema);
    });

    it('reads a schema back as it was last put, through a migration', async () => {
      const other = (method: string, body?: unknown) => request(`${url}_given`, { method, headers: admin, body });
      const v1 = { ...schema, table: 'kv_given', attributes: { key: 'string', value: 'blob' }, index: [schema.index[0]] };
      assert.equal((await other('PUT', v1)).status, 201);
      assert.deepEqual((await other('GET')).json, v1);
      const v2 = { ...v1, version: 2, options: { durability: 'low' }, attributes: { ...v1.attributes, note: 'string' } };
      assert.equal((await other('PUT', v2)).status, 201, 'a new version is created, as RESTBase answered a migration');
      assert.deepEqual((await other('GET')).json, v2, 'as migrated to');
      const reordered = { index: v2.index, attributes: v2.attributes, options: v2.options, version: 2, table: 'kv_given' };
      assert.equal((await other('PUT', reordered)).status, 200, 'the same schema in another order changes nothing');
      const lower = await other('PUT', { ...v2, version: 1, attributes: v1.attributes });
      assert.equal(lower.status, 400, 'a lower version is refused');
      assert.match(lower.json.title, /version must be higher/, 'saying why in the title, where RESTBase\'s clients read it');
    });

    it('writes rows with base64 blobs and queries them by GET body and POST _query', async () => {
      const value = Buffer.from('hello \u0000 world').toString('base64');
      assert.equal((await call('PUT', '/', { attributes: { key: 'a', tid: T1, value, latest: T1 } })).status, 201);
      assert.equal((await call('PUT', '/', { table: 'kv', attributes: { key: 'a', tid: T2, value, latest: T2 } })).status, 201);
      const viaGet = await call('GET', '/', { attributes: { key: 'a' }, limit: 1 });
      assert.equal(viaGet.status, 200);
      assert.deepEqual(viaGet.json.items, [{ key: 'a', tid: T2, value, latest: T2 }]);
      assert.equal(typeof viaGet.json.next, 'string');
      const viaPost = await call('POST', '/_query', { attributes: { key: 'a' }, next: viaGet.json.next });
      assert.deepEqual(viaPost.json.items.map((r: { tid: string }) => r.tid), [T1]);
      assert.equal(viaPost.json.next, undefined);
    });

    it("answers a GET query that matches no row 404 with no items, as RESTBase did; POST _query 200 with none", async () => {
      const none = await call('GET', '/', { attributes: { key: 'no such key' } });
      assert.equal(none.status, 404);
      assert.equal(none.headers['content-type'], 'application/problem+json');
      assert.deepEqual(none.json.items, [], 'the items a RESTBase client reads either way');
      const noTable = await request(`${s.base}/${s.domain}/sys/table/no_such_table/`, { headers: admin, body: { attributes: { key: 'a' } } });
      assert.equal(noTable.status, 404);
      assert.equal(noTable.json.type, 'urn:problem:unknown-table');
      assert.deepEqual(noTable.json.items, []);
      const viaPost = await call('POST', '/_query', { attributes: { key: 'no such key' } });
      assert.equal(viaPost.status, 200);
      assert.deepEqual(viaPost.json.items, []);
    });

    it('answers a failed condition with 412 and writes nothing', async () => {
      const res = await call('PUT', '/', { attributes: { key: 'a', tid: T1, latest: T1 }, if: 'not exists' });
      assert.equal(res.status, 412);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const cas = await call('PUT', '/', { attributes: { key: 'a', tid: T1, latest: T1 }, if: { latest: { eq: T1 } } });
      assert.equal(cas.status, 412);
      assert.deepEqual((await call('POST', '/_query', { attributes: { key: 'a' } })).json.items.map((r: { latest: string }) => r.latest), [T2, T2]);
    });

    it("lets one of 20 concurrent 'not exists' HTTP writes win", async () => {
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () => call('PUT', '/', { attributes: { key: 'race', tid: T1 }, if: 'not exists' }).then((r) => r.status)),
      );
      assert.deepEqual([statuses.filter((x) => x === 201).length, statuses.filter((x) => x === 412).length], [1, 19]);
    });

    it('rejects bad input with 4xx and no 500', async () => {
      const cases: [string, string, unknown, number][] = [
        ['PUT', '/', { attributes: { tid: T1 } }, 400],
        ['PUT', '/', { attributes: { key: 'a', tid: T1, nope: 1 } }, 400],
        ['PUT', '/', { attributes: { key: 'a', tid: 5 } }, 400],
        ['PUT', '/', { table: 'other', attributes: { key: 'a', tid: T1 } }, 400],
        ['PUT', '/', [1, 2], 400],
        ['GET', '/', { attributes: { value: 'x' } }, 400],
        ['GET', '/', { limit: 'all' }, 400],
        ['POST', '/_query', { next: '%%%' }, 400],
      ];
      for (const [method, path, body, status] of cases) {
        const res = await call(method, path, body);
        assert.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
      }
      const injected = await request(`${s.base}/${s.domain}/sys/table/${encodeURIComponent('kv"; DROP TABLE x;--')}`, { method: 'PUT', headers: admin, body: schema });
      assert.equal(injected.status, 400);
      assert.equal((await request(`${s.base}/${s.domain}/sys/table/missing/`, { headers: admin })).status, 404);
    });

    it("deletes the rows a range condition on a range key matches, as RESTBase's clients do; nothing else", async () => {
      // Twenty rows a second apart: tids from v1 UUIDs of increasing time.
      const tids = Array.from({ length: 20 }, (_, i) => uuidv1({ msecs: Date.UTC(2020, 0, 1) + i * 1000, nsecs: 0 }));
      for (const tid of tids) assert.equal((await call('PUT', '/', { attributes: { key: 'ranged', tid } })).status, 201);
      assert.equal((await call('PUT', '/', { attributes: { key: 'other', tid: tids[0] } })).status, 201);
      assert.equal((await call('DELETE', '/', { attributes: { key: 'ranged', tid: { lt: tids[10] } } })).status, 204);
      const left = (await call('POST', '/_query', { attributes: { key: 'ranged' }, limit: 100 })).json.items.map((r: { tid: string }) => r.tid);
      assert.deepEqual(left, tids.slice(10).reverse());
      assert.equal((await call('POST', '/_query', { attributes: { key: 'other' } })).json.items.length, 1, 'other partitions keep theirs');
      assert.equal((await call('DELETE', '/', { attributes: { key: { gt: 'a' } } })).status, 400, 'a range of partitions is a scan: refused');
    });

    it('deletes by key and drops the table', async () => {
      assert.equal((await call('DELETE', '/', { attributes: { key: 'a', tid: T1 } })).status, 204);
      assert.deepEqual((await call('POST', '/_query', { attributes: { key: 'a' } })).json.items.map((r: { tid: string }) => r.tid), [T2]);
      assert.equal((await call('DELETE', '')).status, 204);
      assert.equal((await call('GET', '')).status, 404);
    });
  });
}

describe('table API over HTTP when storage cannot answer now', () => {
  it('answers 503 with Retry-After while another process holds the write lock past the busy timeout, and writes once it is free', async () => {
    const storage = sqliteConfig();
    const s = await startServer({ storage });
    try {
      const url = `${s.base}/${s.domain}/sys/table/kv`;
      assert.equal((await request(url, { method: 'PUT', headers: admin, body: schema })).status, 201);
      const other = new Database((storage as { path: string }).path);
      other.exec('BEGIN IMMEDIATE');
      const blocked = await request(`${url}/`, { method: 'PUT', headers: admin, body: { attributes: { key: 'a', tid: T1 } } });
      assert.equal(blocked.status, 503);
      assert.equal(blocked.headers['retry-after'], '1');
      assert.match(String(blocked.headers['content-type']), /application\/problem\+json/);
      other.exec('ROLLBACK');
      other.close();
      assert.equal((await request(`${url}/`, { method: 'PUT', headers: admin, body: { attributes: { key: 'a', tid: T1 } } })).status, 201);
    } finally {
      await s.close();
    }
  });
});

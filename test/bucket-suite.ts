import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { pino } from 'pino';
import { v1 as uuidv1 } from 'uuid';
import { HttpError } from '../src/util/errors.js';
import type { StorageConfig } from '../src/config.js';
import { admin, request, startServer, type TestServer } from './helpers.js';

const tidAt = (iso: string) => uuidv1({ msecs: Date.parse(iso), nsecs: 0 });
const text = (body: string, extra: Record<string, string> = {}) => ({ headers: { ...admin, 'content-type': 'text/plain', ...extra }, body });

/** The bucket modules over HTTP on one storage backend. */
export function bucketSuite(backend: { name: string; storage: () => StorageConfig }): void {
  describe(`buckets: ${backend.name}`, () => {
    let s: TestServer;
    let sys: string;
    before(async () => {
      s = await startServer({ storage: backend.storage() });
      sys = `${s.base}/${s.domain}/sys`;
    });
    after(() => s.close());
    const put = (path: string, body: string, extra: Record<string, string> = {}) => request(`${sys}${path}`, { method: 'PUT', ...text(body, extra) });
    const get = (path: string, headers: Record<string, string> = {}) => request(`${sys}${path}`, { headers: { ...admin, ...headers } });

    describe('key_value', () => {
      before(async () => {
        assert.equal((await request(`${sys}/key_value/kv`, { method: 'PUT', headers: admin })).status, 201);
        assert.equal((await request(`${sys}/key_value/kv`, { method: 'PUT', headers: admin })).status, 200);
      });

      it('stores a value with its entity headers and serves them back', async () => {
        const saved = await put('/key_value/kv/greeting', 'hello', { 'content-location': '/greetings/en', 'content-language': 'en' });
        assert.equal(saved.status, 201);
        const res = await get('/key_value/kv/greeting');
        assert.equal(res.status, 200);
        assert.equal(res.text, 'hello');
        assert.equal(res.headers['content-type'], 'text/plain');
        assert.equal(res.headers['content-length'], '5');
        assert.equal(res.headers['content-sha1'], crypto.createHash('sha1').update('hello').digest('hex'));
        assert.equal(res.headers['content-sha256'], crypto.createHash('sha256').update('hello').digest('hex'));
        assert.equal(res.headers.etag, saved.headers.etag);
        assert.equal(res.headers['content-location'], '/greetings/en');
        assert.equal(res.headers['content-language'], 'en');
        assert.equal(res.headers.location, undefined);
        const head = await request(`${sys}/key_value/kv/greeting`, { method: 'HEAD', headers: admin });
        assert.equal(head.headers['content-length'], '5');
        assert.equal(head.headers.etag, saved.headers.etag);
        assert.equal(head.headers['content-sha1'], res.headers['content-sha1']);
        assert.ok(Date.parse(String(res.headers['last-modified'])) > Date.now() - 60_000);
        assert.equal((await get('/key_value/kv/greeting', { 'if-none-match': String(res.headers.etag) })).status, 304);
      });

      it('checks content-sha1 when the client sends it: a mismatch is a 400 and nothing is written', async () => {
        const sha1 = crypto.createHash('sha1').update('checked').digest();
        assert.equal((await put('/key_value/kv/checked', 'checked', { 'content-sha1': sha1.toString('hex') })).status, 201);
        assert.equal((await put('/key_value/kv/checked', 'checked', { 'content-sha1': sha1.toString('base64') })).status, 201);
        const damaged = await put('/key_value/kv/checked', 'chacked', { 'content-sha1': sha1.toString('hex') });
        assert.equal(damaged.status, 400);
        assert.equal(damaged.json.type, 'urn:problem:content-sha1-mismatch');
        assert.equal((await put('/key_value/kv/checked', 'x', { 'content-sha1': 'not a hash' })).status, 400);
        assert.equal((await get('/key_value/kv/checked')).text, 'checked');
        const fresh = await put('/key_value/kv/never-written', 'chacked', { 'content-sha1': sha1.toString('hex') });
        assert.equal(fresh.status, 400);
        assert.equal((await get('/key_value/kv/never-written')).status, 404);
      });

      it('answers a value stored with a Location as a redirect to it', async () => {
        assert.equal((await put('/key_value/kv/moved', 'see elsewhere', { location: '/elsewhere' })).status, 201);
        const res = await get('/key_value/kv/moved');
        assert.equal(res.status, 302);
        assert.equal(res.headers.location, '/elsewhere');
        assert.equal(res.text, 'see elsewhere');
        assert.match(String(res.headers.etag), /^"[0-9a-f-]{36}"$/);
      });

      it('creates only with If-None-Match: * and updates only the version named by If-Match', async () => {
        assert.equal((await put('/key_value/kv/once', 'first', { 'if-none-match': '*' })).status, 201);
        assert.equal((await put('/key_value/kv/once', 'second', { 'if-none-match': '*' })).status, 412);
        const etag = String((await get('/key_value/kv/once')).headers.etag);
        const updated = await put('/key_value/kv/once', 'third', { 'if-match': etag });
        assert.equal(updated.status, 201);
        assert.equal((await put('/key_value/kv/once', 'stale', { 'if-match': etag })).status, 412);
        assert.equal((await get('/key_value/kv/once')).text, 'third');
        // If-Match: * matches any current value (RFC 9110), and none when there is no value.
        assert.equal((await put('/key_value/kv/once', 'fourth', { 'if-match': '*' })).status, 201);
        assert.equal((await get('/key_value/kv/once')).text, 'fourth');
        assert.equal((await put('/key_value/kv/never', 'x', { 'if-match': '*' })).status, 412);
        assert.equal((await get('/key_value/kv/never')).status, 404);
      });

      it('keeps Content-Language and Content-Disposition, and answers If-Modified-Since', async () => {
        assert.equal((await request(`${sys}/key_value/ent`, { method: 'PUT', headers: admin })).status, 201);
        const saved = await put('/key_value/ent/entity', 'bonjour', { 'content-language': 'fr', 'content-disposition': 'inline; filename="b.txt"' });
        assert.equal(saved.status, 201);
        const res = await get('/key_value/ent/entity');
        assert.equal(res.headers['content-language'], 'fr');
        assert.equal(res.headers['content-disposition'], 'inline; filename="b.txt"');
        const modified = String(res.headers['last-modified']);
        assert.ok(!Number.isNaN(Date.parse(modified)), 'Last-Modified is sent');
        assert.equal((await get('/key_value/ent/entity', { 'if-modified-since': modified })).status, 304);
        assert.equal((await get('/key_value/ent/entity', { 'if-modified-since': new Date(Date.parse(modified) - 60_000).toUTCString() })).status, 200);
        // If-None-Match decides when both are sent.
        assert.equal((await get('/key_value/ent/entity', { 'if-modified-since': modified, 'if-none-match': '"other"' })).status, 200);
      });

      it('lists keys paged, round-trips %2F, deletes', async () => {
        for (const key of ['a/b', 'c d', 'ü']) assert.equal((await put(`/key_value/kv/${encodeURIComponent(key)}`, key)).status, 201);
        assert.equal((await get('/key_value/kv/a%2Fb')).text, 'a/b');
        const keys: string[] = [];
        let next: string | undefined;
        do {
          const page = await get(`/key_value/kv/?limit=2${next ? `&next=${encodeURIComponent(next)}` : ''}`);
          assert.ok(page.json.items.length <= 2);
          keys.push(...page.json.items);
          next = page.json.next;
        } while (next);
        assert.deepEqual(keys.sort(), ['a/b', 'c d', 'checked', 'greeting', 'moved', 'once', 'ü']);
        assert.equal((await request(`${sys}/key_value/kv/a%2Fb`, { method: 'DELETE', headers: admin })).status, 204);
        assert.equal((await get('/key_value/kv/a%2Fb')).status, 404);
      });

      it('rejects bad input with 4xx and writes nothing', async () => {
        assert.equal((await put('/key_value/kv/empty', '')).status, 400);
        assert.equal((await request(`${sys}/key_value/kv/notype`, { method: 'PUT', headers: admin, body: Buffer.from('x') })).status, 400);
        assert.equal((await put('/key_value/kv/ctl%01key', 'x')).status, 400);
        assert.equal((await put('/key_value/kv/x', 'x', { 'if-match': '"garbage"' })).status, 400);
        assert.equal((await put('/key_value/nobucket/x', 'x')).status, 404);
        assert.equal((await put(`/key_value/${encodeURIComponent('bad"name')}/x`, 'x')).status, 400);
        for (const key of ['empty', 'notype', 'ctl\u0001key']) assert.equal((await get(`/key_value/kv/${encodeURIComponent(key)}`)).status, key.includes('\u0001') ? 400 : 404);
      });
    });

    describe('indexes a bucket declares over an entity header', () => {
      const create = (path: string, indexes: unknown) => request(`${sys}${path}`, { method: 'PUT', headers: admin, body: { indexes } });
      const listed = async (path: string) => {
        const res = await get(path);
        assert.equal(res.status, 200, res.text);
        return res.json.items as { key: string; tid: string }[];
      };

      it('lists key_value keys by content-type after //, paged', async () => {
        assert.equal((await create('/key_value/typed', { by_type: { header: 'content-type' } })).status, 201);
        for (const [key, type] of [['a', 'text/plain'], ['b', 'application/json'], ['c', 'text/plain'], ['d', 'text/plain']]) {
          assert.equal((await put(`/key_value/typed/${key}`, `${key}`, { 'content-type': type! })).status, 201);
        }
        // A value whose type changes moves from one listing to the other.
        assert.equal((await put('/key_value/typed/d', '{}', { 'content-type': 'application/json' })).status, 201);
        assert.deepEqual((await listed('/key_value/typed//by_type/text%2Fplain')).map((r) => r.key), ['a', 'c']);
        assert.deepEqual((await listed('/key_value/typed//by_type/application%2Fjson')).map((r) => r.key), ['b', 'd']);
        const first = await get('/key_value/typed//by_type/text%2Fplain?limit=1');
        const second = await get(`/key_value/typed//by_type/text%2Fplain?limit=1&next=${encodeURIComponent(first.json.next)}`);
        assert.deepEqual([first.json.items[0].key, second.json.items[0].key], ['a', 'c']);
        assert.equal((await get('/key_value/typed//by_language/en')).status, 404);
      });

      it('lists key_rev_value keys by the latest revision only, or every revision', async () => {
        assert.equal((await create('/key_rev_value/typed', { latest: { header: 'content-type' }, every: { header: 'content-type', revisions: 'all' } })).status, 201);
        const first = (await put('/key_rev_value/typed/doc', 'one', { 'content-type': 'text/plain' })).json.tid as string;
        const second = (await put('/key_rev_value/typed/doc', '{}', { 'content-type': 'application/json' })).json.tid as string;
        await put('/key_rev_value/typed/other', 'x', { 'content-type': 'text/plain' });
        assert.deepEqual((await listed('/key_rev_value/typed//latest/text%2Fplain')).map((r) => r.key), ['other']);
        assert.deepEqual((await listed('/key_rev_value/typed//latest/application%2Fjson')).map((r) => [r.key, r.tid]), [['doc', second]]);
        assert.deepEqual((await listed('/key_rev_value/typed//every/text%2Fplain')).map((r) => [r.key, r.tid === first ? 'first' : r.key]), [['doc', 'first'], ['other', 'other']]);
      });

      it('refuses index definitions it cannot keep with a 400', async () => {
        for (const bad of [{ 'Bad Name': { header: 'content-type' } }, { ok: { header: 'not a header' } }, { ok: { header: 'content-type', revisions: 'some' } }, ['content-type']]) {
          const res = await create('/key_value/badly-indexed', bad);
          assert.equal(res.status, 400, JSON.stringify(bad));
          assert.match(res.json.detail, /index|header|revisions/i, JSON.stringify(bad));
        }
      });
    });

    describe('key_rev_value', () => {
      before(async () => {
        assert.equal((await request(`${sys}/key_rev_value/revs`, { method: 'PUT', headers: admin })).status, 201);
      });

      it('saves revisions, serves the latest, lists them newest first and serves each by tid (immutable)', async () => {
        const tids: string[] = [];
        for (const body of ['one', 'two', 'three']) {
          const res = await put('/key_rev_value/revs/doc', body);
          assert.equal(res.status, 201);
          assert.equal(res.headers.etag, `"${res.json.tid}"`);
          tids.push(res.json.tid);
        }
        const latest = await get('/key_rev_value/revs/doc');
        assert.equal(latest.text, 'three');
        assert.equal(latest.headers['cache-control'], 'no-cache');
        assert.deepEqual((await get('/key_rev_value/revs/doc/')).json.items, [...tids].reverse());
        const first = await get(`/key_rev_value/revs/doc/${tids[0]}`);
        assert.equal(first.text, 'one');
        assert.match(String(first.headers['cache-control']), /immutable/);
        const page = await get('/key_rev_value/revs/doc/?limit=2');
        assert.deepEqual(page.json.items, [tids[2], tids[1]]);
        assert.deepEqual((await get(`/key_rev_value/revs/doc/?next=${encodeURIComponent(page.json.next)}`)).json.items, [tids[0]]);
      });

      it('travels in time: exactly at a tid, between revisions, before the first', async () => {
        const t1 = tidAt('2020-01-01T00:00:00.000Z');
        const t2 = tidAt('2020-01-02T00:00:00.000Z');
        assert.equal((await put(`/key_rev_value/revs/old/${t1}`, 'v1')).status, 201);
        assert.equal((await put(`/key_rev_value/revs/old/${t2}`, 'v2')).status, 201);
        const at = async (time: string) => {
          const viaPath = await get(`/key_rev_value/revs/old/${encodeURIComponent(time)}`);
          const viaTs = await get(`/key_rev_value/revs/old?ts=${encodeURIComponent(time)}`);
          assert.equal(viaPath.status, viaTs.status);
          return viaPath.status === 200 ? viaPath.text : viaPath.status;
        };
        assert.equal(await at('2020-01-01T00:00:00.000Z'), 'v1');
        assert.equal(await at('20200101T00:00:00.000Z'), 'v1');
        assert.equal(await at('2020-01-01T12:00:00Z'), 'v1');
        assert.equal(await at('2020-01-01T23:59:59.999Z'), 'v1');
        assert.equal(await at('20200102T00:00:00.000Z'), 'v2');
        assert.equal(await at('2019-12-31T23:59:59.999Z'), 404);
        assert.equal(await at('2099-01-01T00:00:00Z'), 400);
        assert.equal(await at('yesterday'), 400);
        assert.equal(await at('2020-13-45T99:00:00Z'), 400);
      });

      it('makes If-Match a CAS on the latest revision: of concurrent writers from one base, one wins', async () => {
        const base = (await put('/key_rev_value/revs/race', 'base')).json.tid as string;
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => put('/key_rev_value/revs/race', `writer ${i}`, { 'if-match': `"${base}"` })));
        const winners = results.filter((r) => r.status === 201);
        assert.equal(winners.length, 1);
        assert.equal(results.filter((r) => r.status === 412).length, 9);
        assert.equal((await get('/key_rev_value/revs/race')).headers.etag, `"${winners[0]!.json.tid}"`);
        assert.equal((await get('/key_rev_value/revs/race/')).json.items.length, 2);
        assert.equal((await put('/key_rev_value/revs/race', 'x', { 'if-none-match': '*' })).status, 412);
        assert.equal((await put('/key_rev_value/revs/fresh', 'x', { 'if-none-match': '*' })).status, 201);
        assert.equal((await put('/key_rev_value/revs/fresh', 'y', { 'if-match': '*' })).status, 201, 'If-Match: * matches any latest revision');
        assert.equal((await put('/key_rev_value/revs/none-yet', 'y', { 'if-match': '*' })).status, 412);
      });

      it('keeps the latest pointer moving forward under concurrent unconditional writes', async () => {
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) => put('/key_rev_value/revs/busy', `w${i}`)));
        assert.ok(results.every((r) => r.status === 201));
        const listed = (await get('/key_rev_value/revs/busy/')).json.items as string[];
        assert.equal(listed.length, 8);
        assert.equal((await get('/key_rev_value/revs/busy')).headers.etag, `"${listed[0]}"`);
      });

      it('lists each key once, paged, in a stable order', async () => {
        await request(`${sys}/key_rev_value/list`, { method: 'PUT', headers: admin });
        for (const key of ['b', 'a', 'c', 'a/x']) for (let i = 0; i < 3; i++) await put(`/key_rev_value/list/${encodeURIComponent(key)}`, `${key}${i}`);
        const first = await get('/key_rev_value/list/?limit=3');
        const second = await get(`/key_rev_value/list/?limit=3&next=${encodeURIComponent(first.json.next)}`);
        const listed = [...first.json.items, ...second.json.items];
        // The order is the storage engine's (by key in SQL, by token in Cassandra), the same every time.
        assert.deepEqual([...listed].sort(), ['a', 'a/x', 'b', 'c']);
        assert.equal(second.json.next, undefined);
        assert.deepEqual((await get('/key_rev_value/list/?limit=10')).json.items, listed);
      });

      it('bounds stored revisions with a retention policy', async () => {
        const res = await request(`${sys}/key_rev_value/bounded`, { method: 'PUT', headers: admin, body: { revisionRetentionPolicy: { type: 'latest', count: 2, grace_ttl: 0 } } });
        assert.equal(res.status, 201);
        for (let i = 0; i < 6; i++) await put('/key_rev_value/bounded/hot', `edit ${i}`);
        await new Promise((r) => setTimeout(r, 5));
        assert.equal((await get('/key_rev_value/bounded/hot/')).json.items.length, 2);
        assert.equal((await get('/key_rev_value/bounded/hot')).text, 'edit 5');
      });

      it('stores large values compressed once and serves stored or decompressed bytes', async () => {
        const html = `<html><body>${'<p>Some paragraph of article text.</p>\n'.repeat(80_000)}</body></html>`;
        assert.ok(html.length > 2_500_000);
        assert.equal((await put('/key_rev_value/revs/big', html, { 'content-type': 'text/html; charset=utf-8' })).status, 201);
        const gz = await get('/key_rev_value/revs/big', { 'accept-encoding': 'gzip' });
        assert.equal(gz.headers['content-encoding'], 'gzip');
        assert.ok(gz.raw.length < html.length / 10);
        assert.equal(zlib.gunzipSync(gz.raw).toString(), html);
        const plain = await get('/key_rev_value/revs/big');
        assert.equal(plain.headers['content-encoding'], undefined);
        assert.equal(plain.text, html);
      });

      it('needs the admin credential to save under a chosen tid, even for internal requests', async () => {
        const t = tidAt('2021-06-01T00:00:00.000Z');
        const ctx = s.app.router.context({ requestId: 'r', admin: false, log: pino({ level: 'silent' }), external: false });
        await assert.rejects(
          ctx.request({ method: 'PUT', uri: `/${s.domain}/sys/key_rev_value/revs/elevated/${t}`, headers: { 'content-type': 'text/plain' }, body: 'x' }),
          (e: HttpError) => e.status === 403,
        );
        const elevated = s.app.router.context({ requestId: 'r', admin: true, log: pino({ level: 'silent' }), external: false });
        const res = await elevated.request({ method: 'PUT', uri: `/${s.domain}/sys/key_rev_value/revs/elevated/${t}`, headers: { 'content-type': 'text/plain' }, body: 'x' });
        assert.equal(res.status, 201);
        assert.equal((await put(`/key_rev_value/revs/elevated/${t}`, 'again')).status, 412, 'a stored tid is immutable');
      });

      it('rejects malformed tids, bad keys and empty bodies with 4xx', async () => {
        assert.equal((await get('/key_rev_value/revs/doc/6ba7b810-9dad-41d1-80b4-00c04fd430c8')).status, 400);
        assert.equal((await get('/key_rev_value/revs/doc/not-a-tid-or-date')).status, 400);
        assert.equal((await put('/key_rev_value/revs/doc', '')).status, 400);
        assert.equal((await request(`${sys}/key_rev_value/revs/doc`, { method: 'PUT', headers: admin, body: Buffer.from('x') })).status, 400);
        assert.equal((await put('/key_rev_value/revs/%0Abad', 'x')).status, 400);
        assert.equal((await put(`/key_rev_value/revs/doc/2020-01-01T00:00:00Z`, 'x')).status, 400);
        assert.equal((await put('/key_rev_value/revs/doc', 'x', { 'if-match': 'nope' })).status, 400);
        assert.equal((await get('/key_rev_value/nobucket/doc')).status, 404);
      });
    });

    describe('revisioned objects', () => {
      it('keep named properties, each a revisioned blob', async () => {
        assert.equal((await request(`${sys}/revisioned_object/pages`, { method: 'PUT', headers: admin })).status, 201);
        const html = await put('/revisioned_object/pages/Main%2FPage/html', '<p>v1</p>', { 'content-type': 'text/html' });
        await put('/revisioned_object/pages/Main%2FPage/html', '<p>v2</p>', { 'content-type': 'text/html' });
        await put('/revisioned_object/pages/Main%2FPage/wikitext', "''v2''");
        await put('/revisioned_object/pages/Other/html', '<p>o</p>', { 'content-type': 'text/html' });
        const redirect = await get('/revisioned_object/pages/Main%2FPage');
        assert.equal(redirect.status, 302);
        assert.equal(redirect.headers.location, 'Main%2FPage/');
        assert.deepEqual((await get('/revisioned_object/pages/Main%2FPage/')).json.items, ['html', 'wikitext']);
        assert.equal((await get('/revisioned_object/pages/Main%2FPage/html')).text, '<p>v2</p>');
        assert.equal((await get(`/revisioned_object/pages/Main%2FPage/html/${html.json.tid}`)).text, '<p>v1</p>');
        assert.equal((await get('/revisioned_object/pages/Main%2FPage/html/')).json.items.length, 2);
        assert.equal((await get('/revisioned_object/pages/Main%2FPage/wikitext')).text, "''v2''");
        assert.deepEqual((await get('/revisioned_object/pages/')).json.items, ['Main/Page', 'Other']);
        assert.equal((await get('/revisioned_object/pages/Nothing/')).status, 404);
        assert.equal((await get('/revisioned_object/pages/Main%2FPage/css')).status, 404);
      });
    });

    it('documents the bucket routes in the OpenAPI document', async () => {
      const spec = (await request(`${s.base}/${s.domain}/v1/?spec`, { headers: admin })).json;
      for (const path of ['/sys/key_value/{bucket}/{key}', '/sys/key_rev_value/{bucket}/{key}/{revision}', '/sys/revisioned_object/{bucket}/{name}/{prop}']) {
        assert.ok(spec.paths[path], path);
      }
    });
  });
}

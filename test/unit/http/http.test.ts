import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { Validator } from '@seriousme/openapi-schema-validator';
import { admin, request, startServer, type TestServer } from '../../helpers.js';

describe('HTTP layer', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ max_body_bytes: 64 * 1024 });
  });
  after(() => s.close());

  const problem = (res: { status: number; headers: Record<string, unknown>; json: any }, status: number) => {
    assert.equal(res.status, status);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.json.status, status);
    for (const field of ['type', 'title', 'detail', 'instance']) assert.equal(typeof res.json[field], 'string', field);
  };

  it('lists the served domains at / and answers health checks', async () => {
    assert.deepEqual((await request(`${s.base}/`)).json, { items: [s.domain] });
    const health = await request(`${s.base}/_health`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { status: 'ok', storage: { backend: 'sqlite', status: 'ok' }, wikis: { [s.domain]: { circuit: 'closed' } } });
  });

  it('echoes a valid x-request-id and makes one otherwise', async () => {
    assert.equal((await request(`${s.base}/_health`, { headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'], 'abc-123');
    const made = (await request(`${s.base}/_health`, { headers: { 'x-request-id': 'bad id\twith space' } })).headers['x-request-id'];
    assert.match(String(made), /^[0-9a-f-]{36}$/);
  });

  it('renders unknown routes, unknown domains and wrong methods as problem+json', async () => {
    problem(await request(`${s.base}/${s.domain}/v1/nothing/here`), 404);
    problem(await request(`${s.base}/nowhere.org/v1/`), 404);
    const wrong = await request(`${s.base}/${s.domain}/sys/table/t`, { method: 'POST', headers: admin });
    problem(wrong, 405);
    assert.equal(wrong.headers.allow, 'GET, PUT, DELETE, HEAD');
  });

  it('rejects broken percent-encoding, malformed JSON, wrong content types and oversized bodies with 4xx', async () => {
    problem(await request(`${s.base}/${s.domain}/sys/table/%E0%A4%A`, { headers: admin }), 400);
    const url = `${s.base}/${s.domain}/sys/table/t`;
    problem(await request(url, { method: 'PUT', headers: { ...admin, 'content-type': 'application/json' }, body: '{"attributes": ' }), 400);
    problem(await request(url, { method: 'PUT', headers: { ...admin, 'content-type': 'text/plain' }, body: 'attributes' }), 415);
    problem(await request(url, { method: 'PUT', headers: admin, body: { big: 'x'.repeat(70 * 1024) } }), 413);
    problem(await request(url, { method: 'PUT', headers: { ...admin, 'content-type': 'application/json' } }), 400);
  });

  it('keeps /sys/ for callers with the admin token', async () => {
    problem(await request(`${s.base}/${s.domain}/sys/`), 403);
    problem(await request(`${s.base}/${s.domain}/sys/`, { headers: { authorization: 'Bearer wrong' } }), 403);
    assert.deepEqual((await request(`${s.base}/${s.domain}/sys/`, { headers: admin })).json, { items: ['key_rev_value', 'key_value', 'page_branches', 'page_purges', 'page_renders', 'page_saves', 'revisioned_object', 'table', 'transactions'] });
    problem(await request(`${s.base}/${s.domain}/sys/key_value/`), 403);
    problem(await request(`${s.base}/${s.domain}/sys/no/such/route`), 403);
    const deeper = await request(`${s.base}/${s.domain}/sys/key_value/`, { headers: admin });
    assert.equal(deeper.status, 404, 'buckets are not listed: their names are parameters');
    const v1 = await request(`${s.base}/${s.domain}/v1/`);
    assert.ok(v1.json.items.includes('page') && v1.json.items.includes('revision'));
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await request(`${s.base}/${s.domain}/v1/?spec`);
    const head = await request(`${s.base}/${s.domain}/v1/?spec`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.raw.length, 0);
    assert.equal(head.headers['content-length'], get.headers['content-length']);
    assert.equal(head.headers.etag, get.headers.etag);
  });

  it('answers a matching If-None-Match with 304', async () => {
    const first = await request(`${s.base}/${s.domain}/v1/?spec`);
    const etag = String(first.headers.etag);
    assert.ok(etag.startsWith('"'));
    const again = await request(`${s.base}/${s.domain}/v1/?spec`, { headers: { 'if-none-match': `"other", W/${etag}` } });
    assert.equal(again.status, 304);
    assert.equal(again.raw.length, 0);
    assert.equal(again.headers.etag, etag);
    assert.equal((await request(`${s.base}/${s.domain}/v1/?spec`, { headers: { 'if-none-match': '"other"' } })).status, 200);
  });

  it('answers a GET whose If-Match fails with 412, with none of the answer it stands for', async () => {
    const url = `${s.base}/${s.domain}/v1/?spec`;
    const first = await request(url);
    const etag = String(first.headers.etag);
    for (const headers of [{ 'if-match': '"other"' }, { 'if-match': `W/${etag}` }] as Record<string, string>[]) {
      const failed = await request(url, { headers });
      problem(failed, 412);
      assert.equal(failed.headers.etag, undefined, JSON.stringify(headers));
    }
    // An answer without Last-Modified has no date to hold If-Unmodified-Since against: it is ignored.
    for (const headers of [{ 'if-match': `"other", ${etag}` }, { 'if-match': '*' }, { 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' }] as Record<string, string>[]) {
      const passed = await request(url, { headers });
      assert.equal(passed.status, 200, JSON.stringify(headers));
      assert.deepEqual(passed.raw, first.raw);
    }
  });

  it('compresses with gzip or brotli as the client accepts, and not at all otherwise', async () => {
    const url = `${s.base}/${s.domain}/v1/?spec`;
    const plain = await request(url);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /Accept-Encoding/);
    const gz = await request(url, { headers: { 'accept-encoding': 'gzip, deflate' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(zlib.gunzipSync(gz.raw), plain.raw);
    const br = await request(url, { headers: { 'accept-encoding': 'br;q=1, gzip;q=0.5' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(zlib.brotliDecompressSync(br.raw), plain.raw);
    assert.equal((await request(url, { headers: { 'accept-encoding': 'gzip;q=0' } })).headers['content-encoding'], undefined);
  });

  it('serves a valid OpenAPI 3.1 document and a docs page with local assets', async () => {
    const spec = (await request(`${s.base}/${s.domain}/v1/?spec`)).json;
    assert.equal(spec.openapi, '3.1.0');
    const result = await new Validator().validate(spec);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    assert.equal(Object.keys(spec.paths).filter((p) => p.startsWith('/sys/')).length, 0, 'the public document describes no internal route');
    const internal = (await request(`${s.base}/${s.domain}/v1/?spec`, { headers: admin })).json;
    assert.equal((await new Validator().validate(internal)).valid, true);
    assert.ok(internal.paths['/sys/table/{table}/'].put, 'table routes are documented to the admin');
    assert.deepEqual(internal.paths['/sys/table/{table}'].get.security, [{ adminToken: [] }]);
    const doc = await request(`${s.base}/${s.domain}/v1/?doc`);
    assert.match(String(doc.headers['content-type']), /text\/html/);
    const assets = [...doc.text.matchAll(/(?:src|href)="(\/_static\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length >= 2);
    for (const asset of assets) assert.equal((await request(`${s.base}${asset}`)).status, 200, asset);
    assert.doesNotMatch(doc.text, /https?:\/\//, 'no CDN');
  });

  it('exports request counts and latencies by route template, internal requests apart from external ones', async () => {
    await request(`${s.base}/${s.domain}/sys/table/whatever`, { headers: admin });
    await request(`${s.base}/${s.domain}/sys/key_value/nobucket/k`, { headers: admin });
    const text = (await request(`${s.base}/metrics`)).text;
    assert.match(text, /http_requests_total\{route="\/\{domain\}\/sys\/table\/\{table\}",method="GET",status="404",origin="external"\} \d+/);
    // The bucket read asked the table API in-process: that request is counted too, as internal.
    assert.match(text, /http_requests_total\{route="\/\{domain\}\/sys\/table\/\{table\}\/_query",method="POST",status="404",origin="internal"\} \d+/);
    assert.match(text, /http_request_duration_seconds_bucket\{le="0.005",route="\/_health"/);
  });
});

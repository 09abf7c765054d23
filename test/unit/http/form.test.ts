import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer } from '../../helpers.js';
import { parseForm } from '../../../src/http/form.js';

/** Form bodies (what HTML forms and MediaWiki's client send), hostile ones included. */
describe('form bodies', () => {
  let s: TestServer;
  let url: string;
  before(async () => {
    s = await startServer();
    // A route with a form body whose schema refuses an empty wikitext field before any wiki call.
    url = `${s.base}/${s.domain}/v1/transform/wikitext/to/html`;
  });
  after(() => s.close());

  const post = (contentType: string, body: string | Buffer) => request(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  const problem = (res: { status: number; headers: Record<string, unknown>; json: any }, status: number) => {
    assert.equal(res.status, status, JSON.stringify(res.json));
    assert.equal(res.headers['content-type'], 'application/problem+json');
  };

  it('reads urlencoded and multipart fields and types them by the schema', async () => {
    problem(await post('application/x-www-form-urlencoded', 'wikitext=x&body_only=maybe'), 400);
    const multipart = '--b\r\nContent-Disposition: form-data; name="wikitext"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name="body_only"\r\n\r\nmaybe\r\n--b--\r\n';
    const res = await post('multipart/form-data; boundary=b', multipart);
    problem(res, 400);
    assert.match(res.json.detail, /body_only/);
  });

  it('decodes urlencoded fields as the URL Standard does (URLSearchParams), a 15 MB field within a few times its size', async () => {
    // Node's URLSearchParams is the oracle for text in ASCII whose escapes make UTF-8 (beside a
    // stray `%` it misreads what follows beyond ASCII: `%😀é%C3%A9` gives `%%=…`, `%zz€` `%zz�`);
    // the rest is checked against what Python's parse_qsl gives.
    const alphabet = ['a', '+', '%', '%2', '%zz', '%41', '%C3%A9', '%E2%82%AC', '%F0%9F%98%80', '=', '&', '&&', ' ', '%00', '%25', '%2B', '%3D', '%26'];
    const pythons: [string, Record<string, string>][] = [
      ['%FF', { '\uFFFD': '' }], ['%E2%82a', { '\uFFFDa': '' }], ['a=%FF%3D%C3%A9', { a: '\uFFFD=é' }], ['%F0%9F%98', { '\uFFFD': '' }],
      ['%😀é%C3%A9aé %26%2B', { '%😀ééaé &+': '' }], ['%3D++%a%zz€', { '=  %a%zz€': '' }], ['é=€&😀', { é: '€', '😀': '' }],
      ['a+b=%zz%C3%A9%', { 'a b': '%zzé%' }],
    ];
    for (const [text, expected] of pythons) assert.deepEqual({ ...(await parseForm(Buffer.from(text), 'urlencoded', '')) }, expected, text);
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let n = 0; n < 2000; n++) {
      const text = Array.from({ length: Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const expected: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(text)) expected[k] = v;
      assert.deepEqual({ ...(await parseForm(Buffer.from(text), 'urlencoded', 'application/x-www-form-urlencoded')) }, expected, JSON.stringify(text));
    }
    const html = `<p>${'abcdefghij '.repeat(1_430_000)}é</p>`;
    const body = Buffer.from(new URLSearchParams({ html, other: 'a b' }).toString());
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    // Parsed in one synchronous step: what it left on the heap, garbage included, is its peak or near it.
    const fields = await parseForm(body, 'urlencoded', 'application/x-www-form-urlencoded');
    const peak = process.memoryUsage().heapUsed;
    assert.equal(fields.html, html);
    assert.equal(fields.other, 'a b');
    // The field as a string is twice its length (é makes it two-byte): little more than that.
    assert.ok(peak - before < 4 * html.length, `${Math.round((peak - before) / 1e6)} MB of heap for a ${Math.round(html.length / 1e6)} MB field`);
  });

  it('refuses malformed multipart bodies with 400, never a 500 or a hang', async () => {
    problem(await post('multipart/form-data', '--b\r\n'), 400);
    problem(await post('multipart/form-data; boundary=b', '--b\r\nContent-Disposition: form-data; name="wikitext"\r\n\r\nno end'), 400);
    problem(await post('multipart/form-data; boundary=b', 'not multipart at all'), 400);
  });

  it('refuses forms with more fields than any form of the API has (413)', async () => {
    problem(await post('application/x-www-form-urlencoded', Array.from({ length: 5000 }, (_, i) => `f${i}=1`).join('&')), 413);
    const parts = Array.from({ length: 500 }, (_, i) => `--b\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n1\r\n`).join('') + '--b--\r\n';
    problem(await post('multipart/form-data; boundary=b', parts), 413);
  });

  it('does not let field names reach object prototypes', async () => {
    const res = await post('application/x-www-form-urlencoded', '__proto__=x&constructor=y&wikitext=z');
    problem(res, 400);
    assert.match(res.json.detail, /__proto__|constructor/);
  });

  it('reads JSON carried in a form field within the limits of a JSON body (413), never a crash', async () => {
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    const res = await request(`${s.base}/${s.domain}/v1/transform/html/to/wikitext`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ html: '<p>x</p>', 'data-mw': deep }).toString(),
    });
    problem(res, 413);
    const notJson = await request(`${s.base}/${s.domain}/v1/transform/html/to/wikitext`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'html=x&data-mw=%7Bnope',
    });
    problem(notJson, 400);
    assert.match(notJson.json.detail, /data-mw/);
  });

  it('refuses other body types with 415', async () => {
    problem(await post('text/plain', 'wikitext=x'), 415);
  });
});

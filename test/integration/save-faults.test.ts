import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { admin, request, startServer, type TestServer } from '../helpers.js';
import { WIKI_URL } from '../wiki.js';
import { STATUS_OF_CODE } from '../../src/modules/page/edit/edit-errors.js';

const RUN = Date.now().toString(36);

/**
 * The wiki's refusals of an edit that the test wiki cannot be made to give (spam filters, rate
 * limits, read-only mode, expired tokens): the real wiki behind a relay that answers `action=edit`
 * as scripted and passes everything else through.
 */
describe('saving when the wiki refuses the edit', () => {
  let s: TestServer;
  let relay: http.Server;
  let v1: string;
  let script: { status: number; body: unknown } = { status: 200, body: {} };
  const edits: http.IncomingHttpHeaders[] = [];
  const forms: URLSearchParams[] = [];

  before(async () => {
    relay = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && new URLSearchParams(body.toString()).get('action') === 'edit') {
        edits.push(req.headers);
        forms.push(new URLSearchParams(body.toString()));
        return res.writeHead(script.status, { 'content-type': 'application/json' }).end(JSON.stringify(script.body));
      }
      const headers = { ...req.headers } as Record<string, string>;
      delete headers.host;
      const upstream = await fetch(`${WIKI_URL}${req.url}`, { method: req.method, headers, body: req.method === 'GET' ? undefined : body, redirect: 'manual' });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
    // A proxy in front on 127.0.0.1 (trusted); clients connect from other loopback addresses too.
    s = await startServer({ wikis: { 'wiki.test': { action_api: `${url}/api.php`, rest_api: `${url}/rest.php` } }, trusted_proxies: ['127.0.0.1', '::1'] });
    v1 = `${s.base}/wiki.test/v1`;
  });
  after(async () => {
    await s.close();
    await new Promise((r) => relay.close(r));
  });

  const refuse = (code: string) => ({ status: 200, body: { errors: [{ code, text: `Scripted ${code}.`, module: 'edit' }] } });
  const create = (title: string, headers: Record<string, string> = {}, from?: string) =>
    request(`${v1}/page/${encodeURIComponent(title)}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: { wikitext: 'New.' }, from });

  // Every row of the one mapping table; a code it lacks is the wiki refusing what was sent (422,
  // as Scribunto's for a module that does not compile), unless it is a code of the wiki failing
  // (502). Retried or rechecked codes
  // (badtoken, maxlag, editconflict) have tests of their own.
  const cases: [string, number, string][] = [
    ...Object.entries(STATUS_OF_CODE)
      .filter(([code]) => !['badtoken', 'maxlag', 'editconflict'].includes(code))
      .map(([code, { status, kind }]) => [code, status, kind] as [string, number, string]),
    ['some-code-no-wiki-has', 422, 'content-refused'],
    ['scribunto-lua-error-location', 422, 'content-refused'],
    ['internal_api_error_DBQueryError', 502, 'upstream-error'],
  ];
  for (const [code, status, kind] of cases) {
    it(`answers the wiki's ${code} with ${status}, the wiki's code in the body, and frees the page`, async () => {
      const title = `Refused ${code} ${RUN}`;
      script = refuse(code);
      edits.length = 0;
      const res = await create(title);
      assert.equal(res.status, status, res.text);
      assert.equal(res.json.type, `urn:problem:${kind}`);
      assert.equal(res.json.wiki_code, code);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(edits.length, 1, 'sent once');
      assert.equal((await request(`${v1}/page/${encodeURIComponent(title.replace(/ /g, '_'))}/html`)).status, 404, 'nothing stored');
      // The next attempt is not blocked by the failed one.
      assert.equal((await create(title)).status, status);
    });
  }

  it('retries a bad token once with a fresh one, then answers 403', async () => {
    script = refuse('badtoken');
    edits.length = 0;
    const res = await create(`Bad token ${RUN}`);
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json.wiki_code, 'badtoken');
    assert.equal(edits.length, 2);
  });

  it('never resends an edit the wiki failed on (it may have been saved): 502', async () => {
    script = { status: 500, body: {} };
    edits.length = 0;
    const res = await create(`Wiki error ${RUN}`);
    assert.equal(res.status, 502, res.text);
    assert.equal(edits.length, 1);
  });

  it("forwards the caller's Cookie and Authorization, never the service's admin credential", async () => {
    script = refuse('readonly');
    edits.length = 0;
    await create(`Credentials ${RUN}`, { cookie: 'session=abc', authorization: 'Bearer caller-oauth-token' });
    assert.equal(edits[0]!.cookie, 'session=abc');
    assert.equal(edits[0]!.authorization, 'Bearer caller-oauth-token');
    await create(`Credentials ${RUN}`, admin);
    assert.equal(edits[1]!.authorization, undefined);
  });

  it("passes on a trusted proxy's X-Forwarded-For only when it lists addresses, always with the proxy's own address", async () => {
    script = refuse('readonly');
    const sent: (string | undefined)[] = [];
    for (const claimed of ['admin', '203.0.113.5', '203.0.113.5, 2001:db8::1', '203.0.113.5, not-an-address', '']) {
      edits.length = 0;
      await create(`Forwarded ${RUN}`, claimed ? { 'x-forwarded-for': claimed } : {});
      sent.push(edits[0]!['x-forwarded-for'] as string | undefined);
    }
    assert.deepEqual(sent, ['127.0.0.1', '203.0.113.5, 127.0.0.1', '203.0.113.5, 2001:db8::1, 127.0.0.1', '127.0.0.1', '127.0.0.1']);
  });

  it('names a client that is no trusted proxy by its own address alone, whatever X-Forwarded-For it claims', async () => {
    script = refuse('readonly');
    edits.length = 0;
    await create(`Spoofed ${RUN}`, { 'x-forwarded-for': '10.9.9.9' }, '127.0.0.5');
    assert.equal(edits[0]!['x-forwarded-for'], '127.0.0.5');
    await create(`Spoofed ${RUN}`, { 'x-forwarded-for': '10.9.9.9' });
    assert.equal(edits[1]!['x-forwarded-for'], '10.9.9.9, 127.0.0.1', "a trusted proxy's chain is kept");
  });

  it('never forwards the admin token, whatever the spelling of its scheme; two Authorization headers are 400', async () => {
    script = refuse('readonly');
    for (const spelling of ['bearer', 'BEARER', 'Bearer ', 'token', '']) {
      edits.length = 0;
      await create(`Admin spelling ${RUN}`, { authorization: `${spelling} ${admin.authorization.split(' ')[1]}`.trim() });
      assert.ok(edits.every((e) => e.authorization === undefined), `not forwarded as '${spelling}'`);
    }
    const twice = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${v1}/page/Two_auth_${RUN}`, {
        method: 'POST',
        headers: [['content-type', 'application/json'], ['authorization', 'Bearer one'], ['authorization', 'Bearer two'], ['content-length', '22']] as unknown as http.OutgoingHttpHeaders,
      }, (res) => { res.resume(); resolve(res.statusCode!); });
      req.on('error', reject);
      req.end('{"wikitext":"Twice."}\n');
    });
    assert.equal(twice, 400);
  });

  it("refuses a cookie-only save without the caller's own CSRF token, and passes the token given to the wiki", async () => {
    script = refuse('readonly');
    edits.length = 0;
    forms.length = 0;
    const without = await create(`Csrf ${RUN}`, { cookie: 'my_wiki_session=abc' });
    assert.equal(without.status, 403, without.text);
    assert.equal(without.json.wiki_code, 'badtoken');
    assert.equal(edits.length, 0, 'the wiki was not asked to edit');
    const form = await request(`${v1}/page/${encodeURIComponent(`Csrf form ${RUN}`)}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: 'my_wiki_session=abc' }, body: 'wikitext=Forged.',
    });
    assert.equal(form.status, 403, 'a form any web page can post is refused too');
    await create(`Csrf ${RUN}`, { cookie: 'my_wiki_session=abc', 'x-csrf-token': 'caller-token+\\' });
    assert.equal(forms.at(-1)!.get('token'), 'caller-token+\\', 'the header token is the edit\'s');
    assert.equal(forms.at(-1)!.get('assert'), 'user', 'a session that expired is not turned into an anonymous edit');
    const body = await request(`${v1}/page/${encodeURIComponent(`Csrf ${RUN}`)}`, {
      method: 'POST', headers: { 'content-type': 'application/json', cookie: 'my_wiki_session=abc' }, body: { wikitext: 'Mine.', csrf_token: 'body-token+\\' },
    });
    assert.equal(body.status, 503, body.text);
    assert.equal(forms.at(-1)!.get('token'), 'body-token+\\');
    script = refuse('badtoken');
    edits.length = 0;
    const bad = await create(`Csrf ${RUN}`, { cookie: 'my_wiki_session=abc', 'x-csrf-token': 'stale' });
    assert.equal(bad.status, 403);
    assert.equal(edits.length, 1, "the caller's own token is not swapped for a fetched one");
  });

  it('answers 401 when the wiki no longer knows the session the caller sent', async () => {
    script = refuse('assertuserfailed');
    const res = await create(`Expired ${RUN}`, { authorization: 'Bearer caller-oauth-token' });
    assert.equal(res.status, 401, res.text);
    assert.equal(res.json.wiki_code, 'assertuserfailed');
  });

  it("forwards the client's address to the wiki after any a trusted proxy gave (X-Forwarded-For)", async () => {
    script = refuse('readonly');
    edits.length = 0;
    await create(`Address ${RUN}`);
    assert.equal(edits[0]!['x-forwarded-for'], '127.0.0.1');
    await create(`Address ${RUN}`, { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(edits[1]!['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    await create(`Address ${RUN}`, { 'x-forwarded-for': '203.0.113.9' }, '127.0.0.6');
    assert.equal(edits[2]!['x-forwarded-for'], '127.0.0.6');
  });
});

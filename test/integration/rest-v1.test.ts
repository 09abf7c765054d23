import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer, located } from '../helpers.js';
import { etagOf, WIKI_URL, WikiAdmin } from '../wiki.js';

const RUN = Date.now().toString(36);
const NOT_FOUND = 'https://mediawiki.org/wiki/HyperSwitch/errors/not_found';
/** What MediaWiki 1.39's editor sends. */
const VE_ACCEPT = 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.4.0"';

/** The rest_v1 surface against the real wiki, its answers checked against RESTBase's published spec. */
describe('rest_v1: Wikimedia REST API compatibility', () => {
  let s: TestServer;
  let wiki: WikiAdmin;
  let rest: string;

  before(async () => {
    // A front on 127.0.0.1 is trusted to name its clients (the stash limit's test speaks as one).
    s = await startServer({ wikis: { 'wiki.test': { action_api: `${WIKI_URL}/api.php`, rest_api: `${WIKI_URL}/rest.php` } }, latest_check_interval: 3600, trusted_proxies: ['127.0.0.1'] });
    rest = `${s.base}/wiki.test/rest_v1`;
    wiki = await new WikiAdmin().login();
  });
  after(() => s.close());


  it("limits stashes to RESTBase's five a second per client, with its 429 request_rate_exceeded", async () => {
    const title = `Rest v1 stash rate ${RUN}`;
    await wiki.edit(title, 'Stashed often.');
    const url = `${rest}/page/html/${encodeURIComponent(title.replace(/ /g, '_'))}?stash=true`;
    assert.equal((await request(url, { headers: { 'x-forwarded-for': '203.0.113.6' } })).status, 200, 'rendered and stored');
    // Fifty in ten seconds is RESTBase's five a second over its limiter's window.
    const burst = await Promise.all(Array.from({ length: 49 }, () => request(url, { headers: { 'x-forwarded-for': '203.0.113.6' } })));
    assert.deepEqual([...new Set(burst.map((r) => r.status))], [200]);
    assert.equal(burst[0]!.headers['cache-control'], 'no-cache', 'a stash is not kept by caches');
    const refused = await request(url, { headers: { 'x-forwarded-for': '203.0.113.6' } });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.type, 'https://mediawiki.org/wiki/HyperSwitch/errors/request_rate_exceeded');
    assert.equal(refused.json.title, 'Stashing rate limit exceeded');
    assert.equal(refused.json.rate_limit_per_second, 5);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    // A stashing transform from that client is refused before Parsoid is asked; another client,
    // HTML without a stash, and a request the front (or the wiki's server) makes of itself are not.
    const transform = await request(`${rest}/transform/wikitext/to/html/${encodeURIComponent(title.replace(/ /g, '_'))}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.6' }, body: { wikitext: 'x', stash: true } });
    assert.equal(transform.status, 429, transform.text);
    assert.equal((await request(url.replace('?stash=true', ''), { headers: { 'x-forwarded-for': '203.0.113.6' } })).status, 200);
    assert.equal((await request(url, { headers: { 'x-forwarded-for': '203.0.113.7' } })).status, 200);
    assert.equal((await request(url)).status, 200);
  });

  it('stashes wikitext turned into HTML (stash=true): the edited HTML with that ETag keeps every untouched byte', async () => {
    const wikitext = "Para one with [[Bodmin|the town]] and text.\n\n*item  one\n*item two\n\n{{Nosuchtemplate | a = b }}\n\nPara ''three''  here.";
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const stash of ['true', '1']) {
      const html = await request(`${rest}/transform/wikitext/to/html/Bodmin`, { method: 'POST', headers: form, body: new URLSearchParams({ wikitext, stash }).toString() });
      assert.equal(html.status, 200, html.text);
      assert.match(String(html.headers.etag), /^"0\/[0-9a-f-]{36}\/stash"$/, 'an ETag naming the stash');
      const edited = html.text.replace('and text.', 'and more text.');
      const back = (ifMatch?: string) => request(`${rest}/transform/html/to/wikitext/Bodmin`, {
        method: 'POST', headers: { ...form, ...(ifMatch ? { 'if-match': ifMatch } : {}) }, body: new URLSearchParams({ html: edited }).toString(),
      });
      const exact = await back(String(html.headers.etag));
      assert.equal(exact.status, 200, exact.text);
      assert.equal(exact.text, wikitext.replace('and text.', 'and more text.'), 'only the edit changed');
      const plain = await back();
      assert.notEqual(plain.text, exact.text, 'without the stash, untouched wikitext is normalised (what the stash prevents)');
    }
    const gone = await request(`${rest}/transform/html/to/wikitext/Bodmin`, {
      method: 'POST', headers: { ...form, 'if-match': '"0/00000000-0000-1000-8000-000000000000/stash"' }, body: new URLSearchParams({ html: '<p>x</p>' }).toString(),
    });
    assert.equal(gone.status, 412, 'a stash that does not exist (or expired) fails the precondition');
  });

  it('answers browsers as Wikimedia\'s REST API does: CORS, preflights, inert content, Content-Language, the same Vary on a 304', async () => {
    const res = await request(`${rest}/page/html/Bodmin`, { headers: { accept: VE_ACCEPT, origin: 'https://elsewhere.example' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-credentials'], undefined, 'never credentials with *');
    assert.match(String(res.headers['access-control-expose-headers']), /\betag\b/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.match(String(res.headers['referrer-policy']), /origin/);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.doesNotMatch(csp, /script-src/, 'no script of a page runs');
    const lang = ((await (await fetch(`${WIKI_URL}/api.php?action=query&meta=siteinfo&format=json`)).json()) as any).query.general.lang;
    assert.equal(res.headers['content-language'], lang);
    const wikitext = await request(`${s.base}/wiki.test/v1/page/Bodmin/wikitext`);
    assert.equal(wikitext.headers['content-language'], lang);
    for (const [url, headers] of [[`${rest}/page/html/Bodmin`, { accept: VE_ACCEPT }], [`${s.base}/wiki.test/v1/page/Bodmin/html`, {}]] as const) {
      const full = await request(url, { headers: { ...headers, 'accept-encoding': 'gzip' } });
      const again = await request(url, { headers: { ...headers, 'accept-encoding': 'gzip', 'if-none-match': String(full.headers.etag) } });
      assert.equal(again.status, 304);
      assert.equal(again.headers.vary, full.headers.vary, `${url}: a 304 varies as its 200`);
      assert.match(String(again.headers.vary), /accept-encoding/i);
    }
    const preflight = await request(`${rest}/transform/html/to/wikitext/Bodmin`, {
      method: 'OPTIONS',
      headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, if-match' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], '*');
    assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
    assert.match(String(preflight.headers['access-control-allow-headers']), /if-match/);
    const internal = await request(`${s.base}/wiki.test/sys/table/`, { method: 'OPTIONS', headers: { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' } });
    assert.equal(internal.status, 403);
    assert.equal(internal.headers['access-control-allow-origin'], undefined, 'the internal API is not offered to other origins');
    const moved = await request(`${rest}/page/html/bodmin`);
    assert.ok(!String(moved.headers.location).startsWith('/'), `relative Location ${moved.headers.location}`);
  });

  it('serves page/html as RESTBase did: 2.x HTML with data-mw inline, ETag "{revision}/{tid}", Content-Location', async () => {
    const res = await request(`${rest}/page/html/Bodmin`, { headers: { accept: VE_ACCEPT } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.6.0"');
    assert.match(res.text, /^<!DOCTYPE html>/);
    assert.match(res.text, / data-mw='\{/);
    assert.doesNotMatch(res.text, /999\.0\.0/);
    const { rev, tid } = etagOf(res);
    assert.equal(rev, await wiki.latestRevid('Bodmin'));
    assert.equal(located(res, 'content-location'), `/wiki.test/rest_v1/page/html/Bodmin/${rev}/${tid}`);
    assert.match(String(res.headers.vary), /accept/i);
    // The same render as /v1/, whose 999.x HTML keeps data-mw apart.
    const v1 = await request(`${s.base}/wiki.test/v1/page/Bodmin/html`);
    assert.equal(v1.headers.etag, res.headers.etag);
    assert.doesNotMatch(v1.text, / data-mw=/);
    // By revision, by tid: the same render.
    for (const path of [`/page/html/Bodmin/${rev}`, `/page/html/Bodmin/${rev}/${tid}`]) {
      const again = await request(`${rest}${path}`);
      assert.equal(again.status, 200, path);
      assert.equal(again.text, res.text, path);
      assert.equal(again.headers.etag, res.headers.etag, path);
    }
    assert.equal((await request(`${rest}/page/html/Bodmin/${rev}/${tid}`)).headers['cache-control'], 'public, max-age=300');
  });

  it('answers a 999.x Accept with the stored HTML, and another major with 406 in RESTBase\'s error shape', async () => {
    const v999 = await request(`${rest}/page/html/Bodmin`, { headers: { accept: 'text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/999.0.0"' } });
    assert.equal(v999.status, 200);
    assert.match(String(v999.headers['content-type']), /HTML\/999\.0\.0/);
    const v3 = await request(`${rest}/page/html/Bodmin`, { headers: { accept: 'text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/3.0.0"' } });
    assert.equal(v3.status, 406);
    assert.equal(v3.json.type, 'https://mediawiki.org/wiki/HyperSwitch/errors/not_acceptable');
    assert.equal(v3.json.method, 'get');
    assert.equal(v3.json.uri, '/wiki.test/rest_v1/page/html/Bodmin');
    assert.equal(typeof v3.json.title, 'string');
    assert.equal(typeof v3.json.detail, 'string');
  });

  it('answers a missing page with RESTBase\'s not_found (what clients compare against), and redirects non-normalized titles', async () => {
    const missing = await request(`${rest}/page/html/No_such_page_${RUN}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.type, NOT_FOUND);
    assert.equal(missing.headers['content-type'], 'application/problem+json');
    const summary = await request(`${rest}/page/summary/No_such_page_${RUN}`);
    assert.equal(summary.json.type, NOT_FOUND);
    const moved = await request(`${rest}/page/html/bodmin?redirect=false`);
    assert.equal(moved.status, 301);
    assert.equal(located(moved), '/wiki.test/rest_v1/page/html/Bodmin?redirect=false');
  });

  it('serves data-parsoid of the render a client holds; a tid of another revision is a 404', async () => {
    const html = await request(`${rest}/page/html/BBDO`);
    const { rev, tid } = etagOf(html);
    const dp = await request(`${rest}/page/data-parsoid/BBDO/${rev}/${tid}`);
    assert.equal(dp.status, 200);
    assert.match(String(dp.headers['content-type']), /^application\/json/);
    assert.equal(typeof dp.json.counter, 'number');
    assert.equal(typeof dp.json.ids, 'object');
    const ids = [...html.text.matchAll(/ id="(mw[\w-]+)"/g)].map((m) => m[1]!);
    assert.ok(ids.every((id) => id in dp.json.ids), 'every id of the HTML has its data-parsoid');
    assert.equal((await request(`${rest}/page/data-parsoid/BBDO/${rev + 1000000}/${tid}`)).status, 404);
  });

  it('follows redirect pages as RESTBase did: 302 to the target with the page in the body, 200 with redirect=false', async () => {
    const title = `Rest redirect ${RUN}`.replace(/ /g, '_');
    await wiki.edit(title, '#REDIRECT [[Bodmin]]');
    const res = await request(`${rest}/page/html/${title}`);
    assert.equal(res.status, 302);
    assert.equal(located(res), '/wiki.test/rest_v1/page/html/Bodmin');
    assert.match(res.text, /mw:PageProp\/redirect/);
    const stay = await request(`${rest}/page/html/${title}?redirect=false`);
    assert.equal(stay.status, 200);
    const summary = await request(`${rest}/page/summary/${title}`);
    assert.equal(summary.status, 302);
    assert.equal(located(summary), '/wiki.test/rest_v1/page/summary/Bodmin');
    const meta = await request(`${rest}/page/title/${title}`);
    assert.equal(meta.json.items[0].redirect, true);
  });

  it('serves page/title and page/revision in RESTBase\'s item shape', async () => {
    const latest = await request(`${rest}/page/title/Bodmin`);
    assert.equal(latest.status, 200);
    assert.match(String(latest.headers['content-type']), /^application\/json/);
    const [item] = latest.json.items;
    for (const field of ['title', 'page_id', 'rev', 'tid', 'namespace', 'user_id', 'user_text', 'timestamp', 'comment', 'tags', 'restrictions', 'page_language', 'redirect']) {
      assert.ok(field in item, `field ${field}`);
    }
    assert.equal(item.title, 'Bodmin');
    assert.equal(item.namespace, 0);
    assert.equal(item.page_language, 'en');
    assert.equal(item.redirect, false);
    assert.equal(item.rev, await wiki.latestRevid('Bodmin'));
    const byRev = await request(`${rest}/page/title/Bodmin/${item.rev}`);
    assert.deepEqual(byRev.json.items[0], item);
    const byId = await request(`${rest}/page/revision/${item.rev}`);
    assert.deepEqual(byId.json.items[0], item);
  });

  it('builds page/summary from the stored render: the lead paragraph as text and HTML, content URLs, the render\'s tid', async () => {
    const html = await request(`${rest}/page/html/Bodmin`);
    const summary = await request(`${rest}/page/summary/Bodmin`);
    assert.equal(summary.status, 200);
    assert.match(String(summary.headers['content-type']), /^application\/json; charset=utf-8; profile="https:\/\/www.mediawiki.org\/wiki\/Specs\/Summary\/1\.\d+\.\d+"/);
    const b = summary.json;
    assert.equal(b.type, 'standard');
    assert.equal(b.title, 'Bodmin');
    assert.deepEqual(b.titles, { canonical: 'Bodmin', normalized: 'Bodmin', display: 'Bodmin' });
    assert.deepEqual(b.namespace, { id: 0, text: '' });
    assert.equal(b.revision, String(etagOf(html).rev));
    assert.equal(b.tid, etagOf(html).tid);
    assert.equal(b.lang, 'en');
    assert.equal(b.dir, 'ltr');
    assert.match(b.extract, /^Bodmin .*is a civil parish and historic town in Cornwall/);
    assert.doesNotMatch(b.extract, /Use British English/, 'paragraphs made only by templates are skipped');
    assert.doesNotMatch(b.extract, /<|\[\d+\]/);
    assert.match(b.extract_html, /^<p>.*<b>Bodmin<\/b>/);
    assert.doesNotMatch(b.extract_html, /<a |href=/);
    assert.equal(b.content_urls.desktop.page, `${WIKI_URL}/index.php/Bodmin`);
    assert.equal(b.content_urls.desktop.edit, `${WIKI_URL}/index.php?title=Bodmin&action=edit`);
    assert.equal(b.content_urls.desktop.talk, `${WIKI_URL}/index.php/Talk:Bodmin`);
    assert.equal(typeof b.timestamp, 'string');
    assert.equal(typeof b.pageid, 'number');
  });

  it('round-trips HTML through transform/html/to/wikitext with If-Match byte for byte; an edit changes only its paragraph', async () => {
    const source = await wiki.wikitext(await wiki.latestRevid('BBDO'));
    const html = await request(`${rest}/page/html/BBDO`, { headers: { accept: VE_ACCEPT } });
    const { rev } = etagOf(html);
    // What MediaWiki's client sends: multipart, If-Match with the ETag it read.
    const post = async (body: string) => {
      const form = new FormData();
      form.set('html', body);
      const res = await fetch(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, { method: 'POST', headers: { 'if-match': String(html.headers.etag) }, body: form });
      assert.equal(res.status, 200);
      return res.text();
    };
    assert.equal(await post(html.text), source, 'untouched HTML gives the stored wikitext exactly');
    const [whole, text] = /<p id="mw[\w-]+">([^<&]{40,})/.exec(html.text)!;
    const edited = await post(html.text.replace(whole!, whole!.replace(text!, `${text} Edited through rest_v1.`)));
    const changed = edited.split('\n').filter((line, i) => line !== source.split('\n')[i]);
    assert.equal(changed.length, 1);
    assert.match(changed[0]!, /Edited through rest_v1\./);
    // An If-Match of another revision is refused.
    const wrong = await request(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'if-match': `"${rev + 1}/${etagOf(html).tid}"` }, body: { html: html.text },
    });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json.type, 'https://mediawiki.org/wiki/HyperSwitch/errors/bad_request');
  });

  it('takes the original from the client instead of If-Match (Parsoid\'s own convention)', async () => {
    const source = await wiki.wikitext(await wiki.latestRevid('BBDO'));
    const v1 = `${s.base}/wiki.test/v1/page/BBDO`;
    const html = await request(`${v1}/html`);
    const { rev, tid } = etagOf(html);
    const dataParsoid = JSON.parse((await request(`${v1}/data-parsoid/${tid}`)).text);
    const dataMw = JSON.parse((await request(`${v1}/data-mw/${tid}`)).text);
    const original = { html: { headers: { 'content-type': html.headers['content-type'] }, body: html.text }, 'data-parsoid': { body: dataParsoid }, 'data-mw': { body: dataMw } };
    const res = await request(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: { html: html.text, 'data-mw': dataMw, original },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, source);
    const bad = await request(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'html=x&original=not%20json' });
    assert.equal(bad.status, 400);
    const badPart = await request(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { html: 'x', original: { html: 5 } } });
    assert.equal(badPart.status, 400, badPart.text);
    assert.match(badPart.text, /original\.html must be an object/);
  });

  it('takes flags and If-Match in the forms clients send, and ignores query parameters it does not know', async () => {
    // VisualEditor's switch from source to visual: body_only=1 in a form.
    const switched = await request(`${rest}/transform/wikitext/to/html/Bodmin`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'wikitext=Switched.&body_only=1',
    });
    assert.equal(switched.status, 200, switched.text);
    assert.doesNotMatch(switched.text, /<body/);
    const badFlag = await request(`${rest}/transform/wikitext/to/html/Bodmin`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'wikitext=x&body_only=maybe',
    });
    assert.equal(badFlag.status, 400);
    assert.match(badFlag.json.detail, /body_only/);
    const html = await request(`${rest}/page/html/BBDO?redirect=no&stash=1&_=123&utm_source=app`, { headers: { accept: VE_ACCEPT } });
    assert.equal(html.status, 200, 'unknown parameters (a cache buster, an app\'s tag) are ignored');
    const source = await wiki.wikitext(etagOf(html).rev);
    const { rev, tid } = etagOf(html);
    for (const ifMatch of [`W/"${rev}/${tid}"`, `${rev}/${tid}`, `"${rev}/${tid}/stash"`, `"${rev}/${tid.toUpperCase()}"`]) {
      const form = new FormData();
      form.set('html', html.text);
      const res = await fetch(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, { method: 'POST', headers: { 'if-match': ifMatch }, body: form });
      assert.equal(res.status, 200, ifMatch);
      assert.equal(await res.text(), source, `If-Match ${ifMatch}`);
    }
    const malformed = await request(`${rest}/transform/html/to/wikitext/BBDO/${rev}`, { method: 'POST', headers: { 'content-type': 'application/json', 'if-match': 'nonsense' }, body: { html: html.text } });
    assert.equal(malformed.status, 400);
  });

  it('transforms wikitext to HTML from form-encoded and JSON bodies', async () => {
    const form = await request(`${rest}/transform/wikitext/to/html/Bodmin`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ wikitext: "'''Bold''' text", body_only: 'true', stash: 'true' }).toString(),
    });
    assert.equal(form.status, 200, form.text);
    assert.match(form.text, /<b[^>]*>Bold<\/b> text/);
    assert.doesNotMatch(form.text, /<body/);
    const json = await request(`${rest}/transform/wikitext/to/html`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: 'Plain.' } });
    assert.equal(json.status, 200);
    assert.match(json.text, /<body/);
    const bad = await request(`${rest}/transform/wikitext/to/html`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { html: 'wrong field' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.type, 'https://mediawiki.org/wiki/HyperSwitch/errors/bad_request');
  });

  it('lists the surface in the OpenAPI document under its own tag; a config switch turns it off', async () => {
    const spec = (await request(`${s.base}/wiki.test/v1/?spec`)).json;
    const op = spec.paths['/rest_v1/page/html/{title}']?.get;
    assert.ok(op, 'documented');
    assert.ok(op.tags.some((t: string) => t.startsWith('rest_v1')));
    const off = await startServer({ wikis: { 'wiki.test': { action_api: `${WIKI_URL}/api.php`, rest_api: `${WIKI_URL}/rest.php` } }, rest_v1: false });
    try {
      const res = await request(`${off.base}/wiki.test/rest_v1/page/html/Bodmin`);
      assert.equal(res.status, 404);
      assert.equal(res.json.type, 'urn:problem:route-not-found');
    } finally {
      await off.close();
    }
  });
});

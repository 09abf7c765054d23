import assert from 'node:assert/strict';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers.js';
import { startAgainstWiki, WIKI_URL, type AgainstWiki } from '../wiki.js';
import { startNginxFront } from '../fronts.js';
import { THREAD_HTML2_BYTES, toHtml2 } from '../../src/modules/page/model/html-versions.js';

const RUN = Date.now().toString(36);
const WIKI_REST = `${WIKI_URL}/rest.php/v1`;

const wikiJson = async (path: string) => {
  const res = await fetch(`${WIKI_REST}${path}`);
  assert.equal(res.status, 200, `the wiki's ${path}`);
  return res.json();
};

/**
 * MediaWiki's REST API (rest.php/v1) answered by the service from storage, against the real
 * wiki, through nginx configured with the documented rule (docs/rest-php.md) (as clients reach it): its bodies
 * compared with the wiki's own, its semantics (redirects, errors, ETags) as MediaWiki 1.43
 * defines them, everything else passed to the wiki unchanged.
 */
describe('rest.php/v1: MediaWiki REST API from storage', () => {
  let a: AgainstWiki;
  /** The wiki's REST API as clients reach it (nginx in front), and the service's own. */
  let rest: string;
  let direct: string;
  let stopFront: (() => Promise<void>) | undefined;
  let made: { title: string; first: number; second: number };

  before(async () => {
    // nginx, the proxy in front, is on 127.0.0.1: its X-Forwarded-For is believed, no other's.
    a = await startAgainstWiki({ trusted_proxies: ['127.0.0.1'] });
    direct = `${a.s.base}/wiki.test/rest.php/v1`;
    const front = await startNginxFront(a.s.base);
    stopFront = front.stop;
    rest = `${front.front}/rest.php/v1`;
    const title = `Rest php ${RUN}`;
    const first = await a.wiki.edit(title, 'First [[Main Page|text]].', 'first');
    const second = await a.wiki.edit(title, 'Second, longer [[Main Page|text]] of the page.', 'second');
    made = { title: title.replace(/ /g, '_'), first, second };
  });
  after(async () => {
    // A before that failed half way leaves what it started stopped all the same (else the process stays up).
    await stopFront?.();
    await a?.close();
  });

  it('answers page/{title} and /bare with the wiki\'s own bodies, and asks the wiki nothing once stored', async () => {
    for (const title of ['Main_Page', 'Suoku_puslopa', made.title]) {
      for (const form of ['', '/bare']) {
        const ours = await request(`${rest}/page/${encodeURIComponent(title)}${form}`);
        assert.equal(ours.status, 200, ours.text);
        assert.equal(ours.headers['content-type'], 'application/json');
        assert.deepEqual(ours.json, await wikiJson(`/page/${encodeURIComponent(title)}${form}`), `${title}${form}`);
      }
    }
    const readAll = async () => {
      for (const form of ['', '/bare', '/html', '/with_html']) {
        assert.equal((await request(`${rest}/page/${made.title}${form}`)).status, 200);
        assert.equal((await request(`${rest}/revision/${made.first}${form}`)).status, 200);
      }
    };
    await readAll();
    // Renders handed out before their wikitext came are stored in the background: settled first.
    await a.s.app.page.service.drain();
    const asked = a.wikiRequests();
    await readAll();
    assert.equal(a.wikiRequests(), asked, 'stored pages and revisions are served without the wiki');
  });

  it('answers revision/{id} and /bare with the wiki\'s own bodies (page, user, comment, size, delta)', async () => {
    for (const id of [made.first, made.second, 2]) {
      for (const form of ['', '/bare']) {
        const ours = await request(`${rest}/revision/${id}${form}`);
        assert.equal(ours.status, 200, ours.text);
        assert.deepEqual(ours.json, await wikiJson(`/revision/${id}${form}`), `revision ${id}${form}`);
      }
    }
  });

  it('serves HTML as stored: 2.x, an ETag per revision and render, Last-Modified, Content-Language; with_html carries the same HTML', async () => {
    const html = await request(`${rest}/page/${made.title}/html`);
    assert.equal(html.status, 200, html.text);
    assert.match(String(html.headers['content-type']), /^text\/html; charset=utf-8; profile="https:\/\/www\.mediawiki\.org\/wiki\/Specs\/HTML\/2\.\d+\.\d+"$/);
    assert.match(String(html.headers.etag), new RegExp(`^"${made.second}/[0-9a-f-]{36}/view/html"$`));
    assert.ok(html.headers['last-modified'] && html.headers['content-language'] === 'en');
    assert.match(String(html.headers['cache-control']), /max-age/);
    assert.match(html.text, /Second, longer/);
    const both = await request(`${rest}/page/${made.title}/with_html`);
    assert.equal(both.json.html, html.text, 'with_html holds the same HTML');
    assert.equal(both.json.latest.id, made.second);
    const again = await request(`${rest}/page/${made.title}/html`, { headers: { 'if-none-match': String(html.headers.etag) } });
    assert.equal(again.status, 304);
    const old = await request(`${rest}/revision/${made.first}/html`);
    assert.match(old.text, /First/);
    assert.match(String(old.headers.etag), new RegExp(`^"${made.first}/`));
    const fragment = await request(`${rest}/page/${made.title}/html?flavor=fragment`);
    assert.doesNotMatch(fragment.text, /<html|<head|<body/, 'a fragment is the body\'s content');
    assert.match(fragment.text, /Second, longer/);
    const bad = await request(`${rest}/page/${made.title}/html?flavor=nonsense`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.httpCode, 400);
  });

  it("serves a long article's HTML (made 2.x on a worker thread) as its stored HTML and data-mw make it", async () => {
    // The longest corpus article: its 2.x HTML is made off the event loop (model/html-versions.ts).
    const title = 'United_Kingdom';
    const fresh = await request(`${direct}/page/${title}/html`);
    assert.equal(fresh.status, 200, fresh.text.slice(0, 300));
    const v1 = `${a.s.base}/wiki.test/v1/page/${title}`;
    const stored = await request(`${v1}/html`);
    const dataMw = await request(`${v1}/data-mw`);
    assert.ok(stored.text.length + dataMw.text.length >= THREAD_HTML2_BYTES, 'long enough for the thread');
    const expected = toHtml2(stored.text, dataMw.json as { ids?: Record<string, unknown> });
    assert.equal(fresh.text, expected, 'a render just made: from the parts as Parsoid gave them');
    assert.match(fresh.text, /typeof="mw:Transclusion"[^>]* data-mw='/, 'data-mw inline');
    const again = await request(`${direct}/page/${title}/with_html`);
    assert.equal(again.json.html, expected);
  });

  it('redirects another spelling of a title (301) and a wiki redirect (307, unless redirect=no), naming redirect_target', async () => {
    // Spaces for underscores: the spelling MediaWiki's own html_url uses, answered as MediaWiki 1.39 answers it (200).
    const spaced = await request(`${rest}/page/${encodeURIComponent(made.title.replace(/_/g, ' '))}/html`);
    assert.equal(spaced.status, 200);
    assert.equal(spaced.headers.etag, (await request(`${rest}/page/${made.title}/html`)).headers.etag);
    assert.equal((await fetch(`${WIKI_REST}/page/${encodeURIComponent(made.title.replace(/_/g, ' '))}/html`)).status, 200, "the wiki's own answer");
    const spelled = await request(`${rest}/page/${encodeURIComponent(`r${made.title.slice(1)}`)}/html?flavor=edit`);
    assert.equal(spelled.status, 301);
    assert.match(String(spelled.headers.location), new RegExp(`${made.title}/html\\?flavor=edit$`));
    const redirect = await request(`${rest}/page/ASV/html`);
    assert.equal(redirect.status, 307);
    const target = decodeURIComponent(String(redirect.headers.location));
    assert.match(target, /Amerikys_Sa.kierstuos_Va.steibys\/html$/);
    const itself = await request(`${rest}/page/ASV/with_html?redirect=no`);
    assert.equal(itself.status, 200);
    assert.match(String(itself.json.redirect_target), /\/rest\.php\/v1\/page\/Amerikys_Sa.*\/with_html$/);
    assert.equal((await request(`${rest}/page/ASV/bare`)).status, 200, 'metadata is not redirected');
  });

  it('answers missing pages and revisions (404) and malformed ids (400) in MediaWiki\'s error shape; x-restbase-compat adds RESTBase\'s fields', async () => {
    const missing = await request(`${rest}/page/No_such_page_${RUN}/html`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-type'], 'application/json');
    assert.equal(missing.json.httpCode, 404);
    assert.equal(missing.json.httpReason, 'Not Found');
    assert.equal(missing.json.errorKey, 'rest-nonexistent-title');
    assert.match(missing.json.messageTranslations.en, /does not exist/);
    // Under another spelling too: not a 301 to a title that is not there (MediaWiki 1.43 looks the page up first).
    const misspelled = await request(`${rest}/page/no_such_page_${RUN}/bare`);
    assert.equal(misspelled.status, 404);
    assert.equal(misspelled.headers.location, undefined);
    assert.equal(misspelled.json.errorKey, 'rest-nonexistent-title');
    const revision = await request(`${rest}/revision/999999999/bare`);
    assert.equal(revision.status, 404);
    assert.equal(revision.json.errorKey, 'rest-nonexistent-revision');
    const malformed = await request(`${rest}/revision/abc`);
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.name, 'id');
    // Ids past a safe integer, as MediaWiki reads them: an integer no revision has, or (past PHP's largest) no integer.
    for (const id of ['9007199254740993', '9223372036854775807']) {
      const huge = await request(`${rest}/revision/${id}/bare`);
      assert.equal(huge.status, 404, id);
      assert.equal(huge.json.errorKey, 'rest-nonexistent-revision', id);
    }
    // A negative id or zero is an integer no revision has; a signed or padded id is the integer it spells.
    for (const id of ['-1', '0', '-0']) {
      const none = await request(`${rest}/revision/${id}/bare`);
      assert.equal(none.status, 404, id);
      assert.equal(none.json.errorKey, 'rest-nonexistent-revision', id);
    }
    assert.equal((await request(`${rest}/revision/+${made.first}/bare`)).json.id, made.first);
    assert.equal((await request(`${rest}/revision/00${made.first}/bare`)).json.id, made.first);
    // An invalid title is looked up as any other and names no page (MediaWiki: 404, not 400).
    for (const title of ['Talk:', '%5BBad%5D']) {
      const invalid = await request(`${rest}/page/${title}/bare`);
      assert.equal(invalid.status, 404, title);
      assert.equal(invalid.json.errorKey, 'rest-nonexistent-title', title);
    }
    const tooLarge = await request(`${rest}/revision/9223372036854775808/bare`);
    assert.equal(tooLarge.status, 400);
    assert.equal(tooLarge.json.errorKey, 'paramvalidator-badinteger');
    const transform = await request(`${rest}/transform/html/to/wikitext/Anything/9007199254740993`, { method: 'POST', body: { html: '<p>x</p>' } });
    assert.equal(transform.status, 400);
    assert.equal(transform.json.errorKey, 'invalid-revision');
    // An original whose parts are neither objects nor strings: refused here, not passed to Parsoid to ignore.
    for (const original of [{ html: 5 }, { html: { body: '<p>x</p>' }, 'data-parsoid': [1] }, '{"data-mw": true}']) {
      const bad = await request(`${rest}/transform/html/to/wikitext`, { method: 'POST', body: { html: '<p>x</p>', original } });
      assert.equal(bad.status, 400, JSON.stringify(original));
      assert.equal(bad.json.errorKey, 'invalid-original');
    }
    const compat = await request(`${rest}/page/No_such_page_${RUN}`, { headers: { 'x-restbase-compat': 'true' } });
    assert.equal(compat.status, 404);
    assert.equal(compat.json.type, 'MediaWikiError/Not_Found');
    assert.equal(compat.json.title, 'rest-nonexistent-title');
    assert.equal(compat.json.method, 'get');
    assert.match(compat.json.detail, /does not exist/);
    assert.equal(compat.json.httpCode, 404);
  });


  it("answers an empty parameter, a title's bytes that are not UTF-8 and a path no handler takes as the wiki's own rest.php does", async () => {
    const cases: { method?: string; path: string; status: number; key?: string }[] = [
      { path: '/page//bare', status: 400, key: 'paramvalidator-missingparam' },
      { path: '/page//html', status: 400, key: 'paramvalidator-missingparam' },
      { path: '/revision//bare', status: 400, key: 'paramvalidator-badinteger' },
      // Bytes that are not UTF-8 read as U+FFFD: a title no page has.
      { path: '/page/%FF/bare', status: 404, key: 'rest-nonexistent-title' },
      { path: `/page/${made.title}%FF/with_html`, status: 404, key: 'rest-nonexistent-title' },
      // (Transforms with a trailing slash are compared with the wiki's transform handlers below.)
    ];
    for (const { method = 'GET', path, status, key } of cases) {
      const init = method === 'POST' ? { method, headers: { 'content-type': 'application/json' }, body: '{"wikitext":"x","html":"<p>x</p>"}' } : { method };
      const wikis = await fetch(`${WIKI_REST}${path}`, init);
      const wikiBody = (await wikis.json()) as { messageTranslations: { en: string }; name?: string; failureCode?: string };
      const ours = await request(`${rest}${path}`, method === 'POST' ? { method, body: { wikitext: 'x', html: '<p>x</p>' } } : { method });
      assert.equal(wikis.status, status, `the wiki's own answer to ${method} ${path}`);
      assert.equal(ours.status, status, `${method} ${path}: ${ours.text}`);
      assert.equal(ours.json.errorKey, key, path);
      assert.equal(ours.json.name, wikiBody.name, path);
      assert.equal(ours.json.failureCode, wikiBody.failureCode, path);
      if (status === 400 || key === 'rest-no-match') assert.equal(ours.json.messageTranslations.en, wikiBody.messageTranslations.en, path);
    }
    // Outside the proxy rule's prefixes too, where a client reaches the service itself.
    const elsewhere = await request(`${direct}/no-such-route`);
    assert.equal(elsewhere.status, 404);
    assert.equal(elsewhere.json.errorKey, 'rest-no-match');
    assert.equal(elsewhere.json.messageTranslations.en, 'The requested relative path (/v1/no-such-route) did not match any known handler');
  });
  it("answers conditional GETs as the wiki's own rest.php does: 304 for a matching If-None-Match or If-Modified-Since, 412 for a failed If-Match or If-Unmodified-Since", async () => {
    for (const form of ['', '/bare', '/html', '/with_html']) {
      const path = `/page/${made.title}${form}`;
      // Each against its own validators: the service's ETag names its render, the wiki's its own.
      for (const [base, get] of [[rest, (url: string, headers: Record<string, string>) => request(url, { headers })], [WIKI_REST, (url: string, headers: Record<string, string>) => fetch(url, { headers })]] as const) {
        const first = await get(`${base}${path}`, {});
        const header = (name: string) => String(first.headers instanceof Headers ? first.headers.get(name) : first.headers[name]);
        const [etag, lastModified] = [header('etag'), header('last-modified')];
        const cases: [Record<string, string>, number][] = [
          [{ 'if-none-match': etag }, 304], [{ 'if-modified-since': lastModified }, 304],
          [{ 'if-match': '"not-this-one"' }, 412], [{ 'if-unmodified-since': 'Mon, 01 Jan 2001 00:00:00 GMT' }, 412],
          [{ 'if-match': etag }, 200], [{ 'if-unmodified-since': lastModified }, 200],
        ];
        for (const [headers, status] of cases) assert.equal((await get(`${base}${path}`, headers)).status, status, `${base}${path} ${JSON.stringify(headers)}`);
      }
    }
  });

  it('answers OPTIONS as the wiki does (204, with or without an Origin), a CORS preflight on every path', async () => {
    for (const headers of [{}, { origin: 'https://elsewhere.example', 'access-control-request-method': 'GET' }] as Record<string, string>[]) {
      for (const path of [`/page/${made.title}/html`, '/revision/1/bare', '/transform/wikitext/to/html']) {
        const wikis = await fetch(`${WIKI_REST}${path}`, { method: 'OPTIONS', headers });
        const ours = await request(`${rest}${path}`, { method: 'OPTIONS', headers });
        assert.equal(ours.status, 204, `${path} ${JSON.stringify(headers)}: ${ours.text}`);
        assert.equal(ours.status, wikis.status, `the wiki's own answer to ${path}`);
        assert.match(String(ours.headers['access-control-allow-methods']), /GET/);
      }
    }
  });

  it("lints wikitext, or a page's or revision's, as the wiki's Parsoid does (a route MediaWiki 1.39's rest.php/v1 lacks)", async () => {
    const parsoid = `${WIKI_URL}/rest.php/127.0.0.1/v3/transform/wikitext/to/lint`;
    const lintOf = async (url: string, body: string, type = 'application/json') => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body });
      return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as any };
    };
    const wikitext = "<b>never closed\n\n<center>old</center>\n\n[[Main Page|link]]";
    const theirs = await lintOf(parsoid, JSON.stringify({ wikitext }));
    assert.equal(theirs.status, 200);
    assert.deepEqual(theirs.json.map((l: { type: string }) => l.type).sort(), ['missing-end-tag', 'obsolete-tag'], "the wiki's Parsoid lints");
    const ours = await lintOf(`${rest}/transform/wikitext/to/lint`, JSON.stringify({ wikitext }));
    assert.equal(ours.status, 200);
    assert.match(String(ours.type), /^application\/json/);
    assert.deepEqual(ours.json, theirs.json);
    // A form body, and a page's title in the path, as MediaWiki takes them.
    const form = await lintOf(`${rest}/transform/wikitext/to/lint/${encodeURIComponent(made.title.replace(/ /g, '_'))}`, new URLSearchParams({ wikitext }).toString(), 'application/x-www-form-urlencoded');
    assert.deepEqual(form.json, theirs.json);
    // No wikitext: the revision's own, or the page's latest.
    const key = made.title.replace(/ /g, '_');
    const linted = await a.wiki.edit(`${made.title} lint`, '<span>open\n\nfine text');
    const revision = await lintOf(`${rest}/transform/wikitext/to/lint/${encodeURIComponent(`${key}_lint`)}/${linted}`, '{}');
    assert.equal(revision.status, 200);
    assert.ok(revision.json.length >= 1, 'the revision has lint');
    assert.deepEqual(revision.json, (await lintOf(`${parsoid}/${encodeURIComponent(`${key}_lint`)}/${linted}`, '{}')).json);
    assert.deepEqual((await lintOf(`${rest}/transform/wikitext/to/lint/${encodeURIComponent(`${key}_lint`)}`, '{}')).json, revision.json);
    assert.deepEqual((await lintOf(`${rest}/transform/wikitext/to/lint/${encodeURIComponent(key)}/${made.second}`, '{}')).json, []);
    // Refused as MediaWiki refuses: no page, a revision of another page, nothing to lint.
    assert.equal((await lintOf(`${rest}/transform/wikitext/to/lint/No_such_page_${RUN}`, '{}')).status, 404);
    assert.equal((await lintOf(`${rest}/transform/wikitext/to/lint/${encodeURIComponent(key)}/${linted}`, '{}')).status, 400);
    assert.equal((await lintOf(`${rest}/transform/wikitext/to/lint`, '{}')).status, 400);
    assert.equal((await lintOf(`${rest}/transform/wikitext/to/lint`, '{"wikitext": 5}')).status, 400);
  });

  it('passes every other route under page/, revision/ and transform/ to the wiki unchanged', async () => {
    const ours = await fetch(`${rest}/page/Main_Page/history`);
    const theirs = await fetch(`${WIKI_REST}/page/Main_Page/history`);
    assert.equal(ours.status, theirs.status);
    assert.equal(ours.headers.get('etag'), theirs.headers.get('etag'));
    assert.deepEqual(Buffer.from(await ours.arrayBuffer()), Buffer.from(await theirs.arrayBuffer()), 'byte for byte');
    // A transform MediaWiki does not offer: its transform handlers' own 404 (1.39 has them under coredev/v0).
    const body = JSON.stringify({ html: '<p>pass</p>' });
    const post = (base: string) => fetch(`${base}/transform/html/to/html`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const [mine, wiki] = await Promise.all([post(rest), post(`${WIKI_URL}/rest.php/coredev/v0`)]);
    assert.equal(mine.status, wiki.status);
    assert.equal(await mine.text(), await wiki.text());
    const count = await fetch(`${rest}/page/Main_Page/history/counts/edits`);
    assert.equal(count.status, 200);
    // A path with its parameter left out is the wiki's to refuse; and no path lists what is below
    // it (RESTBase's listings are not MediaWiki's).
    for (const path of ['/page/', '/revision/']) {
      const [ours, theirs] = await Promise.all([fetch(`${rest}${path}`), fetch(`${WIKI_REST}${path}`)]);
      assert.equal(ours.status, theirs.status, path);
      assert.equal(await ours.text(), await theirs.text(), path);
    }
    const root = await request(`${direct}/`);
    assert.equal(root.status, 404);
    assert.equal(root.json.items, undefined);
    // Sent as written (a URL object would resolve the dot segments before they left), to the
    // service itself (nginx resolves them before any rule).
    const raw = (path: string) => new Promise<number>((resolve, reject) => {
      const base = new URL(direct);
      http.get({ host: base.hostname, port: base.port, path: `${base.pathname}${path}` }, (res) => resolve(res.resume().statusCode!)).on('error', reject);
    });
    for (const escape of ['/page/x/../../../index.php', '/page/x/%2e%2e/%2E%2E/%2e%2e/index.php']) {
      assert.equal(await raw(escape), 400, `${escape} stays inside rest.php`);
    }
  });

  it("never passes on a path that leaves page/, revision/ or transform/ once decoded, by any method, directly or behind nginx", async () => {
    const raw = (base: string, method: string, path: string) => new Promise<{ status: number; body: string; ours: boolean }>((resolve, reject) => {
      const url = new URL(base);
      const req = http.request({ host: url.hostname, port: url.port, path: `${url.pathname}${path}`, method }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body, ours: /^[0-9a-f-]{36}$/.test(String(res.headers['x-request-id'])) }));
      });
      req.on('error', reject);
      req.end(method === 'GET' || method === 'DELETE' ? undefined : '{}');
    });
    const query = '?action=query&meta=userinfo&format=json';
    const escapes = [
      '/page/%2F/..%2F..%2F..%2Fapi.php', '/revision//..%2F..%2F..%2Fapi.php', '/transform/%2e%2e%2F%2e%2e%2F..%2Fapi.php',
      '/page/x%5C..%5C..%5C..%5Capi.php', '/page/%252e%252e%252f%252e%252e%252f..%252fapi.php', '/page/%c0%ae%c0%ae%2F%c0%ae%c0%ae%2Fapi.php',
      '/page/x/history/%2F..%2F..%2F..%2F..%2Fapi.php',
    ];
    for (const path of escapes) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH']) {
        const mine = await raw(direct, method, `${path}${query}`);
        // Refused, or (one segment: a title) answered by the service itself as the title it is.
        assert.ok(mine.status >= 400 && mine.status < 500, `${method} ${path}: ${mine.status} ${mine.body}`);
        assert.doesNotMatch(mine.body, /userinfo/, `${method} ${path} never reached api.php`);
        assert.equal(typeof JSON.parse(mine.body).errorKey, 'string', `${method} ${path}: in MediaWiki's error shape`);
      }
      // Behind nginx such a path never matches the documented rule (docs/rest-php.md) (nginx matches the decoded path):
      // whatever answers it, the service did not pass it on.
      const fronted = await raw(rest, 'GET', `${path}${query}`);
      assert.ok(!fronted.ours || (fronted.status >= 400 && fronted.status < 500 && !/userinfo/.test(fronted.body)), `${path} behind nginx: ${fronted.status}`);
    }
  });

  it('credits an anonymous edit to the address that connected, not to one a client names, directly and behind nginx', async () => {
    const json = { 'content-type': 'application/json', 'x-forwarded-for': '10.9.9.9', 'x-real-ip': '10.9.9.8', forwarded: 'for=10.9.9.7' };
    for (const [how, base] of [['directly', direct], ['behind nginx', rest]] as const) {
      const title = `Rest php address ${how} ${RUN}`;
      const created = await request(`${base}/page`, { method: 'POST', headers: json, body: { title, source: 'Whose edit?', comment: 'address', token: '+\\' }, from: '127.0.0.5' });
      assert.equal(created.status, 201, created.text);
      const revision = await wikiJson(`/revision/${created.json.latest.id}/bare`) as { user: { name: string } };
      assert.equal(revision.user.name, '127.0.0.5', `${how}: the connecting address, not the one claimed`);
    }
  });

  it("answers an edit the wiki refuses for its content with the wiki's code as a 4xx, not a 502 (a module that does not compile)", async () => {
    const res = await request(`${a.v1}/page/${encodeURIComponent(`Module:Broken ${RUN}`)}`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: 'return {' },
    });
    assert.equal(res.status, 422, res.text);
    assert.match(String(res.json.wiki_code), /scribunto/);
  });

  it('serves old revisions from their stored render, gzipped as stored', async () => {
    const res = await fetch(`${rest}/revision/${made.first}/html`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    const raw = Buffer.from(await res.arrayBuffer());
    // fetch decodes: what arrives is HTML either way; the stored bytes are what was sent.
    assert.match((raw[0] === 0x1f ? gunzipSync(raw) : raw).toString('utf8'), /First/);
  });

  it('saves through the service: PUT page/{title} on the latest revision (200, the new revision served at once), a stale base (409), a write without its token (400) or with a wrong one (403); POST page creates (201)', async () => {
    const title = `Rest php save ${RUN}`;
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    const json = { 'content-type': 'application/json' };
    const created = await request(`${rest}/page`, { method: 'POST', headers: json, body: { title, source: 'Created through the service.', comment: 'create', token: '+\\' } });
    assert.equal(created.status, 201, created.text);
    // Absolute, the wiki's own URL of the page, as MediaWiki gives it.
    assert.equal(created.headers.location, `${WIKI_URL}/rest.php/v1/page/${key}`);
    // Spelt as MediaWiki spells it there (`+` and `/` escaped, `@`, `:` and `,` not), and followed as it is.
    const special = await request(`${rest}/page`, { method: 'POST', headers: json, body: { title: `Rest php A+B:C@D,E/F ${RUN}`, source: 'Special.', comment: 'create', token: '+\\' } });
    assert.equal(special.status, 201, special.text);
    assert.equal(special.headers.location, `${WIKI_URL}/rest.php/v1/page/Rest_php_A%2BB:C@D,E%2FF_${RUN}`);
    assert.equal((await request(String(special.headers.location))).json.source, 'Special.');
    assert.equal(created.json.source, 'Created through the service.');
    const base = created.json.latest.id;
    const updated = await request(`${rest}/page/${key}`, { method: 'PUT', headers: json, body: { source: 'Updated through the service.', comment: 'update', latest: { id: base }, token: '+\\' } });
    assert.equal(updated.status, 200, updated.text);
    assert.ok(updated.json.latest.id > base);
    assert.equal(updated.json.source, 'Updated through the service.');
    const html = await request(`${rest}/page/${key}/html`);
    assert.match(html.text, /Updated through the service/);
    assert.match(String(html.headers.etag), new RegExp(`^"${updated.json.latest.id}/`));
    const stale = await request(`${rest}/page/${key}`, { method: 'PUT', headers: json, body: { source: 'Another text entirely.', comment: 'stale', latest: { id: base }, token: '+\\' } });
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.json.httpCode, 409);
    // As MediaWiki checks a write's token (the wiki's own rest.php answers these the same), before
    // anything about the page: missing, the action API's missingparam; an anonymous caller's can
    // only be the logged-out token.
    const latest = { id: updated.json.latest.id };
    const cookie = await request(`${rest}/page/${key}`, { method: 'PUT', headers: { ...json, cookie: a.wiki.cookieHeader() }, body: { source: 'With a cookie.', comment: 'cookie', latest } });
    assert.equal(cookie.status, 400, cookie.text);
    assert.equal(cookie.json.actionModuleErrorCode, 'missingparam');
    const anonymous = await request(`${rest}/page/${key}`, { method: 'PUT', headers: json, body: { source: 'Without a token.', comment: 'anonymous', latest } });
    assert.equal(anonymous.status, 400, anonymous.text);
    assert.deepEqual(anonymous.json.messageTranslations, { en: 'The "token" parameter must be set.' });
    const wikis = await request(`${WIKI_URL}/rest.php/v1/page/${key}`, { method: 'PUT', headers: json, body: { source: 'Without a token.', comment: 'anonymous', latest } });
    assert.equal(wikis.status, anonymous.status, `the wiki's own answer: ${wikis.text}`);
    const creation = await request(`${rest}/page`, { method: 'POST', headers: json, body: { title: `${title} untokened`, source: 'x', comment: 'anonymous' } });
    assert.equal(creation.status, 400, creation.text);
    assert.equal((await request(`${rest}/page/${key}_untokened/bare`)).status, 404, 'no page created');
    // A wrong token is refused before the missing base would be (409).
    const wrong = await request(`${rest}/page/${key}`, { method: 'PUT', headers: json, body: { source: 'A wrong token.', comment: 'anonymous', token: 'abc+\\' } });
    assert.equal(wrong.status, 403, wrong.text);
    assert.equal(wrong.json.wiki_code, 'badtoken');
    assert.equal((await request(`${rest}/page/${key}/bare`)).json.latest.id, updated.json.latest.id, 'nothing saved');
  });

  it('merges a save on a stale latest.id with the edits made since, as MediaWiki does (200); where they overlap, 409', async () => {
    const title = `Rest php merge ${RUN}`;
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    const json = { 'content-type': 'application/json' };
    const base = await a.wiki.edit(title, 'first line\nlorem ipsum\nsecond line');
    const theirs = await a.wiki.edit(title, 'FIRST LINE\nlorem ipsum\nsecond line');
    const merged = await request(`${rest}/page/${key}`, { method: 'PUT', headers: json, body: { source: 'first line\nlorem ipsum\nSECOND LINE', comment: 'merge', latest: { id: base }, token: '+\\' } });
    assert.equal(merged.status, 200, merged.text);
    assert.ok(merged.json.latest.id > theirs);
    assert.equal(merged.json.source, 'FIRST LINE\nlorem ipsum\nSECOND LINE', 'both edits, merged by the wiki');
    const html = await request(`${rest}/page/${key}/html`);
    assert.match(String(html.headers.etag), new RegExp(`^"${merged.json.latest.id}/`));
    assert.match(html.text, /FIRST LINE[^]*SECOND LINE/);
    const overlapping = await request(`${rest}/page/${key}`, { method: 'PUT', headers: json, body: { source: 'FIRST LINE\nlorem ipsum\nanother line', comment: 'overlap', latest: { id: theirs }, token: '+\\' } });
    assert.equal(overlapping.status, 409, overlapping.text);
    assert.equal((await request(`${rest}/page/${key}/bare`)).json.latest.id, merged.json.latest.id, 'nothing saved');
  });

  it("counts stashes against the wiki's own stashbasehtml limit for the caller, answering as the wiki does past it", async () => {
    // Reviewer's bot password has no noratelimit and the test wiki limits users to 5 stashes a
    // minute (scripts/wiki.sh); anonymous callers (noratelimit there) and the bot are not limited.
    const { WikiAdmin } = await import('../wiki.js');
    const reviewer = await new WikiAdmin().login('Reviewer');
    const session = { cookie: reviewer.cookieHeader() };
    const title = `Rest php stash limit ${RUN}`;
    await a.wiki.edit(title, 'Stashed often.');
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    const sequence = async (base: string, headers: Record<string, string>) => {
      const answers = [];
      for (let i = 0; i < 7; i++) answers.push(await request(`${base}/page/${key}/html?stash=true`, { headers }));
      return answers;
    };
    const ours = await sequence(rest, session);
    // What the wiki answers the same caller (its count is its own; a run within the minute before may have spent it).
    const wiki = await sequence(WIKI_REST, session);
    assert.ok(wiki.slice(0, 5).every((r) => r.status === 200 || r.status === 429) && wiki.slice(5).every((r) => r.status === 429), wiki.map((r) => r.status).join(' '));
    assert.deepEqual(ours.map((r) => r.status), [200, 200, 200, 200, 200, 429, 429], 'five a minute, as the wiki counts them');
    const { errorKey: _added, ...refusal } = ours[5]!.json;
    assert.deepEqual(refusal, wiki[6]!.json, "the wiki's body (its 1.39 fields; errorKey is current MediaWiki's)");
    assert.equal(ours[5]!.json.errorKey, 'parsoid-stash-rate-limit-error');
    // A stashing transform counts too; plain HTML and anonymous stashes do not.
    const transform = await request(`${rest}/transform/wikitext/to/html/${key}`, { method: 'POST', headers: { ...session, 'content-type': 'application/json' }, body: { wikitext: 'x', stash: true } });
    assert.equal(transform.status, 429, transform.text);
    assert.equal((await request(`${rest}/page/${key}/html`, { headers: session })).status, 200);
    assert.deepEqual((await sequence(rest, {})).map((r) => r.status), Array(7).fill(200));
  });

  it('transforms edited HTML back selectively from the render its ETag names (flavor=stash)', async () => {
    const title = `Rest php selser ${RUN}`;
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    const wikitext = 'Para one with [[Main Page|a link]] and text.\n\n*item  one\n*item two\n\nPara three  here.';
    const rev = await a.wiki.edit(title, wikitext);
    const html = await request(`${rest}/page/${key}/html?flavor=stash`);
    assert.equal(html.status, 200, html.text);
    assert.match(String(html.headers.etag), new RegExp(`^"${rev}/[0-9a-f-]{36}/stash/html"$`));
    const edited = html.text.replace('and text.', 'and more text.');
    const back = (ifMatch?: string) => request(`${rest}/transform/html/to/wikitext/${key}/${rev}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(ifMatch ? { 'if-match': ifMatch } : {}) }, body: { html: edited },
    });
    const exact = await back(String(html.headers.etag));
    assert.equal(exact.status, 200, exact.text);
    assert.equal(exact.text, wikitext.replace('and text.', 'and more text.'), 'only the edit changed');
    const toHtml = await request(`${rest}/transform/wikitext/to/html/${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: "''x''" } });
    assert.equal(toHtml.status, 200, toHtml.text);
    assert.match(toHtml.text, /<i[ >]/);
  });

  it("answers every transform form as the wiki's own transform handlers do (rest.php/coredev/v0), with and without the trailing slash MediaWiki's clients send", async () => {
    const json = (o: unknown) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(o) as string | FormData });
    const form = (o: Record<string, string>) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(o).toString() as string | FormData });
    const multipart = (o: Record<string, string>) => {
      const data = new FormData();
      for (const [k, v] of Object.entries(o)) data.append(k, v);
      return { headers: {}, body: data as string | FormData };
    };
    const profile = (v: string) => `text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/${v}"`;
    // Parsoid's limits on this wiki (its defaults: 2 MiB of wikitext, 10,000,000 characters of
    // HTML), just under and just over: the wiki's own, whatever they are, since Parsoid applies them.
    const comment = (bytes: number) => `<!--${'a'.repeat(bytes - 7)}-->`;
    const paragraph = (chars: number) => `<p>${'a'.repeat(chars - 7)}</p>`;
    const cases: [string, string, { headers: Record<string, string>; body: string | FormData }, string?][] = [
      ['form', 'wikitext/to/html', form({ wikitext: "''hi''" })],
      ['JSON', 'wikitext/to/html', json({ wikitext: "''hi''" })],
      ['{body}', 'wikitext/to/html', json({ wikitext: { body: "''hi''" } })],
      ['{headers, body}', 'wikitext/to/html', json({ wikitext: { headers: { 'content-type': 'text/plain' }, body: "''hi''" } })],
      ['body_only true', 'wikitext/to/html', json({ wikitext: "''hi''", body_only: true })],
      ['body_only 1 (form)', 'wikitext/to/html', form({ wikitext: "''hi''", body_only: '1' })],
      ['contentmodel json', 'wikitext/to/html', json({ wikitext: '{"a":1}', contentmodel: 'json' })],
      ['original.wikitext', 'wikitext/to/html', json({ original: { wikitext: { body: "''orig''" } } })],
      ['multipart', 'wikitext/to/html', multipart({ wikitext: "''hi''" })],
      ['no wikitext', 'wikitext/to/html', json({})],
      ['no wikitext (an empty form)', 'wikitext/to/html', form({})],
      ['Accept 2.6.0', 'wikitext/to/html', json({ wikitext: 'x' }), profile('2.6.0')],
      ['Accept 3.0.0', 'wikitext/to/html', json({ wikitext: 'x' }), profile('3.0.0')],
      ['Accept another profile', 'wikitext/to/html', json({ wikitext: 'x' }), 'text/html; profile="https://example.org/x"'],
      ['Accept JSON', 'wikitext/to/html', json({ wikitext: 'x' }), 'application/json'],
      ['wikitext at the limit', 'wikitext/to/html', json({ wikitext: comment(2 * 1024 * 1024) })],
      ['wikitext over the limit', 'wikitext/to/html', json({ wikitext: comment(2 * 1024 * 1024 + 1) })],
      ['html form', 'html/to/wikitext', form({ html: '<p><i>hi</i></p>' })],
      ['html JSON', 'html/to/wikitext', json({ html: '<p><i>hi</i></p>' })],
      ['html {body, headers}', 'html/to/wikitext', json({ html: { headers: { 'content-type': profile('2.6.0') }, body: '<p><i>hi</i></p>' } })],
      ['html original.title', 'html/to/wikitext', json({ html: '<p><i>hi</i></p>', original: { title: 'Main Page' } })],
      ['html original.revid', 'html/to/wikitext', json({ html: '<p><i>hi</i></p>', original: { revid: 1 } })],
      ['html multipart', 'html/to/wikitext', multipart({ html: '<p><i>hi</i></p>' })],
      ['no html', 'html/to/wikitext', json({})],
      ['no html (an empty form)', 'html/to/wikitext', form({})],
      ['html at the limit', 'html/to/wikitext', json({ html: paragraph(10_000_000) })],
      ['html over the limit', 'html/to/wikitext', json({ html: paragraph(10_000_001) })],
      ['lint', 'wikitext/to/lint', json({ wikitext: '<span>x' })],
      ['to pagebundle (disabled)', 'wikitext/to/pagebundle', json({ wikitext: 'x' })],
      ['from pagebundle (disabled)', 'pagebundle/to/wikitext', json({ html: '<p>x</p>' })],
    ];
    const coredev = `${WIKI_URL}/rest.php/coredev/v0`;
    const answered = async (base: string, path: string, c: { headers: Record<string, string>; body: string | FormData }, accept?: string) => {
      const res = await fetch(`${base}/transform/${path}`, { method: 'POST', headers: { ...c.headers, ...(accept ? { accept } : {}) }, body: c.body });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    // An empty title or revision segment is none, as MediaWiki's router takes it.
    for (const [path, body] of [['html/to/wikitext/Main_Page/', json({ html: '<p>x</p>' })], ['html/to/wikitext//1', json({ html: '<p>x</p>' })], ['wikitext/to/html/Main_Page/', json({ wikitext: 'x' })]] as const) {
      const [theirs, ours] = [await answered(coredev, path, body), await answered(rest, path, body)];
      assert.equal(ours.status, theirs.status, `${path}: ${ours.text.slice(0, 200)}`);
      assert.equal(ours.text, theirs.text, path);
    }
    for (const [name, path, body, accept] of cases) {
      for (const slash of ['', '/']) {
        const what = `${name}${slash ? ' (trailing slash)' : ''}`;
        const theirs = await answered(coredev, `${path}${slash}`, body, accept);
        const ours = await answered(rest, `${path}${slash}`, body, accept);
        assert.equal(ours.status, theirs.status, `${what}: ${ours.text.slice(0, 300)}`);
        assert.equal(ours.type, theirs.type, what);
        if (theirs.status === 200) {
          assert.equal(ours.text, theirs.text, `${what}: the same document`);
          continue;
        }
        // An error: the wiki's body, word for word (current MediaWiki's errorKey and
        // messageTranslations may stand beside it, except for a transform it does not offer).
        const [mine, wikis] = [JSON.parse(ours.text), JSON.parse(theirs.text)];
        if (path.includes('pagebundle')) assert.deepEqual(mine, wikis, what);
        else for (const key of Object.keys(wikis)) assert.deepEqual(mine[key], wikis[key], `${what}: ${key}`);
      }
    }
  });

  it("renders wikitext in current MediaWiki's request forms: a page's or revision's own, the original's, {body}, body_only 1, contentmodel json (and back); Accept negotiated", async () => {
    const title = `Rest php wt2html ${RUN}`;
    const key = encodeURIComponent(title.replace(/ /g, '_'));
    const first = await a.wiki.edit(title, '{|\n|first table\n|}');
    await a.wiki.edit(title, "''latest text''");
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      request(`${rest}/transform/wikitext/to/html${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const latest = await post(`/${key}`, {});
    assert.equal(latest.status, 200, latest.text);
    assert.match(latest.text, /<i[^>]*>latest text<\/i>/, "the page's latest revision, given no wikitext");
    const old = await post(`/${key}/${first}`, {});
    assert.match(old.text, /first table/, "the revision's own wikitext");
    const missing = await post(`/No_such_page_${RUN}`, {});
    assert.equal(missing.status, 404, missing.text);
    assert.equal((await post('', {})).status, 400, 'neither a title nor wikitext');
    const fromOriginal = await post('/Main_Page/1', { original: { wikitext: { headers: { 'content-type': 'text/plain' }, body: '== From the original ==' } } });
    assert.match(fromOriginal.text, /<h2[^>]*>From the original<\/h2>/);
    const asBody = await post('/Main_Page', { wikitext: { body: '== As body ==' } });
    assert.match(asBody.text, /<h2[^>]*>As body<\/h2>/);
    const bodyOnly = await post('/Main_Page', { wikitext: "''bare''", body_only: 1 });
    assert.equal(bodyOnly.status, 200, bodyOnly.text);
    assert.doesNotMatch(bodyOnly.text, /<body/);
    assert.match(bodyOnly.text, /<p/);
    const json = await post('/Main_Page', { wikitext: '{"a":4,"b":3}', contentmodel: 'json' });
    assert.match(json.text, /<body[^>]*><table/, "Parsoid's JSON table, not wikitext");
    const jsonBack = await request(`${rest}/transform/html/to/wikitext/Main_Page`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { html: json.text, contentmodel: 'json' } });
    assert.equal(jsonBack.status, 200, jsonBack.text);
    assert.equal(jsonBack.headers['content-type'], 'application/json');
    assert.equal(jsonBack.text, '{"a":4,"b":3}', 'the table back as JSON');
    for (const accept of ['*/*', 'text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.0.0"']) {
      const ok = await post('/Main_Page', { wikitext: 'x' }, { accept });
      assert.equal(ok.status, 200, accept);
      assert.match(String(ok.headers['content-type']), /^text\/html; charset=utf-8; profile="https:\/\/www\.mediawiki\.org\/wiki\/Specs\/HTML\/2\.\d+\.\d+"$/);
    }
    for (const accept of ['text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/0.0.0"', 'text/html; profile="something different"']) {
      const refused = await post('/Main_Page', { wikitext: 'x' }, { accept });
      assert.equal(refused.status, 406, accept);
      assert.equal(refused.json.message, 'Not acceptable');
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { admin, BACKENDS, cassandraConfig, mariadbConfig, postgresConfig, request, sleep, sqliteConfig, located } from '../helpers.js';
import { etagOf, startAgainstWiki, type AgainstWiki, type SwitchableProxy, type WikiAdmin } from '../wiki.js';

const RUN_BASE = Date.now().toString(36);
const noCache = { ...admin, 'cache-control': 'no-cache' };

/**
 * Integration tests of the public page API against the real MediaWiki with Parsoid, through
 * Parsoid's own routes (v3) and through MediaWiki's core REST API, as Wikimedia's wikis are, on
 * each storage backend.
 */
const RUNS = [
  { mode: 'v3', backend: 'sqlite', storage: sqliteConfig },
  { mode: 'core', backend: 'postgres', storage: postgresConfig },
  { mode: 'core', backend: 'mariadb', storage: mariadbConfig },
  { mode: 'v3', backend: 'cassandra', storage: cassandraConfig },
] as const;
for (const { mode, backend, storage } of RUNS.filter((run) => BACKENDS.some((b) => b.name === run.backend))) describe(`page content API against the real wiki (${mode}, ${backend})`, () => {
  // Each run edits, moves and deletes pages of its own.
  const RUN = `${RUN_BASE}${mode}${backend}`;
  let env: AgainstWiki;
  let proxy: SwitchableProxy;
  let wiki: WikiAdmin;
  let v1: string;

  before(async () => {
    // Core mode is also asked as Wikimedia's wikis are: with maxlag.
    env = await startAgainstWiki({ storage: storage() }, mode === 'core' ? { parsoid: mode, maxlag: 5 } : { parsoid: mode });
    ({ proxy, wiki, v1 } = env);
  });
  after(() => env.close());

  const get = (path: string, headers: Record<string, string> = {}) => request(`${v1}${path}`, { headers });
  const count = (endpoint: string) => env.wikiRequests(endpoint);
  /** Whether the page listing names a title (all pages of it). */
  const listed = async (title: string) => {
    let next: string | undefined;
    do {
      const page = await get(`/page/${next ? `?next=${encodeURIComponent(next)}` : ''}`);
      if (page.json.items.some((p: { title: string }) => p.title === title)) return true;
      next = page.json.next;
    } while (next);
    return false;
  };

  it('serves 2.x HTML (data-mw inline) for a 2.x profile or ?data-mw=inline, 999.x by default, 406 for other versions', async () => {
    const stored = await get('/page/Bodmin/html');
    assert.match(String(stored.headers['content-type']), /HTML\/999\.0\.0/);
    assert.doesNotMatch(stored.text, / data-mw=/);
    for (const [what, res] of [
      ['profile', await get('/page/Bodmin/html', { accept: 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.4.0"' })],
      ['query', await get('/page/Bodmin/html?data-mw=inline')],
    ] as const) {
      assert.equal(res.status, 200, what);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.6.0"', what);
      assert.match(res.text, / data-mw='\{"parts"/, what);
      assert.equal(res.headers.etag, stored.headers.etag, `${what}: the same render`);
      assert.match(String(res.headers.vary), /accept/i, what);
    }
    const dataMw = JSON.parse((await get(`/page/Bodmin/data-mw/${etagOf(stored).tid}`)).text).ids as Record<string, unknown>;
    const inline = (await get('/page/Bodmin/html?data-mw=inline')).text;
    assert.equal([...inline.matchAll(/ data-mw='/g)].length, Object.keys(dataMw).length, 'every data-mw of the render is inline');
    const v3 = await get('/page/Bodmin/html', { accept: 'text/html; profile="https://www.mediawiki.org/wiki/Specs/HTML/3.0.0"' });
    assert.equal(v3.status, 406);
    assert.equal(v3.headers['content-type'], 'application/problem+json');
  });

  it('serves the latest HTML of a real article, then from storage without asking the wiki', async () => {
    const first = await get('/page/Bodmin/html');
    assert.equal(first.status, 200);
    assert.match(String(first.headers['content-type']), /^text\/html; charset=utf-8; profile="https:\/\/www.mediawiki.org\/wiki\/Specs\/HTML\/[\d.]+"/);
    assert.match(first.text, /<body[^>]*mw-parser-output/);
    assert.match(first.text, /Bodmin/);
    const { rev, tid } = etagOf(first);
    assert.equal(rev, await wiki.latestRevid('Bodmin'));
    assert.equal(located(first, 'content-location'), `/wiki.test/v1/page/Bodmin/html/${tid}`);
    assert.match(String(first.headers['cache-control']), /s-maxage/);
    const before = count('parsoid') + count('action');
    const again = await get('/page/Bodmin/html');
    assert.equal(again.headers.etag, first.headers.etag);
    assert.equal(again.text, first.text);
    assert.equal(count('parsoid') + count('action'), before, 'the second read never touched the wiki');
    assert.equal((await get('/page/Bodmin/html', { 'if-none-match': String(first.headers.etag) })).status, 304);
    const gz = await get('/page/Bodmin/html', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(zlib.gunzipSync(gz.raw).toString(), first.text);
  });

  it('serves data-parsoid, data-mw and wikitext from the same render as the HTML (300 KB article)', async () => {
    const html = await get('/page/United_Kingdom/html');
    assert.equal(html.status, 200);
    assert.ok(html.raw.length > 300_000);
    const dp = await get('/page/United_Kingdom/data-parsoid');
    const dm = await get('/page/United_Kingdom/data-mw');
    const wt = await get('/page/United_Kingdom/wikitext');
    for (const res of [dm, wt]) assert.equal(etagOf(res).tid, etagOf(html).tid, 'one render');
    assert.match(String(wt.headers['content-type']), /^text\/plain/);
    const htmlIds = [...html.text.matchAll(/ id="(mw[\w-]+)"/g)].map((m) => m[1]!);
    assert.ok(htmlIds.length > 100);
    if (mode === 'v3') {
      assert.equal(etagOf(dp).tid, etagOf(html).tid, 'one render');
      assert.match(String(dp.headers['content-type']), /data-parsoid/);
      const dpIds = Object.keys(dp.json.ids);
      assert.ok(htmlIds.every((id) => dpIds.includes(id)), 'every HTML id has its data-parsoid');
    } else {
      // The core REST API has no data-parsoid: a clear 404, on rest_v1 too.
      assert.equal(dp.status, 404);
      assert.equal(dp.json.type, 'urn:problem:data-parsoid-unavailable');
      assert.match(dp.json.detail, /core REST API/);
      const restV1 = await request(`${env.s.base}/wiki.test/rest_v1/page/data-parsoid/United_Kingdom/${etagOf(html).rev}/${etagOf(html).tid}`);
      assert.equal(restV1.status, 404);
    }
    assert.doesNotMatch(html.text, / data-mw=/, 'data-mw is apart from the HTML');
    assert.ok(Object.keys(dm.json.ids).length > 10);
    const allIds = new Set([...html.text.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&')));
    assert.ok(Object.keys(dm.json.ids).every((id) => allIds.has(id)), 'each data-mw belongs to an element of the HTML');
    assert.equal(wt.text, await wiki.wikitext(etagOf(html).rev), 'the revision\'s exact wikitext');
    assert.ok(wt.text.length > 300_000);
    assert.match(wt.text, /United Kingdom/);
    assert.equal(typeof dm.json.ids, 'object');
  });

  it('keeps template and Lua output in data-mw (ltgwiki article)', async () => {
    const html = await get('/page/Daugpi%C4%BCs/html');
    assert.equal(html.status, 200);
    assert.match(html.text, /mw:Transclusion/);
    const dm = await get('/page/Daugpi%C4%BCs/data-mw');
    const parts = Object.values(dm.json.ids as Record<string, { parts?: { template?: unknown }[] }>).filter((v) => v.parts?.some((p) => p.template));
    assert.ok(parts.length > 0, 'data-mw holds the template parts');
  });

  it('serves a page whose Lua fails as the wiki renders it (its error shown), not as a failure of the wiki', async () => {
    await wiki.edit(`Module:Failing ${RUN}`, "local p = {} function p.f() error('deliberately') end return p");
    const title = `Lua_failure_${RUN}`;
    await wiki.edit(title, `Before {{#invoke:Failing ${RUN}|f}} and {{#invoke:No such module ${RUN}|f}} after.`);
    const res = await get(`/page/${title}/html`);
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /scribunto-error/);
    assert.match(res.text, /deliberately/);
    assert.match(res.text, /Before .* after\./s);
  });

  it('serves older revisions by revid, renders by tid, and time travel between revisions', async () => {
    const history = await get('/page/Bodmin/rev/');
    const revs = (history.json.items as { rev: number; timestamp: string }[]).map((r) => r.rev);
    assert.equal(revs.length, 5);
    assert.deepEqual([...revs].sort((a, b) => b - a), revs, 'newest first');
    const older = revs[2]!;
    const byRev = await get(`/page/Bodmin/html/${older}`);
    assert.equal(byRev.status, 200);
    const { rev, tid } = etagOf(byRev);
    assert.equal(rev, older);
    assert.equal(located(byRev, 'content-location'), `/wiki.test/v1/page/Bodmin/html/${tid}`);
    const latest = await get('/page/Bodmin/html');
    assert.notEqual(byRev.text, latest.text);
    const byTid = await get(`/page/Bodmin/html/${tid}`);
    assert.equal(byTid.text, byRev.text);
    // A render never changes, but may stop being servable: caches keep it only as long as the recheck bound (300 s by default).
    assert.equal(byTid.headers['cache-control'], 'public, max-age=300');
    const times = history.json.items.map((r: { timestamp: string }) => Date.parse(r.timestamp)) as number[];
    const between = new Date((times[2]! + times[1]!) / 2).toISOString();
    assert.equal(etagOf(await get(`/page/Bodmin/html?ts=${between}`)).rev, older);
    assert.equal(etagOf(await get(`/page/Bodmin/wikitext?ts=${new Date(times[2]!).toISOString()}`)).rev, older, 'exactly at a revision');
    assert.equal((await get(`/page/Bodmin/html?ts=${new Date(times[4]! - 1000).toISOString()}`)).status, 404, 'before the first revision');
    assert.equal((await get('/page/Bodmin/html?ts=soon')).status, 400);
    // The history stored every revision with its parent: which one was current then is known here.
    const asked = count('action');
    const later = new Date((times[2]! + times[1]!) / 2 + 1000).toISOString();
    assert.equal(etagOf(await get(`/page/Bodmin/html?ts=${later}`)).rev, older);
    assert.equal(count('action'), asked, 'answered from storage, the wiki not asked');
    const renders = await get('/page/Bodmin/html/');
    assert.ok(renders.json.items.some((r: { rev: number; tid: string }) => r.rev === older && r.tid === tid));
  });

  it('pages through history and answers revision metadata and /revision/{revid}', async () => {
    const first = await get('/page/Bodmin/rev/?limit=2');
    assert.equal(first.json.items.length, 2);
    const rest = await get(`/page/Bodmin/rev/?limit=10&next=${encodeURIComponent(first.json.next)}`);
    assert.equal(rest.json.items.length, 3);
    assert.equal(rest.json.next, undefined);
    const oldest = rest.json.items[2];
    // Each item names its parent revision and its change tags.
    const items = [...first.json.items, ...rest.json.items] as { rev: number; parent_id: number; tags: string[] }[];
    for (let i = 0; i + 1 < items.length; i++) assert.equal(items[i]!.parent_id, items[i + 1]!.rev);
    assert.equal(oldest.parent_id, 0, 'the first revision has no parent');
    assert.ok(items.every((r) => Array.isArray(r.tags)));
    assert.equal((await get('/page/Bodmin/rev/?ts=2020-01-01T00:00:00Z')).status, 400, '?ts= on history is refused, not ignored');
    const meta = await get(`/page/Bodmin/rev/${oldest.rev}`);
    assert.equal(meta.json.rev, oldest.rev);
    assert.equal(meta.json.user_text, 'imported>CorpusImporter');
    assert.equal(meta.json.comment, oldest.comment);
    const lookup = await request(`${v1}/revision/${oldest.rev}`);
    assert.equal(lookup.json.title, 'Bodmin');
    assert.equal((await get('/page/Bodmin/rev/?next=garbage')).status, 400);
  });

  it('makes one Parsoid request for 50 concurrent misses of one render', async () => {
    // A page of this run's own: no earlier run or test on a store that persists can have stored it.
    const title = `Concurrent_${RUN}`;
    await wiki.edit(title, 'Fifty readers at once.');
    const before = count('parsoid');
    const results = await Promise.all(Array.from({ length: 50 }, () => get(`/page/${title}/html`)));
    assert.ok(results.every((r) => r.status === 200));
    assert.equal(new Set(results.map((r) => r.headers.etag)).size, 1);
    assert.equal(count('parsoid') - before, 1);
  });

  it('answers an interwiki title 404 on every page route, and asks the wiki once', async () => {
    const first = await get('/page/Google:Foo/html');
    assert.equal(first.status, 404, first.text);
    assert.equal(first.json.type, 'urn:problem:interwiki-title');
    const asked = count('action');
    for (const path of ['/page/Google:Foo/html', '/page/Google:Foo/wikitext', '/page/Google:Foo/rev/', '/page/Google:Foo/data-mw']) {
      assert.equal((await get(path)).status, 404, path);
    }
    assert.equal(count('action'), asked, 'remembered as missing');
  });

  it('redirects non-normalized titles and answers unknown pages, revisions and bad input', async () => {
    const res = await get('/page/bodmin%20/html?ts=2020-01-01T00:00:00Z');
    assert.equal(res.status, 301);
    assert.equal(located(res), '/wiki.test/v1/page/Bodmin/html?ts=2020-01-01T00:00:00Z');
    // Segments before the title spelt with percent-escapes reach the same route: the redirect is
    // to the canonical URL of the same page and part, not to one the escapes' lengths shifted.
    const origin = v1.slice(0, v1.indexOf('/wiki.test/v1'));
    for (const [path, to] of [
      ['/%77iki.test/v1/page/Bodmin/html', '/wiki.test/v1/page/Bodmin/html'],
      ['/wiki.test/v%31/page/bodmin/html/2046', '/wiki.test/v1/page/Bodmin/html/2046'],
      ['/wiki.test/v1/p%61ge/Bodmin/data-mw', '/wiki.test/v1/page/Bodmin/data-mw'],
    ]) {
      const moved = await request(`${origin}${path}`);
      assert.equal(moved.status, 301, path);
      assert.equal(located(moved), to, path);
    }
    const filter = await get('/page/Bodmin/html?x=1');
    assert.equal(filter.status, 400, 'a query parameter the route does not take is refused, not ignored');
    assert.match(filter.json.detail, /'x'/);
    assert.equal((await get('/page/Bodmin')).headers.location, 'Bodmin/html');
    assert.equal((await get('/page/No_such_page_anywhere/html')).status, 404);
    assert.equal((await get('/page/Bodmin/html/99999999')).status, 404);
    assert.equal((await request(`${v1}/revision/99999999`)).status, 404);
    assert.equal((await get('/page/Bodmin/html/12abc')).status, 400);
    // Digits past a safe integer are refused for what they are, not by the storage layer.
    const huge = await get('/page/Bodmin/html/9999999999999999');
    assert.equal(huge.status, 400);
    assert.match(huge.json.detail, /Path parameter 'revision'/);
    assert.equal((await get('/page/Bodmin/css')).status, 400);
    assert.equal((await get('/page/%5B%5Bbad%5D%5D/html')).status, 400);
    assert.deepEqual((await get('/page/Bodmin/')).json.items, ['html', 'data-parsoid', 'data-mw', 'wikitext', 'rev']);
  });

  it('says when a page is a redirect instead of following it', async () => {
    const title = `Redirect_${RUN}`;
    await wiki.edit(title, '#REDIRECT [[Bodmin]]');
    const res = await get(`/page/${title}/html`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-mediawiki-redirect'], 'Bodmin');
    assert.match(String(res.headers.link), /<\/wiki\.test\/v1\/page\/Bodmin\/html>; rel="mw:PageProp\/redirect"/);
  });

  it('re-renders on an authorised no-cache, keeping the tid when nothing changed', async () => {
    // A page of this run's own, so that no other reader of a shared store renders it meanwhile.
    const title = `Forced_${RUN}`;
    await wiki.edit(title, 'Rendered again on demand.');
    const stored = await get(`/page/${title}/html`);
    const before = count('parsoid');
    const forced = await get(`/page/${title}/html`, noCache);
    assert.equal(count('parsoid') - before, 1);
    assert.equal(forced.headers.etag, stored.headers.etag);
    const ignored = await get(`/page/${title}/html`, { 'cache-control': 'no-cache' });
    assert.equal(count('parsoid') - before, 1, 'no-cache from an anonymous client does not reach the wiki');
    assert.equal(ignored.headers.etag, stored.headers.etag);
  });

  it('sees new revisions of edited pages when forced, keeping old ones by revid', async () => {
    const title = `Edited_${RUN}`;
    const r1 = await wiki.edit(title, 'First version.');
    assert.equal(etagOf(await get(`/page/${title}/html`)).rev, r1);
    const r2 = await wiki.edit(title, 'Second version.');
    const fresh = await get(`/page/${title}/html`, noCache);
    assert.equal(etagOf(fresh).rev, r2);
    assert.match(fresh.text, /Second version/);
    assert.match((await get(`/page/${title}/html/${r1}`)).text, /First version/);
  });

  it('answers 404 once a stored page is deleted on the wiki', async () => {
    const title = `Deleted_${RUN}`;
    const r1 = await wiki.edit(title, 'Soon gone.');
    assert.ok(!(await listed(title)), 'not stored yet');
    assert.equal((await get(`/page/${title}/html`)).status, 200);
    assert.ok(await listed(title), 'a listing read before the page was stored is not answered again');
    await wiki.delete(title);
    assert.equal((await get(`/page/${title}/html`, noCache)).status, 404);
    assert.equal((await get(`/page/${title}/html`)).status, 404, 'the tombstone answers without the wiki');
    assert.equal((await get(`/page/${title}/html/${r1}`)).status, 404);
    assert.ok(!(await listed(title)));
  });

  it('answers 403 for a revision whose text was hidden after it was stored', async () => {
    const title = `Hidden_${RUN}`;
    const r1 = await wiki.edit(title, 'Secret first version.');
    await wiki.edit(title, 'Public second version.');
    const stored = await get(`/page/${title}/html/${r1}`);
    assert.equal(stored.status, 200);
    await wiki.hideRevision(title, r1);
    assert.equal((await get(`/page/${title}/html/${r1}`, noCache)).status, 403);
    assert.equal((await get(`/page/${title}/html/${r1}`)).status, 403);
    assert.equal((await get(`/page/${title}/html/${etagOf(stored).tid}`)).status, 403);
    assert.equal((await get(`/page/${title}/html`)).status, 200, 'the latest revision is still visible');
  });

  it('follows a page moved on the wiki after it was stored', async () => {
    const from = `Moved_from_${RUN}`;
    const to = `Moved_to_${RUN}`;
    const r1 = await wiki.edit(from, 'A page that moves.');
    assert.equal((await get(`/page/${from}/html/${r1}`)).status, 200);
    await wiki.move(from, to);
    const history = await get(`/page/${to}/rev/`);
    assert.ok(history.json.items.some((r: { rev: number }) => r.rev === r1), 'history lists the moved revisions');
    assert.equal((await request(`${v1}/revision/${r1}`)).json.title, to);
    const old = await get(`/page/${from}/html/${r1}`, noCache);
    assert.equal(old.status, 302);
    assert.equal(located(old), `/wiki.test/v1/page/${to}/html/${r1}`);
    assert.match((await get(`/page/${to}/html/${r1}`)).text, /A page that moves/);
  });

  it('lists stored pages, paged, each with its revision and render', async () => {
    const pages: { title: string; rev: number; tid: string | null }[] = [];
    let next: string | undefined;
    do {
      const page = await get(`/page/?limit=3${next ? `&next=${encodeURIComponent(next)}` : ''}`);
      assert.ok(page.json.items.length <= 3);
      pages.push(...page.json.items);
      next = page.json.next;
    } while (next);
    for (const t of ['Bodmin', 'United_Kingdom', `Concurrent_${RUN}`]) assert.ok(pages.some((p) => p.title === t), t);
    const bodmin = pages.find((p) => p.title === 'Bodmin')!;
    assert.deepEqual({ rev: bodmin.rev, tid: bodmin.tid }, etagOf(await get('/page/Bodmin/html')));
    assert.equal(new Set(pages.map((p) => p.title)).size, pages.length, 'each page once');
    assert.deepEqual((await get('/page/?ts=2000-01-01T00:00:00Z')).json.items, [], 'nothing existed before the corpus');
  });

  it('lists the pages as they were at a wiki time, with the revision and render current then', async () => {
    const created = `Snapshot_created_${RUN}`;
    const deleted = `Snapshot_deleted_${RUN}`;
    await wiki.edit(deleted, 'Exists, then deleted.');
    assert.equal((await get(`/page/${deleted}/html`)).status, 200);
    await sleep(1100);
    const beforeCreation = new Date().toISOString();
    await sleep(1100);
    await wiki.edit(created, 'First version.');
    const first = etagOf(await get(`/page/${created}/html`));
    await sleep(1100);
    const between = new Date().toISOString();
    await sleep(1100);
    await wiki.edit(created, 'Second version.');
    const second = etagOf(await get(`/page/${created}/html`, noCache));
    await wiki.delete(deleted);
    assert.equal((await get(`/page/${deleted}/html`, noCache)).status, 404);
    const at = async (ts: string) => {
      const items: { title: string; rev: number; tid: string | null }[] = [];
      let next: string | undefined;
      do {
        const page = await get(`/page/?ts=${encodeURIComponent(ts)}${next ? `&next=${encodeURIComponent(next)}` : ''}`);
        items.push(...page.json.items);
        next = page.json.next;
      } while (next);
      return new Map(items.map((i) => [i.title, { rev: i.rev, tid: i.tid }]));
    };
    const snapshotBefore = await at(beforeCreation);
    assert.ok(!snapshotBefore.has(created), 'not created yet');
    assert.ok(snapshotBefore.has(deleted), 'not deleted yet');
    const snapshotBetween = await at(between);
    assert.deepEqual(snapshotBetween.get(created), first, 'the first revision and its render');
    // Each page's revision then is a read of its own: a listing makes them a few at a time, not all at once.
    const { storage } = env.s.app;
    const read = storage.get.bind(storage);
    let inFlight = 0;
    let most = 0;
    let byTime = 0;
    storage.get = (domain, query) => {
      if (query.index !== 'by_time') return read(domain, query);
      byTime++;
      most = Math.max(most, ++inFlight);
      return read(domain, query).finally(() => inFlight--);
    };
    let now: Awaited<ReturnType<typeof at>>;
    try {
      now = await at(new Date(Date.now() + 1000).toISOString());
    } finally {
      storage.get = read;
    }
    assert.deepEqual(now.get(created), second);
    assert.ok(!now.has(deleted), 'deleted since');
    assert.ok(byTime > 8, `${byTime} pages read at the time`);
    assert.ok(most <= 8, `${most} reads of revisions then under way at once`);
  });

  it('keeps serving stored content while the wiki is down, and answers misses with 503', async () => {
    const latest = await get('/page/Bodmin/html');
    const older = (await get('/page/Bodmin/rev/')).json.items[2].rev;
    proxy.down();
    try {
      const stillLatest = await get('/page/Bodmin/html');
      assert.equal(stillLatest.status, 200);
      assert.equal(stillLatest.headers.etag, latest.headers.etag);
      assert.equal((await get(`/page/Bodmin/html/${older}`)).status, 200);
      const miss = await get('/page/Anarchism/html');
      assert.equal(miss.status, 503);
      assert.equal(miss.headers['content-type'], 'application/problem+json');
      assert.equal((await get('/page/Bodmin/html', noCache)).status, 200, 'a forced check falls back to storage');
    } finally {
      proxy.up = true;
    }
  });

  it('documents every page route in the OpenAPI document', async () => {
    const spec = (await request(`${v1}/?spec`)).json;
    for (const path of ['/v1/page/', '/v1/page/{title}', '/v1/page/{title}/', '/v1/page/{title}/{prop}', '/v1/page/{title}/{prop}/', '/v1/page/{title}/{prop}/{revision}', '/v1/page/{title}/rev/', '/v1/page/{title}/rev/{revid}', '/v1/revision/{revid}']) {
      assert.ok(spec.paths[path]?.get, path);
    }
  });
});

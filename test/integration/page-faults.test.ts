import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Metrics } from '../../src/util/metrics.js';
import { PageCaches } from '../../src/modules/page/read/page-caches.js';
import type { SiteInfo } from '../../src/upstream/action-api.js';
import { Wiki } from '../../src/upstream/wiki.js';
import { request, sqliteConfig, startServer, type TestServer } from '../helpers.js';
import { SwitchableProxy, WIKI_URL } from '../wiki.js';

/** The page API when the wiki is down, restarted, or asked hostile things (against the real wiki). */
describe('page API under faults and hostile requests', () => {
  let proxy: SwitchableProxy;
  let wikiUrl: string;
  const storage = sqliteConfig();
  const wikis = () => ({ 'wiki.test': { action_api: `${wikiUrl}/api.php`, rest_api: `${wikiUrl}/rest.php` } });

  before(async () => {
    proxy = await new SwitchableProxy().start();
    wikiUrl = `http://127.0.0.1:${proxy.port}`;
  });
  after(() => proxy.stop());

  const wikiCalls = (s: TestServer, endpoint?: string) => {
    const metric = (s.app.metrics.wikiRequests as unknown as { hashMap: Record<string, { value: number; labels: Record<string, string> }> }).hashMap;
    return Object.values(metric).filter((m) => !endpoint || m.labels.endpoint === endpoint).reduce((n, m) => n + m.value, 0);
  };

  it('serves stored pages after a restart while the wiki is down (title rules kept in storage)', async () => {
    const first = await startServer({ storage, wikis: wikis(), latest_check_interval: 3600 });
    const stored = await request(`${first.base}/wiki.test/v1/page/Bodmin/html`);
    assert.equal(stored.status, 200);
    const [, revid, tid] = /^"(\d+)\/([^"]+)"$/.exec(String(stored.headers.etag))!;
    await first.close();

    proxy.down();
    try {
      const second = await startServer({ storage, wikis: wikis(), latest_check_interval: 0 });
      try {
        const v1 = `${second.base}/wiki.test/v1`;
        const again = await request(`${v1}/page/Bodmin/html`);
        assert.equal(again.status, 200, again.text.slice(0, 200));
        assert.equal(again.headers.etag, stored.headers.etag);
        assert.equal(again.text, stored.text);
        assert.equal((await request(`${v1}/page/Bodmin/html/${revid}`)).status, 200);
        // By tid, with nothing in memory: the render is found among the page's stored renders.
        const byTid = await request(`${v1}/page/Bodmin/data-parsoid/${tid}`);
        assert.equal(byTid.status, 200, byTid.text.slice(0, 200));
        assert.equal(byTid.headers.etag, stored.headers.etag);
        assert.equal((await request(`${v1}/page/bodmin/html`)).status, 301, 'titles still normalise');
        assert.equal((await request(`${v1}/page/Toronto/html`)).status, 503, 'what is not stored needs the wiki');
        // A stash is counted against the wiki's limit for its caller, whom only the wiki knows:
        // while it is down, a stored render is still served, anonymous or with a session.
        for (const headers of [{}, { cookie: 'wiki_session=unknown' }] as Record<string, string>[]) {
          const stash = await request(`${second.base}/wiki.test/rest.php/v1/revision/${revid}/html?flavor=stash`, { headers });
          assert.equal(stash.status, 200, stash.text.slice(0, 200));
        }
      } finally {
        await second.close();
      }
    } finally {
      proxy.up = true;
    }
  });

  describe('with the wiki up', () => {
    let s: TestServer;
    let v1: string;
    before(async () => {
      s = await startServer({ wikis: wikis(), latest_check_interval: 3600, negative_cache_ms: 60_000 });
      v1 = `${s.base}/wiki.test/v1`;
    });
    after(() => s.close());

    it('answers special pages with 404 on every route, without asking the wiki for them', async () => {
      for (const path of ['/page/Special:Random/rev/', '/page/Special:Random/html', '/page/Special:RecentChanges/', '/page/Media:Example.png/wikitext']) {
        const res = await request(`${v1}${path}`);
        assert.equal(res.status, 404, path);
        assert.equal(res.json.type, 'urn:problem:special-page');
      }
    });

    it('remembers that a page or revision is missing instead of asking the wiki each time', async () => {
      const title = `No_such_page_${Date.now()}`;
      const before = wikiCalls(s, 'action');
      const concurrent = await Promise.all(Array.from({ length: 50 }, () => request(`${v1}/page/${title}/html`)));
      for (let i = 0; i < 50; i++) concurrent.push(await request(`${v1}/page/${title}/html`));
      assert.deepEqual(new Set(concurrent.map((r) => r.status)), new Set([404]));
      assert.ok(wikiCalls(s, 'action') - before <= 2, `${wikiCalls(s, 'action') - before} Action API calls for 100 requests`);
      const revBefore = wikiCalls(s, 'action');
      for (let i = 0; i < 20; i++) assert.equal((await request(`${v1}/revision/987654321`)).status, 404);
      for (let i = 0; i < 20; i++) assert.equal((await request(`${v1}/page/Bodmin/html/987654321`)).status, 404);
      assert.ok(wikiCalls(s, 'action') - revBefore <= 1, 'one call for 40 requests of a missing revision');
      const timeTravel = `No_such_page_either_${Date.now()}`;
      const tsBefore = wikiCalls(s, 'action');
      for (let i = 0; i < 20; i++) assert.equal((await request(`${v1}/page/${timeTravel}/html?ts=2020-01-01T00:00:00Z`)).status, 404);
      for (let i = 0; i < 20; i++) assert.equal((await request(`${v1}/page/${timeTravel}/rev/`)).status, 404);
      assert.ok(wikiCalls(s, 'action') - tsBefore <= 1, `${wikiCalls(s, 'action') - tsBefore} calls for 40 requests of a missing page by time and history`);
    });

    it('answers a forged history paging token with 400, not a gateway error', async () => {
      for (const cont of ['abc', '20990101000000|1', 'x|y|z']) {
        const token = Buffer.from(JSON.stringify({ c: cont })).toString('base64url');
        const res = await request(`${v1}/page/Bodmin/rev/?next=${token}`);
        assert.ok(res.status === 400 || res.status === 200, `${cont}: ${res.status} ${res.text.slice(0, 200)}`);
        if (res.status === 400) assert.equal(res.json.type, 'urn:problem:invalid-paging-token');
      }
      assert.equal((await request(`${v1}/page/Bodmin/rev/?next=${Buffer.from('{"c":"abc"}').toString('base64url')}`)).status, 400);
      assert.equal((await request(`${v1}/page/Bodmin/rev/?next=%7B%7D`)).status, 400);
    });
  });

  it('bounds the normalised-title cache by bytes whatever titles clients send', async () => {
    const res = await fetch(`${WIKI_URL}/api.php?action=query&meta=siteinfo&siprop=general|namespaces|namespacealiases|specialpagealiases&format=json&formatversion=2`);
    const info = ((await res.json()) as { query: SiteInfo }).query;
    const wiki = new Wiki('wiki.test', { action_api: 'http://127.0.0.1:1/api.php', rest_api: 'http://127.0.0.1:1/rest.php' }, 'test', new Metrics(false));
    wiki.useSiteInfoStore({ load: async () => ({ info, fetched: Date.now() }), save: async () => {}, loadMode: async () => undefined, saveMode: async () => {} });
    const caches = new PageCaches({ rowTtlMs: 1000, renderBytes: 1024, missTtlMs: 0 });
    for (let i = 0; i < 20_000; i++) {
      const text = `${'hostile title '.repeat(17)}${i}`;
      assert.equal(await caches.title('wiki.test', text, () => wiki.normalize(text)), `Hostile_title_${'hostile_title_'.repeat(16)}${i}`);
    }
    assert.ok(caches.titleBytes <= 4 * 1024 * 1024, `${caches.titleBytes} bytes`);
    assert.ok(caches.titleBytes > 3 * 1024 * 1024, 'still caching');
  });
});

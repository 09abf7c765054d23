import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import path from 'node:path';
import { request, tempDir } from '../helpers.js';
import { etagOf, startAgainstWiki, waitFor, type AgainstWiki } from '../wiki.js';

const TITLE = 'Bodmin';
const PROPS = ['html', 'data-parsoid', 'data-mw', 'wikitext'] as const;

/**
 * A render read by its tid alone costs the same few storage reads however long its page's
 * history: it is found through the render table's index by tid, not by reading the page's rows.
 */
describe('a render by tid against the real wiki, with every cache in memory off', () => {
  let env: AgainstWiki;

  before(async () => {
    env = await startAgainstWiki({ storage: { backend: 'sqlite', path: path.join(tempDir(), 'store.sqlite3'), read_cache_mb: 0 }, render_cache_bytes: 0, answer_cache_bytes: 0, page_cache_ms: 0 });
  });
  after(() => env.close());

  /** Storage reads of the page's two tables while `work` runs. */
  const readsDuring = async (work: () => Promise<void>) => {
    const count = async () => {
      const metric = await env.s.app.metrics.storageDuration.get();
      return metric.values
        .filter((v) => v.metricName === 'storage_operation_seconds_count' && v.labels.operation === 'get' && ['parsoid', 'page_revisions'].includes(String(v.labels.table)))
        .reduce((n, v) => n + v.value, 0);
    };
    const before = await count();
    await work();
    return (await count()) - before;
  };

  it('reads a render in as many storage reads with 1,200 later revisions of its page as without', async () => {
    const first = await request(`${env.v1}/page/${TITLE}/html`);
    assert.equal(first.status, 200);
    const { rev, tid } = etagOf(first);
    // A render is stored just after its first reader is answered; with no render cache, only then found by tid.
    const url = `${env.v1}/page/${TITLE}/html/${tid}`;
    await waitFor('the render stored', 10_000, async () => ((await request(url)).status === 200 ? true : undefined));

    const byTid = async () => {
      const res = await request(url);
      assert.equal(res.status, 200, res.text);
      assert.equal(etagOf(res).tid, tid);
    };
    const short = await readsDuring(byTid);
    assert.ok(short <= 3, `${short} reads: the index, the render and its revision's row`);

    // The page's history goes on: 1,200 later revisions stored (their renders not), newer than the one read.
    for (let later = rev + 1; later <= rev + 1200; later++) {
      await env.s.app.storage.put('wiki.test', { table: 'page_revisions', attributes: { title: TITLE, rev: later, timestamp: new Date(Date.now() + later).toISOString() } });
    }
    const long = await readsDuring(byTid);
    assert.equal(long, short);
  });
});

/**
 * A read that sends one property of a stored render as it is reads that property alone; the render
 * is kept in memory only whole, so a later read of another property never finds part of it.
 */
describe('one property of a stored render, read alone', () => {
  let store: string;
  /** Every property of the render as the service that made it sends it. */
  const made = new Map<string, string>();
  let rev = 0;
  let tid = '';

  before(async () => {
    store = path.join(tempDir(), 'store.sqlite3');
    const env = await startAgainstWiki({ storage: { backend: 'sqlite', path: store } });
    try {
      const first = await request(`${env.v1}/page/${TITLE}/html`);
      assert.equal(first.status, 200, first.text);
      ({ rev, tid } = etagOf(first));
      await waitFor('the render stored', 10_000, async () => ((await env.s.app.storage.get('wiki.test', { table: 'parsoid', attributes: { title: TITLE, rev, tid } })).items.length ? true : undefined));
      for (const prop of PROPS) made.set(prop, (await request(`${env.v1}/page/${TITLE}/${prop}/${tid}`)).text);
    } finally {
      await env.close();
    }
  });

  for (const by of ['revision', 'tid'] as const) {
    it(`by ${by}: each property as its maker sent it, read alone until the render is kept, then from the whole render kept`, async () => {
      // A fresh service on the same store: nothing of the render in memory.
      const env = await startAgainstWiki({ storage: { backend: 'sqlite', path: store } });
      try {
        const url = (prop: string) => `${env.v1}/page/${TITLE}/${prop}/${by === 'tid' ? tid : rev}`;
        const kept = () => env.s.app.page.service.caches.render('wiki.test', tid);
        // The columns each read of the render table asks for (all of them: '*').
        const columnsRead: string[][] = [];
        const { storage } = env.s.app;
        const get = storage.get.bind(storage);
        storage.get = (domain, query) => {
          if (query.table === 'parsoid') columnsRead.push(typeof query.proj === 'string' ? [query.proj] : (query.proj ?? ['*']));
          return get(domain, query);
        };
        const html = await request(url('html'));
        assert.equal(html.status, 200, html.text);
        assert.equal(html.text, made.get('html'));
        assert.deepEqual(etagOf(html), { rev, tid });
        assert.equal(kept(), undefined, 'read once, its HTML alone: nothing kept');
        assert.deepEqual(columnsRead, [['title', 'rev', 'tid', 'html', 'meta']], 'the HTML column alone, not the other three parts');
        // The second read keeps the render, whole: every property then comes from memory, unchanged.
        assert.equal((await request(url('html'))).text, made.get('html'));
        assert.deepEqual(columnsRead.at(-1), ['*'], 'the read that keeps the render reads it whole');
        assert.deepEqual(Object.keys(kept()?.parts ?? {}).sort(), [...PROPS].sort());
        for (const prop of PROPS) {
          const res = await request(url(prop));
          assert.equal(res.status, 200, `${prop}: ${res.text}`);
          assert.equal(res.text, made.get(prop), prop);
        }
        assert.equal(columnsRead.length, 2, 'the other properties from memory');
        assert.equal(env.wikiRequests('parsoid'), 0, 'all from storage');
        // The render cache's metrics against what happened: a miss for each read of the render
        // table, a hit for each of the other three properties (the HTML's third read may be
        // answered before the page module, from the answers kept), the one render offered kept.
        const counted = async (metric: 'renderCacheReads' | 'renderCacheOffers') =>
          Object.fromEntries((await env.s.app.metrics[metric].get()).values.map((v) => [v.labels.outcome, v.value]));
        const reads = await counted('renderCacheReads');
        assert.equal(reads.miss, columnsRead.length);
        assert.ok(reads.hit === PROPS.length - 1 || reads.hit === PROPS.length, `${reads.hit} hits`);
        assert.deepEqual(await counted('renderCacheOffers'), { kept: 1 });
      } finally {
        await env.close();
      }
    });
  }

  it('reads any property alone at first, and keeps the whole render at the second read of another', async () => {
    const env = await startAgainstWiki({ storage: { backend: 'sqlite', path: store } });
    try {
      const kept = () => env.s.app.page.service.caches.render('wiki.test', tid);
      const wikitext = await request(`${env.v1}/page/${TITLE}/wikitext/${rev}`);
      assert.equal(wikitext.status, 200, wikitext.text);
      assert.equal(wikitext.text, made.get('wikitext'));
      assert.equal(kept(), undefined);
      assert.equal((await request(`${env.v1}/page/${TITLE}/data-mw/${rev}`)).text, made.get('data-mw'));
      assert.deepEqual(Object.keys(kept()?.parts ?? {}).sort(), [...PROPS].sort());
    } finally {
      await env.close();
    }
  });
});


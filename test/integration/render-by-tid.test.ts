import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import path from 'node:path';
import { request, tempDir } from '../helpers.js';
import { etagOf, startAgainstWiki, waitFor, type AgainstWiki } from '../wiki.js';

const TITLE = 'Bodmin';

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

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from '../helpers.js';
import { etagOf, startAgainstWiki, storedPage, waitFor, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);

/**
 * The check of a page's latest revision against the real wiki, made after a reader is served once
 * the last check is older than `latest_check_interval`.
 */
describe("the checks of a page's latest revision", () => {
  let env: AgainstWiki;
  before(async () => {
    env = await startAgainstWiki({ latest_check_interval: 0.5 });
  });
  after(async () => {
    await env?.close();
  });

  /** Writes to the page-revisions table so far. */
  const revisionWrites = async () => {
    const metric = await env.s.app.metrics.storageDuration.get();
    return metric.values
      .filter((v) => v.metricName === 'storage_operation_seconds_count' && v.labels.operation === 'put' && v.labels.table === 'page_revisions')
      .reduce((n, v) => n + v.value, 0);
  };
  const checked = async (title: string) => ((await storedPage(env.s.base, title)) as { checked?: string | null } | undefined)?.checked;

  it('writes only when it was checked when the wiki names the stored revision again, and stores a new one in full', async () => {
    const title = `Latest check ${RUN}`.replace(/ /g, '_');
    const first = await env.wiki.edit(title, 'Checked, unchanged.');
    const url = `${env.v1}/page/${title}/html`;
    assert.equal((await request(url)).status, 200);
    const asked = env.wikiRequests('action');
    for (let round = 0; round < 3; round++) {
      const before = await checked(title);
      assert.ok(before, 'the page was checked when first read');
      await new Promise((r) => setTimeout(r, 600));
      const writes = await revisionWrites();
      const res = await request(url);
      assert.equal(res.status, 200);
      assert.equal(etagOf(res).rev, first);
      // The check runs after the answer.
      const after = await waitFor('the check made', 5000, async () => {
        const now = await checked(title);
        return now && now !== before ? now : undefined;
      });
      assert.ok(Date.parse(after) > Date.parse(before));
      assert.equal((await revisionWrites()) - writes, 1, 'one write: the check time (with the revision seen)');
    }
    assert.ok(env.wikiRequests('action') - asked >= 3, 'the wiki was asked each time');

    // The wiki has a new revision: the check stores it, its render follows, and the next reads serve it.
    const second = await env.wiki.edit(title, 'Changed on the wiki.');
    await new Promise((r) => setTimeout(r, 600));
    await request(url);
    const page = await waitFor('the new revision stored', 10_000, async () => {
      const state = await storedPage(env.s.base, title);
      return state?.latest_rev === second ? state : undefined;
    });
    assert.equal(page.latest_rev, second);
    const served = await waitFor('the new revision served', 30_000, async () => {
      const res = await request(url);
      return res.status === 200 && etagOf(res).rev === second ? res : undefined;
    });
    assert.match(served.text, /Changed on the wiki/);
  });
});

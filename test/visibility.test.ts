import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, sleep } from './helpers.js';
import { etagOf, startAgainstWiki, type AgainstWiki } from './wiki.js';

const RUN = Date.now().toString(36);
const BOUND_S = 1;

/**
 * Hidden revisions and deleted pages against the real wiki (a privacy matter): once the wiki hides
 * a revision or deletes a page, no URL of it answers 200 after the recheck bound, and no shared
 * cache is told to keep it longer than that.
 */
describe('hidden revisions and deleted pages are not served past the recheck bound', () => {
  let env: AgainstWiki;
  before(async () => {
    env = await startAgainstWiki({ latest_check_interval: BOUND_S, revision_recheck_interval: BOUND_S });
  });
  after(() => env.close());

  const get = (path: string) => request(`${env.s.base}/wiki.test${path}`);

  it('answers 403 on every URL of a revision whose text the wiki hid, within the bound', async () => {
    const title = `Hidden later ${RUN}`.replace(/ /g, '_');
    const old = await env.wiki.edit(title, 'Text that will be hidden.');
    await env.wiki.edit(title, 'A later revision.');
    const byRev = await get(`/v1/page/${title}/html/${old}`);
    assert.equal(byRev.status, 200);
    const { tid } = etagOf(byRev);
    assert.equal(byRev.headers['cache-control'], `s-maxage=${BOUND_S}, max-age=0, must-revalidate`);
    const byTid = await get(`/v1/page/${title}/wikitext/${tid}`);
    assert.equal(byTid.status, 200);
    assert.equal(byTid.headers['cache-control'], `public, max-age=${BOUND_S}`, 'no shared cache keeps it a year');

    await env.wiki.hideRevision(title, old);
    await sleep(BOUND_S * 1000 + 200);
    for (const path of [`/v1/page/${title}/html/${old}`, `/v1/page/${title}/wikitext/${tid}`, `/v1/page/${title}/data-parsoid/${tid}`, `/rest_v1/page/html/${title}/${old}/${tid}`, `/rest_v1/page/html/${title}/${old}`]) {
      assert.equal((await get(path)).status, 403, path);
    }
    assert.equal((await get(`/v1/page/${title}/rev/${old}`)).json.hidden.text, true);
    assert.equal((await get(`/v1/revision/${old}`)).json.hidden.text, true);
    // The latest revision is untouched.
    assert.equal((await get(`/v1/page/${title}/html`)).status, 200);
  });

  it('serves no URL of a page deleted on the wiki, within the bound', async () => {
    const title = `Deleted later ${RUN}`.replace(/ /g, '_');
    const rev = await env.wiki.edit(title, 'Soon deleted.');
    const latest = await get(`/v1/page/${title}/html`);
    assert.equal(latest.status, 200);
    assert.equal(latest.headers['cache-control'], `s-maxage=${BOUND_S}, max-age=0, must-revalidate`);
    const { tid } = etagOf(latest);
    await env.wiki.delete(title);
    await sleep(BOUND_S * 1000 + 200);
    for (const path of [`/v1/page/${title}/html/${tid}`, `/v1/page/${title}/html/${rev}`, `/v1/page/${title}/html`, `/rest_v1/page/html/${title}`, `/rest_v1/page/summary/${title}`]) {
      const res = await get(path);
      assert.equal(res.status, 404, `${path}: ${res.text.slice(0, 200)}`);
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, sleep, located } from '../helpers.js';
import { etagOf, startAgainstWiki, waitFor, type AgainstWiki } from '../wiki.js';

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
    assert.equal(byRev.headers['cache-control'], `max-age=0, s-maxage=${BOUND_S}, must-revalidate`);
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
    assert.equal(latest.headers['cache-control'], `max-age=0, s-maxage=${BOUND_S}, must-revalidate`);
    const { tid } = etagOf(latest);
    await env.wiki.delete(title);
    await sleep(BOUND_S * 1000 + 200);
    for (const path of [`/v1/page/${title}/html/${tid}`, `/v1/page/${title}/html/${rev}`, `/v1/page/${title}/html`, `/rest_v1/page/html/${title}`, `/rest_v1/page/summary/${title}`]) {
      const res = await get(path);
      assert.equal(res.status, 404, `${path}: ${res.text.slice(0, 200)}`);
    }
  });

  it('redirects a moved page\'s revision URLs to its new title, keeps the old title\'s listings its own, and answers /revision/ with the new title and render', async () => {
    const from = `Move from ${RUN}`.replace(/ /g, '_');
    const to = `Move to ${RUN}`.replace(/ /g, '_');
    const rev = await env.wiki.edit(from, 'A page that will move.');
    const read = await get(`/v1/page/${from}/html/${rev}`);
    const { tid } = etagOf(read);
    await env.wiki.move(from, to);
    await sleep(BOUND_S * 1000 + 200);
    const byRev = await get(`/v1/page/${from}/html/${rev}`);
    assert.equal(byRev.status, 302);
    assert.equal(located(byRev), `/wiki.test/v1/page/${to}/html/${rev}`);
    const byTid = await get(`/v1/page/${from}/html/${tid}`);
    assert.equal(byTid.status, 302);
    assert.equal(located(byTid), `/wiki.test/v1/page/${to}/html/${tid}`);
    const there = await get(`/v1/page/${to}/html/${tid}`);
    assert.equal(there.status, 200, 'the render keeps its tid under the new title');
    assert.equal(there.text, read.text);
    const lookup = (await get(`/v1/revision/${rev}`)).json;
    assert.equal(lookup.title, to);
    assert.equal(lookup.tid, tid);
    // The old title is now the redirect page: its own content and renders only.
    const redirect = await get(`/v1/page/${from}/html`);
    assert.equal(redirect.status, 200);
    assert.match(String(redirect.headers['x-mediawiki-redirect']), new RegExp(encodeURIComponent(to.replace(/_/g, ' ')).replace(/%20/g, '(%20|_)')));
    // The render just served is listed once its pointers are written, which follows the answer.
    const renders = await waitFor('the redirect page\'s render listed', 5_000, async () => {
      const items = (await get(`/v1/page/${from}/html/`)).json.items as { rev: number }[];
      return items.length > 0 ? items : undefined;
    });
    assert.ok(renders.every((r) => r.rev !== rev), `the moved revision is not listed under the old title: ${JSON.stringify(renders)}`);
  });

  it('answers a page moved without a redirect with 404 "moved" and where it went; its revisions redirect', async () => {
    const from = `Move quietly ${RUN}`.replace(/ /g, '_');
    const to = `Moved quietly ${RUN}`.replace(/ /g, '_');
    const rev = await env.wiki.edit(from, 'Moves without a trace.');
    assert.equal((await get(`/v1/page/${from}/html`)).status, 200);
    await env.wiki.move(from, to, { noredirect: true });
    await sleep(BOUND_S * 1000 + 200);
    const latest = await get(`/v1/page/${from}/html`);
    assert.equal(latest.status, 404);
    assert.equal(latest.json.type, 'urn:problem:page-moved');
    assert.equal(latest.json.moved_to, to);
    assert.equal(located(latest), `/wiki.test/v1/page/${to}/html`);
    const old = await get(`/v1/page/${from}/html/${rev}`);
    assert.equal(old.status, 302);
    assert.equal(located(old), `/wiki.test/v1/page/${to}/html/${rev}`);
    assert.equal((await get(`/v1/page/${to}/html/${rev}`)).status, 200);
  });

  it('checks revisions read at once past the bound in a few queries, each answered as the wiki says now', async () => {
    const hiddenTitle = `Batch hidden ${RUN}`.replace(/ /g, '_');
    const deletedTitle = `Batch deleted ${RUN}`.replace(/ /g, '_');
    const hidden = await env.wiki.edit(hiddenTitle, 'Text hidden while other revisions are checked.');
    await env.wiki.edit(hiddenTitle, 'A later revision.');
    const deleted = await env.wiki.edit(deletedTitle, 'A page deleted while other revisions are checked.');
    // Revisions of the imported articles, which no test hides or deletes.
    const listed = await env.wiki.api({ action: 'query', list: 'allrevisions', arvlimit: '500', arvprop: 'ids|user', arvdir: 'newer', arvnamespace: '0' });
    const imported = (listed.query.allrevisions as { title: string; revisions: { revid: number; user: string }[] }[])
      .filter((page) => /^[A-Za-z0-9 ]+$/.test(page.title))
      .flatMap((page) => page.revisions.filter((r) => r.user.startsWith('imported>')).map((r) => ({ title: page.title.replace(/ /g, '_'), rev: r.revid })))
      .slice(0, 40);
    assert.equal(imported.length, 40);
    const all = [...imported, { title: hiddenTitle, rev: hidden }, { title: deletedTitle, rev: deleted }];
    const metadata = (r: { title: string; rev: number }) => get(`/v1/page/${r.title}/rev/${r.rev}`);
    for (const r of all) assert.equal((await metadata(r)).status, 200, `${r.title} ${r.rev}`);
    await env.wiki.hideRevision(hiddenTitle, hidden);
    await env.wiki.delete(deletedTitle);
    await sleep(BOUND_S * 1000 + 200);

    const before = env.wikiRequests();
    const answers = await Promise.all(all.map(metadata));
    const asked = env.wikiRequests() - before;
    for (const [i, r] of imported.entries()) assert.equal(answers[i]!.status, 200, `${r.title} ${r.rev}`);
    assert.equal(answers[40]!.json.hidden.text, true, 'the revision hidden meanwhile says so');
    assert.equal(answers[41]!.status, 404, 'the deleted page\'s revision is gone');
    // One query a revision would be 44 in all; batched, a few for the revisions (5 on a quiet machine,
    // more when the reads reach the service spread out) and one for the deleted page's state.
    assert.ok(asked <= 21, `${asked} requests to the wiki for ${all.length} revisions checked`);
    assert.ok(env.wikiRequests('action-revisions') >= 1, 'counted as revision queries');
  });

  it('asks the wiki about 200 made-up revision ids sent at once in a few queries, then remembers they are missing', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => 900_000_000 + Number.parseInt(RUN.slice(-4), 36) * 1000 + i);
    const before = env.wikiRequests();
    const first = await Promise.all(ids.map((id) => get(`/v1/page/Anything/rev/${id}`)));
    assert.deepEqual(new Set(first.map((r) => r.status)), new Set([404]));
    const asked = env.wikiRequests() - before;
    assert.ok(asked <= 50, `${asked} requests to the wiki for 200 made-up ids (one a revision would be 200)`);
    const again = await Promise.all(ids.map((id) => get(`/v1/page/Anything/rev/${id}`)));
    assert.deepEqual(new Set(again.map((r) => r.status)), new Set([404]));
    assert.equal(env.wikiRequests() - before, asked, 'asked again: nothing more of the wiki');
  });

  // Last: the outage it plays pauses the service's checks of this wiki for 10 s.
  it('serves stored revisions while the wiki is down past the bound, without each reader asking it again', async () => {
    const title = `Recheck down ${RUN}`.replace(/ /g, '_');
    const rev = await env.wiki.edit(title, 'Stored before the outage.');
    const read = await get(`/v1/page/${title}/html/${rev}`);
    assert.equal(read.status, 200);
    await sleep(BOUND_S * 1000 + 200);
    env.proxy.down();
    try {
      const first = await get(`/v1/page/${title}/html/${rev}`);
      assert.equal(first.status, 200, 'what is stored stands');
      assert.equal(first.text, read.text);
      const before = env.wikiRequests();
      for (let i = 0; i < 5; i++) assert.equal((await get(`/v1/page/${title}/wikitext/${rev}`)).status, 200);
      assert.equal(env.wikiRequests(), before, 'the outage is remembered: no reader waits on the wiki meanwhile');
    } finally {
      env.proxy.up = true;
    }
  });
});

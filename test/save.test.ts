import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer } from './helpers.js';
import { SwitchableProxy, WikiAdmin } from './wiki.js';

const RUN = Date.now().toString(36);
const JSON_TYPE = { 'content-type': 'application/json' };

/** Saving through the service, against the real wiki (MediaWiki + Parsoid). */
describe('saving pages against the real wiki', () => {
  let s: TestServer;
  let proxy: SwitchableProxy;
  let wiki: WikiAdmin;
  let v1: string;

  before(async () => {
    proxy = await new SwitchableProxy().start();
    const wikiUrl = `http://127.0.0.1:${proxy.port}`;
    s = await startServer({
      wikis: { 'wiki.test': { action_api: `${wikiUrl}/api.php`, rest_api: `${wikiUrl}/rest.php` } },
      latest_check_interval: 3600,
    });
    v1 = `${s.base}/wiki.test/v1`;
    wiki = await new WikiAdmin().login();
  });
  after(async () => {
    await s.close();
    await proxy.stop();
  });

  const count = () => {
    const metric = (s.app.metrics.wikiRequests as unknown as { hashMap: Record<string, { value: number; labels: Record<string, string> }> }).hashMap;
    return Object.values(metric).filter((m) => m.labels.domain === 'wiki.test').reduce((n, m) => n + m.value, 0);
  };
  const etagOf = (res: { headers: Record<string, unknown> }) => {
    const m = /^"(\d+)\/([0-9a-f-]{36})"$/.exec(String(res.headers.etag));
    assert.ok(m, `ETag ${res.headers.etag}`);
    return { rev: Number(m[1]), tid: m[2]! };
  };
  const save = (title: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    request(`${v1}/page/${encodeURIComponent(title)}`, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body });
  /** A fresh page on the wiki, read once through the service so its state is stored. */
  const freshPage = async (name: string, text: string) => {
    const title = `Save ${name} ${RUN}`;
    const rev = await wiki.edit(title, text);
    const read = await request(`${v1}/page/${encodeURIComponent(title.replace(/ /g, '_'))}/html`);
    assert.equal(read.status, 200);
    assert.equal(etagOf(read).rev, rev);
    return { title: title.replace(/ /g, '_'), rev, tid: etagOf(read).tid };
  };

  it('saves wikitext; the next read is the new revision, from storage, with no wiki request', async () => {
    const page = await freshPage('wikitext', 'First version.');
    const res = await save(page.title, { wikitext: 'Second version with [[a link]].', base_revid: page.rev, comment: 'through the service' });
    assert.equal(res.status, 201, res.text);
    assert.ok(res.json.rev > page.rev);
    assert.match(res.json.tid, /^[0-9a-f-]{36}$/);
    assert.equal(res.headers.location, `/wiki.test/v1/page/${encodeURIComponent(page.title)}/html/${res.json.rev}`);
    assert.equal(await wiki.latestRevid(page.title), res.json.rev);
    const [latest] = await wiki.history(page.title, 1);
    assert.equal(latest!.comment, 'through the service');

    const before = count();
    const html = await request(`${v1}/page/${encodeURIComponent(page.title)}/html`);
    assert.deepEqual(etagOf(html), { rev: res.json.rev, tid: res.json.tid });
    assert.match(html.text, /Second version/);
    const wikitext = await request(`${v1}/page/${encodeURIComponent(page.title)}/wikitext`);
    assert.equal(wikitext.text, 'Second version with [[a link]].');
    const meta = await request(`${v1}/page/${encodeURIComponent(page.title)}/rev/${res.json.rev}`);
    assert.equal(meta.json.comment, 'through the service');
    assert.equal(count(), before, 'reads after the save never touched the wiki');
  });

  it('creates a page without base_revid; a second creation is a 409', async () => {
    const title = `Save created ${RUN}`;
    const res = await save(title, { wikitext: 'Brand new page.' });
    assert.equal(res.status, 201, res.text);
    assert.equal(await wiki.latestRevid(title), res.json.rev);
    const read = await request(`${v1}/page/${encodeURIComponent(title.replace(/ /g, '_'))}/wikitext`);
    assert.equal(read.text, 'Brand new page.');
    const again = await save(title, { wikitext: 'Again.' });
    assert.equal(again.status, 409);
    assert.equal(again.json.latest_revid, res.json.rev);
    assert.equal((await wiki.history(title)).length, 1);
  });

  it('saves edited HTML with selective serialisation: only the edited paragraph changes', async () => {
    // A real corpus article, copied to a page of this run.
    const source = await wiki.wikitext(await wiki.latestRevid('BBDO'));
    const page = await freshPage('selser', source);
    const html = (await request(`${v1}/page/${encodeURIComponent(page.title)}/html`)).text;
    const paragraphs = [...html.matchAll(/<p id="(mw[\w-]+)">([^<&]{40,})/g)];
    assert.ok(paragraphs.length > 0, 'the article has a plain paragraph');
    const [whole, , text] = paragraphs[0]!;
    const edited = html.replace(whole, whole.replace(text!, `${text} An added sentence.`));
    const form = new URLSearchParams({ html: edited, tid: page.tid, base_revid: String(page.rev), comment: 'selser' }).toString();
    const res = await request(`${v1}/page/${encodeURIComponent(page.title)}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
    assert.equal(res.status, 201, res.text);
    const saved = (await wiki.wikitext(res.json.rev)).split('\n');
    const original = source.split('\n');
    assert.equal(saved.length, original.length, 'no line was added or removed');
    const changed = saved.map((line, i) => [line, original[i]]).filter(([a, b]) => a !== b);
    assert.equal(changed.length, 1, `exactly one line changed: ${JSON.stringify(changed).slice(0, 500)}`);
    assert.equal(changed[0]![0]!.replace(' An added sentence.', ''), changed[0]![1], 'the line differs by the added sentence only');
  });

  it('refuses a stale base at once (no wiki request), and an edit made on the wiki meanwhile as a 409', async () => {
    const page = await freshPage('conflict', 'Original.');
    const first = await save(page.title, { wikitext: 'Edited once.', base_revid: page.rev });
    assert.equal(first.status, 201);
    const before = count();
    const stale = await save(page.title, { wikitext: 'On the old base.', base_revid: page.rev });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.latest_revid, first.json.rev);
    assert.equal(count(), before, 'a base older than the stored latest revision never reaches the wiki');

    const outside = await wiki.edit(page.title, 'Edited directly on the wiki.');
    const late = await save(page.title, { wikitext: 'On the base the service knew.', base_revid: first.json.rev });
    assert.equal(late.status, 409, late.text);
    assert.equal(late.json.latest_revid, outside);
    assert.equal(await wiki.latestRevid(page.title), outside, 'nothing saved');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, request, sleep, startProcess, located } from '../helpers.js';
import { crashTestProcesses, etagOf, parsoidWikitext, startAgainstWiki, WikiAdmin, type AgainstWiki, type SwitchableProxy } from '../wiki.js';

const RUN = Date.now().toString(36);
const JSON_TYPE = { 'content-type': 'application/json' };

/** Saving through the service, against the real wiki (MediaWiki + Parsoid). */
describe('saving pages against the real wiki', () => {
  let env: AgainstWiki;
  let proxy: SwitchableProxy;
  let wiki: WikiAdmin;
  let v1: string;

  before(async () => {
    env = await startAgainstWiki();
    ({ proxy, wiki, v1 } = env);
  });
  after(() => env.close());

  const count = () => env.wikiRequests();
  const save = (title: string, body: Record<string, unknown>, headers: Record<string, string> = {}, from?: string) =>
    request(`${v1}/page/${encodeURIComponent(title)}`, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body, from });
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
    assert.equal(located(res), `/wiki.test/v1/page/${encodeURIComponent(page.title)}/html/${res.json.rev}`);
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

  it('stores the wikitext as the wiki keeps it after its pre-save transform, asked with the metadata (not of Parsoid)', async () => {
    const page = await freshPage('pre-save transform', 'Before.');
    const before = env.wikiRequests('parsoid-wikitext');
    const res = await save(page.title, { wikitext: 'Named {{subst:PAGENAME}} on save.   \n\n', base_revid: page.rev });
    assert.equal(res.status, 201, res.text);
    assert.equal(env.wikiRequests('parsoid-wikitext'), before, 'no wikitext request to Parsoid');
    const stored = await request(`${v1}/page/${encodeURIComponent(page.title)}/wikitext/${res.json.rev}`);
    assert.equal(stored.status, 200);
    const parsoid = await parsoidWikitext(page.title, res.json.rev);
    assert.equal(stored.headers['content-type'], parsoid.type);
    assert.equal(stored.text, parsoid.body.toString('utf8'), "Parsoid's bytes");
    assert.equal(stored.text, `Named ${page.title.replace(/_/g, ' ')} on save.`);
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

  it('lets the wiki merge an edit whose base the service still had as the latest: never a 409 for its own staleness', async () => {
    const page = await freshPage('merge', 'First paragraph.\n\nSecond paragraph.\n\nThird paragraph.');
    // Edited on the wiki: the service still serves the old revision as the latest.
    const outside = await wiki.edit(page.title, 'First paragraph.\n\nSecond paragraph.\n\nThird paragraph, edited on the wiki.');
    assert.equal(etagOf(await request(`${v1}/page/${encodeURIComponent(page.title)}/html`)).rev, page.rev, 'the service is behind');
    const res = await save(page.title, { wikitext: 'First paragraph, edited through the service.\n\nSecond paragraph.\n\nThird paragraph.', base_revid: page.rev });
    assert.equal(res.status, 201, res.text);
    assert.ok(res.json.rev > outside);
    assert.equal(await wiki.wikitext(res.json.rev), 'First paragraph, edited through the service.\n\nSecond paragraph.\n\nThird paragraph, edited on the wiki.', 'both edits kept');
    const read = await request(`${v1}/page/${encodeURIComponent(page.title)}/wikitext`);
    assert.equal(etagOf(read).rev, res.json.rev);
    assert.match(read.text, /edited on the wiki/, 'the stored revision is the merged text, not the text sent');
  });

  it('reads and saves one section, in wikitext or HTML; every other section keeps its bytes', async () => {
    const text = 'Lead  text with [[Bodmin|a link]].\n\n== One ==\n*odd  list\n*item\n\n=== One.a ===\nSub {{Nosuchtemplate | x = y }}.\n\n== Two ==\nSecond section text.\n';
    const page = await freshPage('sections', text);
    const url = `${v1}/page/${encodeURIComponent(page.title)}`;
    const one = await request(`${url}/wikitext?section=1`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.text, '== One ==\n*odd  list\n*item\n\n=== One.a ===\nSub {{Nosuchtemplate | x = y }}.', 'a section with its subsection, as the wiki cuts it');
    for (const n of [0, 1, 2, 3]) {
      assert.equal((await request(`${url}/wikitext/${page.rev}?section=${n}`)).text, await wiki.sectionWikitext(page.rev, n), `section ${n} as the wiki has it`);
    }
    const html = await request(`${url}/html?section=3`);
    assert.equal(html.status, 200);
    assert.match(html.text, /^<section[^>]*data-mw-section-id="3"[^>]*>[\s\S]*Second section text[\s\S]*<\/section>$/);
    assert.equal(etagOf(html).rev, page.rev);
    assert.equal((await request(`${url}/wikitext?section=9`)).status, 404);
    assert.equal((await request(`${url}/data-mw?section=1`)).status, 400);

    const byText = await save(page.title, { wikitext: '== Two ==\nSecond section, edited.', section: 3, base_revid: page.rev });
    assert.equal(byText.status, 201, byText.text);
    assert.equal(await wiki.wikitext(byText.json.rev), text.replace('Second section text.', 'Second section, edited.').trimEnd());

    const sectionHtml = (await request(`${url}/html?section=1`)).text;
    const edited = sectionHtml.replace('<li', '<li').replace(/(<h2[^>]*>)One/, '$1One renamed');
    assert.notEqual(edited, sectionHtml);
    const byHtml = await save(page.title, { html: edited, section: 1, base_revid: byText.json.rev, tid: byText.json.tid });
    assert.equal(byHtml.status, 201, byHtml.text);
    const saved = await wiki.wikitext(byHtml.json.rev);
    assert.equal(saved, text.replace('Second section text.', 'Second section, edited.').replace('== One ==', '== One renamed ==').trimEnd(), 'only the heading changed');
    const stale = await save(page.title, { wikitext: '== Two ==\nOn an old base.', section: 3, base_revid: page.rev });
    assert.equal(stale.status, 409, 'the conflict rules of a page');
    assert.equal((await save(page.title, { wikitext: 'x', section: 1 })).status, 400, 'a section needs its base');
  });

  it('lets exactly one of 10 concurrent saves on one base through; the wiki gets one new revision', async () => {
    const page = await freshPage('race', 'Raced page.');
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => save(page.title, { wikitext: `Racer ${i} won.`, base_revid: page.rev })));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409, 409, 409], JSON.stringify(answers.map((a) => a.json)));
    const winner = answers.find((a) => a.status === 201)!;
    const history = await wiki.history(page.title);
    assert.equal(history.length, 2, 'the base and exactly one new revision');
    assert.equal(history[0]!.revid, winner.json.rev);
    for (const loser of answers.filter((a) => a.status === 409)) assert.equal(loser.headers['content-type'], 'application/problem+json');
    // The page is free again: a save on the winner's revision goes through.
    const next = await save(page.title, { wikitext: 'After the race.', base_revid: winner.json.rev });
    assert.equal(next.status, 201, next.text);
  });

  it('saves as the caller: anonymously without credentials, as the logged-in user with their cookies', async () => {
    const page = await freshPage('users', 'Whose edit?');
    const anon = await save(page.title, { wikitext: 'An anonymous edit.', base_revid: page.rev });
    assert.equal(anon.status, 201, anon.text);
    const forged = await save(page.title, { wikitext: 'A logged-in edit.', base_revid: anon.json.rev }, { cookie: wiki.cookieHeader() });
    assert.equal(forged.status, 403, 'a cookie alone, as a web page\'s form would send it, does not edit');
    const bot = await save(page.title, { wikitext: 'A logged-in edit.', base_revid: anon.json.rev }, { cookie: wiki.cookieHeader(), 'x-csrf-token': wiki.csrfToken() });
    assert.equal(bot.status, 201, bot.text);
    // A client that is no trusted proxy (trusted_proxies: none here) names no address but its own.
    const claimed = await save(page.title, { wikitext: 'An anonymous edit claiming another address.', base_revid: bot.json.rev }, { 'x-forwarded-for': '203.0.113.7' }, '127.0.0.9');
    assert.equal(claimed.status, 201, claimed.text);
    const [third, second, first] = await wiki.history(page.title, 3);
    assert.equal(first!.user, '127.0.0.1');
    assert.equal(second!.user, 'Botuser');
    assert.equal(third!.user, '127.0.0.9', "credited to the address that connected, not the one claimed, nor the service's");
    const meta = await request(`${v1}/page/${encodeURIComponent(page.title)}/rev/${bot.json.rev}`);
    assert.equal(meta.json.user_text, 'Botuser');
  });

  it('answers a protected page with 403 and the wiki\'s code; storage stays as it was', async () => {
    const page = await freshPage('protected', 'Protected soon.');
    await wiki.protect(page.title);
    // Protecting adds a null revision.
    const protectedRev = await wiki.latestRevid(page.title);
    const res = await save(page.title, { wikitext: 'Vandalism.', base_revid: protectedRev });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.json.wiki_code, 'protectedpage');
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(await wiki.latestRevid(page.title), protectedRev);
    // The page is free again: a logged-in sysop may save.
    const sysop = await save(page.title, { wikitext: 'By a sysop.', base_revid: protectedRev }, { cookie: wiki.cookieHeader(), 'x-csrf-token': wiki.csrfToken() });
    assert.equal(sysop.status, 201, sysop.text);
  });

  it('refuses bad bodies with 4xx problems, before asking the wiki', async () => {
    const page = await freshPage('bad', 'Bad bodies.');
    const before = count();
    const other = await freshPage('other', 'Another page.');
    const expectations: [Record<string, unknown> | string, number, string][] = [
      [{ base_revid: page.rev }, 400, 'neither wikitext nor html'],
      [{ wikitext: 'x', html: '<p>x</p>', base_revid: page.rev }, 400, 'both'],
      [{ html: '<p>x</p>', tid: other.tid, base_revid: page.rev }, 400, 'a tid of another page'],
      [{ wikitext: 'x', base_revid: 'seven' }, 400, 'a base_revid that is not a number'],
      [{ wikitext: 'x', base_revid: page.rev, color: 'red' }, 400, 'an unknown field'],
      [{ html: '<p>x</p>', base_revid: page.rev, 'data-mw': 'not json' }, 400, 'data-mw that is not JSON'],
    ];
    const beforeBad = count();
    for (const [body, status, what] of expectations) {
      const res = await save(page.title, body as Record<string, unknown>);
      assert.equal(res.status, status, `${what}: ${res.text}`);
      assert.equal(res.headers['content-type'], 'application/problem+json', what);
    }
    const plain = await request(`${v1}/page/${encodeURIComponent(page.title)}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(plain.status, 415);
    assert.equal(count(), beforeBad, 'no bad body reached the wiki');
    assert.ok(count() > before);
    // A revision stored under another title may have moved here: the wiki is asked whose it is.
    const foreign = await save(page.title, { wikitext: 'x', base_revid: other.rev });
    assert.equal(foreign.status, 400, foreign.text);
    assert.equal(foreign.json.type, 'urn:problem:base-of-another-page');
    assert.equal(await wiki.latestRevid(page.title), page.rev);
  });

  it('answers 404 for a page deleted on the wiki since it was read, and saves nothing', async () => {
    const page = await freshPage('deleted', 'Deleted soon.');
    await wiki.delete(page.title);
    const res = await save(page.title, { wikitext: 'Too late.', base_revid: page.rev });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.json.type, 'urn:problem:page-deleted');
    assert.deepEqual(await wiki.history(page.title), []);
  });

  it('answers 503 while the wiki is down, saves nothing, and frees the page', async () => {
    const page = await freshPage('down', 'Before the outage.');
    proxy.down();
    try {
      const res = await save(page.title, { wikitext: 'During the outage.', base_revid: page.rev });
      assert.equal(res.status, 503, res.text);
    } finally {
      proxy.up = true;
    }
    assert.equal(etagOf(await request(`${v1}/page/${encodeURIComponent(page.title)}/html`)).rev, page.rev);
    const res = await save(page.title, { wikitext: 'After the outage.', base_revid: page.rev });
    assert.equal(res.status, 201, res.text);
  });

  it('PUT saves one property: the body is the content, If-Match its base; multipart POSTs work too', async () => {
    const page = await freshPage('put', 'Put me.');
    const url = `${v1}/page/${encodeURIComponent(page.title)}/wikitext`;
    assert.equal((await request(url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'No base.' })).status, 428);
    assert.equal((await request(url, { method: 'PUT', headers: { 'content-type': 'text/html', 'if-match': `"${page.rev}"` }, body: 'x' })).status, 415);
    const put = await request(url, { method: 'PUT', headers: { 'content-type': 'text/plain', 'if-match': `"${page.rev}/${page.tid}"` }, body: 'Put through PUT.' });
    assert.equal(put.status, 201, put.text);
    assert.equal((await request(url)).text, 'Put through PUT.');
    const form = new FormData();
    form.set('wikitext', 'Sent as multipart.');
    form.set('base_revid', String(put.json.rev));
    const multipart = await fetch(`${v1}/page/${encodeURIComponent(page.title)}`, { method: 'POST', body: form });
    assert.equal(multipart.status, 201, await multipart.clone().text());
    assert.equal((await request(url)).text, 'Sent as multipart.');
  });

  it('transforms wikitext to HTML and back; corpus pages round-trip exactly from their stored render', async () => {
    const toHtml = await request(`${v1}/transform/wikitext/to/html/Bodmin`, { method: 'POST', headers: JSON_TYPE, body: { wikitext: "''Hello'' [[World]]", body_only: true } });
    assert.equal(toHtml.status, 200, toHtml.text);
    assert.match(String(toHtml.headers['content-type']), /^text\/html/);
    assert.doesNotMatch(toHtml.text, /<body/);
    assert.match(toHtml.text, /<i[^>]*>Hello<\/i>/);
    const back = await request(`${v1}/transform/html/to/wikitext`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ html: toHtml.text }).toString() });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.text.trim(), "''Hello'' [[World]]");
    for (const title of ['BBDO', 'Bodmin']) {
      const html = await request(`${v1}/page/${title}/html`);
      const { rev } = etagOf(html);
      const original = await wiki.wikitext(rev);
      const wt = await request(`${v1}/transform/html/to/wikitext/${title}/${rev}`, { method: 'POST', headers: JSON_TYPE, body: { html: html.text } });
      assert.equal(wt.status, 200, wt.text);
      assert.equal(wt.text, original, `${title} round-trips`);
    }
    assert.equal((await request(`${v1}/transform/html/to/wikitext/BBDO/1`, { method: 'POST', headers: JSON_TYPE, body: { html: '<p>x</p>' } })).status, 400);
    assert.equal((await request(`${v1}/transform/wikitext/to/html`, { method: 'POST', headers: JSON_TYPE, body: {} })).status, 400);
  });
});

describe('a save survives kill -9 between the wiki\'s answer and its dependents (two real processes)', () => {
  const domain = 'save.example';
  const processes = crashTestProcesses(domain);
  const config = processes.config;

  const wikiRequests = async () => {
    const text = (await request(`${processes.base()}/metrics`)).text;
    // The page's facts for its Enterprise record are asked in the background, batched over seconds:
    // they are not content, so they are not counted here.
    return [...text.matchAll(/^wiki_requests_total\{[^}]*domain="save\.example"[^}]*\} (\d+)/gm)]
      .filter((m) => !m[0].includes('endpoint="action-facts"'))
      .reduce((n, m) => n + Number(m[1]), 0);
  };

  for (const kill of ['after-store', 'after-primary']) {
    it(`loses no edit when the saving process dies ${kill.replace('-', ' ')}: another process records it, and serves it from storage`, async () => {
      const base = processes.base();
      const wiki = processes.wiki();
      const title = `Save crash ${kill} ${RUN}`.replace(/ /g, '_');
      const rev0 = await wiki.edit(title, 'Before the crash.');
      assert.equal((await request(`${base}/${domain}/v1/page/${title}/html`)).status, 200);
      const victim = startProcess(config(kill));
      const port = await victim.port;
      const answer = await request(`http://127.0.0.1:${port}/${domain}/v1/page/${title}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: 'Saved by a process that died.', base_revid: rev0 },
      }).catch(() => undefined);
      assert.equal(answer, undefined, 'the saving process died before answering');
      const saved = await wiki.latestRevid(title);
      assert.ok(saved > rev0, 'the wiki accepted the edit');
      // The survivor sees the dead process's heartbeat lapse (1 s) and finishes its transaction:
      // the page is freed and the revision gets its render. Nothing here asks for content meanwhile.
      const deadline = Date.now() + 15_000;
      let recorded: { tid?: string | null } = {};
      let lock: unknown = 'held';
      while (Date.now() < deadline) {
        recorded = (await request(`${base}/${domain}/v1/revision/${saved}`)).json ?? {};
        const locks = await request(`${base}/${domain}/sys/table/page_save_locks/`, { headers: admin, body: { attributes: { title } } });
        lock = locks.json.items[0]?.lock ?? null;
        if (recorded.tid && lock === null) break;
        await sleep(200);
      }
      assert.match(String(recorded.tid), /^[0-9a-f-]{36}$/, 'the revision was recorded with its render');
      assert.equal(lock, null, 'the page was freed');
      const latest = await request(`${base}/${domain}/v1/page/${title}/wikitext`);
      assert.equal(latest.headers.etag, `"${saved}/${recorded.tid}"`);
      assert.equal(latest.text, 'Saved by a process that died.');
      const before = await wikiRequests();
      for (const prop of ['html', 'wikitext', 'data-parsoid']) assert.equal((await request(`${base}/${domain}/v1/page/${title}/${prop}`)).status, 200);
      assert.equal(await wikiRequests(), before, 'served from storage');
      // The page is free: the next save goes through at once.
      const next = await request(`${base}/${domain}/v1/page/${title}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { wikitext: 'After.', base_revid: saved } });
      assert.equal(next.status, 201, next.text);
    });
  }
});

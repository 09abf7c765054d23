import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StorageConfig } from '../src/config.js';
import { located, request } from './helpers.js';
import { FAST_FOLLOWER, startAgainstWiki, waitFor, WikiAdmin, type AgainstWiki } from './wiki.js';

const RUN = Date.now().toString(36);
const JSON_TYPE = { 'content-type': 'application/json' };
const HTML_2_ACCEPT = 'text/html; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/HTML/2.6.0"';

interface Session {
  /** Headers that make a request this user's: their cookies and CSRF token. */
  headers: Record<string, string>;
}
const as = (wiki: WikiAdmin): Session => ({ headers: { cookie: wiki.cookieHeader(), 'x-csrf-token': wiki.csrfToken() } });
/** No session: an anonymous caller. */
const ANON: Session = { headers: {} };

/** Drafts against the real wiki, on one backend: CAS per branch, promote with merges, access, moves. */
export function branchSuite(name: string, storage: () => StorageConfig): void {
  describe(`branches (drafts) of pages on the real wiki: ${name}`, () => {
    let env: AgainstWiki;
    let v1: string;
    let bot: Session;
    let reviewer: Session;
    let wiki: WikiAdmin;
    before(async () => {
      env = await startAgainstWiki({ storage: storage(), ...FAST_FOLLOWER, branch_sweep_interval: 0.3 });
      ({ v1, wiki } = env);
      bot = as(wiki);
      reviewer = as(await new WikiAdmin().login('Reviewer'));
    });
    after(() => env.close());

    const page = async (label: string, text: string) => {
      const title = `Branch ${label} ${name} ${RUN}`.replace(/ /g, '_');
      return { title, rev: await wiki.edit(title, text) };
    };
    const branches = (title: string) => `${v1}/page/${encodeURIComponent(title)}/branches/`;
    const create = (title: string, body: Record<string, unknown>, who: Session = bot) =>
      request(branches(title), { method: 'POST', headers: { ...JSON_TYPE, ...who.headers }, body });
    const update = (title: string, branch: string, etag: string, body: Record<string, unknown>, who: Session = bot) =>
      request(`${branches(title)}${branch}`, { method: 'PUT', headers: { ...JSON_TYPE, 'if-match': etag, ...who.headers }, body });
    const get = (url: string, who: Session = bot) => request(url, { headers: { ...who.headers } });
    const promote = (title: string, branch: string, who: Session = bot, headers: Record<string, string> = {}) =>
      request(`${branches(title)}${branch}/promote`, { method: 'POST', headers: { ...JSON_TYPE, ...who.headers, ...headers }, body: { comment: 'promoted draft' } });

    it('create → update twice → a stale update is 412 → promote: the wiki has the text as a new revision, the branch is merged', async () => {
      const { title, rev } = await page('cycle', 'Line one.\n\nLine two.');
      const made = await create(title, { wikitext: 'Line one, drafted.\n\nLine two.', base_revid: rev, comment: 'first draft' });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.json.base_revid, rev);
      assert.deepEqual(made.json.others, []);
      assert.equal(made.headers.etag, `"${made.json.tid}"`);
      assert.equal(located(made), `/wiki.test/v1/page/${encodeURIComponent(title)}/branches/${made.json.branch}`);
      const branch = made.json.branch as string;
      const second = await update(title, branch, made.headers.etag as string, { wikitext: 'Line one, drafted again.\n\nLine two.' });
      assert.equal(second.status, 200, second.text);
      const third = await update(title, branch, second.headers.etag as string, { wikitext: 'Line one, final draft.\n\nLine two.' });
      assert.equal(third.status, 200, third.text);
      const stale = await update(title, branch, second.headers.etag as string, { wikitext: 'Lost.' });
      assert.equal(stale.status, 412, stale.text);
      assert.equal(stale.json.latest_tid, third.json.latest_tid);
      assert.equal((await update(title, branch, 'W/"x"', { wikitext: 'x' })).status, 400, 'a malformed If-Match');
      assert.equal((await request(`${branches(title)}${branch}`, { method: 'PUT', headers: { ...JSON_TYPE, ...bot.headers }, body: { wikitext: 'x' } })).status, 428);

      const text = await get(`${branches(title)}${branch}/wikitext`);
      assert.equal(text.text, 'Line one, final draft.\n\nLine two.');
      assert.equal(text.headers.etag, third.headers.etag);
      assert.match(String(text.headers['cache-control']), /private/);
      assert.equal((await get(`${branches(title)}${branch}/wikitext/${made.json.tid}`)).text, 'Line one, drafted.\n\nLine two.');
      const html = await get(`${branches(title)}${branch}/html`);
      assert.equal(html.status, 200, html.text);
      assert.match(html.text, /Line one, final draft\./);
      const history = await get(`${branches(title)}${branch}/history?limit=2`);
      assert.equal(history.json.items.length, 2);
      assert.ok(history.json.next, 'paged');
      const rest = await get(`${branches(title)}${branch}/history?limit=2&next=${encodeURIComponent(history.json.next)}`);
      assert.deepEqual([...history.json.items, ...rest.json.items].map((v: { tid: string }) => v.tid), [third.json.latest_tid, second.json.latest_tid, made.json.tid]);
      const listed = await get(branches(title));
      assert.deepEqual(listed.json.items.map((b: { branch: string }) => b.branch), [branch]);

      const done = await promote(title, branch);
      assert.equal(done.status, 201, done.text);
      assert.equal(await wiki.latestRevid(title), done.json.rev);
      assert.equal(await wiki.wikitext(done.json.rev), 'Line one, final draft.\n\nLine two.');
      assert.equal((await wiki.history(title, 1))[0]!.comment, 'promoted draft');
      const meta = await get(`${branches(title)}${branch}`);
      assert.equal(meta.json.state, 'merged');
      assert.equal(meta.json.merged_rev, done.json.rev);
      assert.deepEqual((await get(branches(title))).json.items, [], 'a merged branch leaves the page list');
      assert.equal((await update(title, branch, meta.headers.etag as string, { wikitext: 'after' })).status, 409);
      // The page's own read is the promoted revision, from storage.
      assert.equal((await request(`${v1}/page/${encodeURIComponent(title)}/wikitext`)).text, 'Line one, final draft.\n\nLine two.');
    });

    it('keeps edited HTML exactly as sent, turns it into wikitext selectively (untouched text keeps its bytes), and promotes that', async () => {
      const original = "Intro with  '''bold'''   spacing.\n\n== Section ==\nSecond  paragraph [[Main Page|main]]   kept.";
      const { title, rev } = await page('html', original);
      const read = await request(`${v1}/page/${encodeURIComponent(title)}/html`, { headers: { accept: HTML_2_ACCEPT } });
      assert.equal(read.status, 200, read.text);
      const tid = /"\d+\/([0-9a-f-]+)"/.exec(String(read.headers.etag))![1]!;
      const edited = read.text.replace('Intro with', 'Intro, edited, with');
      assert.notEqual(edited, read.text);
      const made = await create(title, { html: edited, tid, base_revid: rev });
      assert.equal(made.status, 201, made.text);
      const back = await get(`${branches(title)}${made.json.branch}/html`);
      assert.equal(back.text, edited, 'the editor gets back exactly what they edited');
      const wikitext = (await get(`${branches(title)}${made.json.branch}/wikitext`)).text;
      assert.match(wikitext, /^Intro, edited, with/);
      assert.ok(wikitext.endsWith('\n\n== Section ==\nSecond  paragraph [[Main Page|main]]   kept.'), wikitext);
      const done = await promote(title, made.json.branch);
      assert.equal(done.status, 201, done.text);
      assert.equal(await wiki.wikitext(done.json.rev), wikitext);
      // A version made from wikitext is rendered by Parsoid, in the 2.x form rest_v1 clients edit.
      const fromText = await create(title, { wikitext: "A ''draft''.", base_revid: done.json.rev });
      const html = await get(`${branches(title)}${fromText.json.branch}/html`);
      assert.match(String(html.headers['content-type']), /Specs\/HTML\/2\./);
      assert.match(html.text, /<i[^>]*>draft<\/i>/);
    });

    it('promotes over a wiki edit to another line (merged), refuses one to the same line (409 with hunks, nothing saved); rebase the same way', async () => {
      const { title, rev } = await page('merge', 'Alpha.\n\nBeta.\n\nGamma.');
      const made = await create(title, { wikitext: 'Alpha, drafted.\n\nBeta.\n\nGamma.', base_revid: rev });
      const other = await wiki.edit(title, 'Alpha.\n\nBeta.\n\nGamma, edited on the wiki.');
      const done = await promote(title, made.json.branch);
      assert.equal(done.status, 201, done.text);
      assert.equal(await wiki.wikitext(done.json.rev), 'Alpha, drafted.\n\nBeta.\n\nGamma, edited on the wiki.');
      assert.ok(done.json.rev > other);

      const clash = await create(title, { wikitext: 'Alpha, drafted.\n\nBeta from the draft.\n\nGamma, edited on the wiki.', base_revid: done.json.rev });
      const wikiRev = await wiki.edit(title, 'Alpha, drafted.\n\nBeta from the wiki.\n\nGamma, edited on the wiki.');
      const refused = await promote(title, clash.json.branch);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.json.type, 'urn:problem:merge-conflict');
      assert.deepEqual(refused.json.conflicts, [{ base_line: 3, base: ['Beta.'], ours: ['Beta from the draft.'], theirs: ['Beta from the wiki.'] }]);
      assert.equal(await wiki.latestRevid(title), wikiRev, 'nothing saved');
      assert.equal((await get(`${branches(title)}${clash.json.branch}`)).json.state, 'open');
      const rebased = await request(`${branches(title)}${clash.json.branch}/rebase`, { method: 'POST', headers: { ...JSON_TYPE, ...bot.headers } });
      assert.equal(rebased.status, 409);

      const clean = await create(title, { wikitext: 'Alpha, drafted.\n\nBeta from the wiki.\n\nGamma, edited on the wiki.\n\nDelta from the draft.', base_revid: done.json.rev });
      const moved = await request(`${branches(title)}${clean.json.branch}/rebase`, { method: 'POST', headers: { ...JSON_TYPE, ...bot.headers } });
      assert.equal(moved.status, 200, moved.text);
      assert.equal(moved.json.base_revid, wikiRev);
      assert.equal((await get(`${branches(title)}${clean.json.branch}/wikitext`)).text, 'Alpha, drafted.\n\nBeta from the wiki.\n\nGamma, edited on the wiki.\n\nDelta from the draft.');
    });

    it('lets exactly one of 20 concurrent updates of one version win', async () => {
      const { title, rev } = await page('race', 'Race.');
      const made = await create(title, { wikitext: 'Race, drafted.', base_revid: rev });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => update(title, made.json.branch, made.headers.etag as string, { wikitext: `Racer ${i}.` })));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, ...Array(19).fill(412)]);
      const winner = results.findIndex((r) => r.status === 200);
      assert.equal((await get(`${branches(title)}${made.json.branch}/wikitext`)).text, `Racer ${winner}.`);
      const history = await get(`${branches(title)}${made.json.branch}/history`);
      assert.equal(history.json.items.length, 2, 'losers wrote no version');
      // Abandoned: out of the page's list, no more versions, its content kept until it expires.
      const abandoned = await request(`${branches(title)}${made.json.branch}`, { method: 'DELETE', headers: bot.headers });
      assert.equal(abandoned.status, 200, abandoned.text);
      assert.equal(abandoned.json.state, 'abandoned');
      assert.ok(!(await get(branches(title))).json.items.some((b: { branch: string }) => b.branch === made.json.branch));
      assert.equal((await get(`${branches(title)}${made.json.branch}/wikitext`)).text, `Racer ${winner}.`);
      assert.equal((await update(title, made.json.branch, abandoned.headers.etag as string, { wikitext: 'Too late.' })).status, 409);
    });

    it("keeps a user's branch from others (404), shares it to read (403 on change) or write; an anonymous branch is reachable only by its id", async () => {
      const { title, rev } = await page('private', 'Private.');
      const mine = await create(title, { wikitext: 'My draft.', base_revid: rev });
      const url = `${branches(title)}${mine.json.branch}`;
      assert.equal((await get(url, reviewer)).status, 404);
      assert.equal((await get(`${url}/wikitext`, reviewer)).status, 404);
      assert.equal((await get(`${url}/wikitext`, ANON)).status, 404, 'nor anonymous readers');
      assert.deepEqual((await get(branches(title), reviewer)).json.items, []);
      assert.equal((await create(title, { wikitext: 'Their draft.', base_revid: rev }, reviewer)).json.others.length, 0, "another's private branch is not offered");
      const share = (user: string, access: string) => request(`${url}/shares/${user}`, { method: 'PUT', headers: { ...JSON_TYPE, ...bot.headers }, body: { access } });
      assert.equal((await share('Reviewer', 'read')).status, 200);
      assert.equal((await get(`${url}/wikitext`, reviewer)).text, 'My draft.');
      assert.equal((await update(title, mine.json.branch, mine.headers.etag as string, { wikitext: 'Reviewed.' }, reviewer)).status, 403);
      assert.equal((await share('Reviewer', 'write')).status, 200);
      assert.equal((await update(title, mine.json.branch, mine.headers.etag as string, { wikitext: 'Reviewed.' }, reviewer)).status, 200);
      assert.ok((await get(`${v1}/branches/`, reviewer)).json.shared.some((b: { branch: string }) => b.branch === mine.json.branch), 'listed as shared with them');
      // A change asked with a cookie alone (as a web page could make a browser send) is refused.
      const forged = await request(url, { method: 'PUT', headers: { ...JSON_TYPE, cookie: reviewer.headers.cookie!, 'if-match': '"x"' }, body: { wikitext: 'x' } });
      assert.equal(forged.status, 403);
      const badToken = await request(url, { method: 'DELETE', headers: { cookie: reviewer.headers.cookie!, 'x-csrf-token': 'not+the+token\\' } });
      assert.equal(badToken.status, 403);

      const anon = await create(title, { wikitext: 'Anonymous draft.', base_revid: rev }, ANON);
      assert.equal(anon.status, 201, anon.text);
      assert.equal((await get(`${branches(title)}${anon.json.branch}/wikitext`, ANON)).text, 'Anonymous draft.');
      assert.equal((await get(`${branches(title)}${anon.json.branch}/wikitext`, reviewer)).text, 'Anonymous draft.', 'whoever has the id');
      assert.ok(!(await get(branches(title), ANON)).json.items.length, 'never listed');
      assert.ok(!(await get(branches(title))).json.items.some((b: { branch: string }) => b.branch === anon.json.branch));
      assert.equal((await get(`${v1}/branches/`, ANON)).status, 401);
      const mineListed = await get(`${v1}/branches/`);
      assert.ok(mineListed.json.items.some((b: { branch: string }) => b.branch === mine.json.branch));
      assert.equal((await get(`${branches(title)}00000000-0000-1000-8000-000000000000`)).status, 404);
      assert.equal((await get(`${branches(title)}not-a-branch`)).status, 400);
    });

    it("sends a draft read again to its reader alone, and never after a change, an unshare or a version's replacement", async () => {
      const { title, rev } = await page('again', 'Again.');
      const mine = await create(title, { wikitext: 'Read often.', base_revid: rev });
      const url = `${branches(title)}${mine.json.branch}`;
      const storageReads = async () => [...(await request(`${env.s.base}/metrics`)).text.matchAll(/^storage_operation_seconds_count\{operation="get",table="page_branches"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
      for (let i = 0; i < 3; i++) assert.equal((await get(`${url}/wikitext`)).text, 'Read often.');
      // Only SQLite says cheaply whether anything was written since (storage/answer-validity.ts);
      // a background job's write (the follower's lease and its work on the page just edited, the
      // sweeps) makes the next read take the full path, so ten reads may meet a few such writes on
      // a slow machine. Without the reuse every read reads the branch: ten of ten in every round.
      const rounds: number[] = [];
      for (let round = 0; round < (name === 'sqlite' ? 5 : 1) && !(rounds.at(-1)! <= 2); round++) {
        const reads = await storageReads();
        for (let i = 0; i < 10; i++) assert.equal((await get(`${url}/wikitext`)).text, 'Read often.');
        rounds.push((await storageReads()) - reads);
      }
      if (name === 'sqlite') assert.ok(rounds.at(-1)! <= 2, `ten reads sent again with at most two reads of the branch, in one of five rounds: ${rounds.join(', ')}`);
      assert.ok((await storageReads()) > 0, 'the reads counted are the branch\'s');
      for (let i = 0; i < 3; i++) {
        assert.equal((await get(`${url}/wikitext`, reviewer)).status, 404, "not to another user's session");
        assert.equal((await get(`${url}/wikitext`, ANON)).status, 404, 'nor to a caller without one');
      }
      const share = (access: string | null) => request(`${url}/shares/Reviewer`, access ? { method: 'PUT', headers: { ...JSON_TYPE, ...bot.headers }, body: { access } } : { method: 'DELETE', headers: { ...bot.headers } });
      assert.equal((await share('read')).status, 200);
      for (let i = 0; i < 3; i++) assert.equal((await get(`${url}/wikitext`, reviewer)).text, 'Read often.', 'shared: theirs to read');
      assert.equal((await share(null)).status, 200);
      assert.equal((await get(`${url}/wikitext`, reviewer)).status, 404, 'unshared: at once');
      const next = await update(title, mine.json.branch, mine.headers.etag as string, { wikitext: 'Changed.' });
      assert.equal(next.status, 200, next.text);
      assert.equal((await get(`${url}/wikitext`)).text, 'Changed.', 'the new version at once');
    });

    it('refuses bodies over the size limit (413) and bad bodies (400), writing nothing', async () => {
      const { title, rev } = await page('bad', 'Bad.');
      assert.equal((await create(title, { base_revid: rev })).status, 400);
      assert.equal((await create(title, { wikitext: 'x', html: '<p>x</p>' })).status, 400);
      const big = await create(title, { wikitext: 'x'.repeat(env.s.app.config.max_body_bytes + 10), base_revid: rev });
      assert.equal(big.status, 413);
      assert.deepEqual((await get(branches(title))).json.items, []);
    });

    it('serves branches while the wiki is down: anonymous ones and callers it already knows; an unknown session is a 503, never a 500', async () => {
      const { title, rev } = await page('outage', 'Before the outage.');
      const anon = await create(title, { wikitext: 'Anonymous, before.', base_revid: rev }, ANON);
      const mine = await create(title, { wikitext: 'Mine, before.', base_revid: rev });
      assert.equal((await get(`${branches(title)}${mine.json.branch}`)).status, 200, 'the caller is known');
      env.proxy.down();
      try {
        assert.equal((await get(`${branches(title)}${anon.json.branch}/wikitext`, ANON)).text, 'Anonymous, before.');
        const during = await update(title, anon.json.branch, anon.headers.etag as string, { wikitext: 'Anonymous, during.' }, ANON);
        assert.equal(during.status, 200, during.text);
        assert.equal((await get(`${branches(title)}${mine.json.branch}/wikitext`)).text, 'Mine, before.', 'an identity asked of the wiki a moment ago');
        const stranger = await get(`${branches(title)}${mine.json.branch}`, { headers: { cookie: 'my_wiki_session=not-known-yet' } });
        assert.equal(stranger.status, 503, stranger.text);
        assert.match(String(stranger.headers['content-type']), /problem\+json/);
      } finally {
        env.proxy.up = true;
        // The tests after this one need the wiki: wait until the service's probe finds it again.
        await waitFor('the wiki reachable again', 30_000, async () => ((await request(`${env.s.base}/_health`)).json?.wikis?.['wiki.test']?.circuit === 'closed' ? true : undefined));
      }
    });

    it('refuses a base revision the wiki does not have, and answers a version edited with data-mw apart in 2.x on request', async () => {
      const { title, rev } = await page('bases', 'Bases.');
      const unknown = await create(title, { wikitext: 'x', base_revid: 987654321 });
      assert.equal(unknown.status, 404, unknown.text);
      const read = await request(`${v1}/page/${encodeURIComponent(title)}/html`);
      const dataMw = await request(`${v1}/page/${encodeURIComponent(title)}/data-mw`);
      const tid = /"\d+\/([0-9a-f-]+)"/.exec(String(read.headers.etag))![1]!;
      const made = await create(title, { html: read.text.replace('Bases.', 'Bases, drafted.'), 'data-mw': dataMw.json, tid, base_revid: rev });
      assert.equal(made.status, 201, made.text);
      assert.equal((await get(`${branches(title)}${made.json.branch}/wikitext`)).text, 'Bases, drafted.');
      const two = await request(`${branches(title)}${made.json.branch}/html`, { headers: { ...bot.headers, accept: HTML_2_ACCEPT } });
      assert.match(String(two.headers['content-type']), /Specs\/HTML\/2\./);
      assert.match(two.text, /Bases, drafted\./);
    });

    it('moves open branches with their page; the old URLs redirect; a promote saves to the new title', async () => {
      const { title, rev } = await page('moving', 'Before the move.');
      const made = await create(title, { wikitext: 'Drafted before the move.', base_revid: rev });
      const to = `${title}_moved`;
      await wiki.move(title, to);
      const meta = await waitFor('the branch moved', 20_000, async () => {
        const res = await get(`${branches(to)}${made.json.branch}`);
        return res.status === 200 ? res : undefined;
      });
      assert.equal(meta.json.page, to);
      const old = await get(`${branches(title)}${made.json.branch}/wikitext`);
      assert.equal(old.status, 301);
      assert.equal(located(old), `/wiki.test/v1/page/${encodeURIComponent(to)}/branches/${made.json.branch}/wikitext`);
      assert.deepEqual((await get(branches(to))).json.items.map((b: { branch: string }) => b.branch), [made.json.branch]);
      const done = await promote(to, made.json.branch);
      assert.equal(done.status, 201, done.text);
      assert.equal(done.json.title, to);
      assert.equal(await wiki.wikitext(await wiki.latestRevid(to)), 'Drafted before the move.');
    });
  });
}


import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { branchSuite } from '../branch-suite.js';
import { admin, BACKENDS, located, request, sleep, startProcess, type TestServer } from '../helpers.js';
import { crashTestProcesses, FAST_FOLLOWER, startAgainstWiki, waitFor, WIKI_URL, WikiAdmin, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);
const JSON_TYPE = { 'content-type': 'application/json' };

for (const backend of BACKENDS) branchSuite(backend.name, backend.storage);

describe('branches past their TTL expire, and the sweep reads only the expiry index', () => {
  let s: TestServer;
  let env: AgainstWiki;
  before(async () => {
    env = await startAgainstWiki({ branch_ttl: 2, branch_sweep_interval: 0.3 });
    s = env.s;
  });
  after(() => env.close());
  const metric = async (pattern: RegExp) => Number(pattern.exec((await request(`${s.base}/metrics`)).text)?.[1] ?? 0);

  it('a branch not updated for branch_ttl disappears (404, unlisted), counted, with no read of the branch tables beyond it', async () => {
    const title = `Branch expiring ${RUN}`;
    const rev = await env.wiki.edit(title, 'Expiring.');
    const made = await request(`${env.v1}/page/${encodeURIComponent(title)}/branches/`, { method: 'POST', headers: JSON_TYPE, body: { wikitext: 'Soon gone.', base_revid: rev } });
    assert.equal(made.status, 201, made.text);
    const url = `${env.v1}/page/${encodeURIComponent(title)}/branches/${made.json.branch}`;
    assert.equal((await request(url)).status, 200);
    // The owner's view of what expires within a week (the notification the design asks for).
    const session = { cookie: env.wiki.cookieHeader(), 'x-csrf-token': env.wiki.csrfToken() };
    const owned = await request(`${env.v1}/page/${encodeURIComponent(title)}/branches/`, { method: 'POST', headers: { ...JSON_TYPE, ...session }, body: { wikitext: 'Mine, soon gone.', base_revid: rev } });
    const expiring = await request(`${env.v1}/branches/?expiring=week`, { headers: session });
    assert.ok(expiring.json.items.some((b: { branch: string; expires: string }) => b.branch === owned.json.branch && Date.parse(b.expires) <= Date.now() + 3000), expiring.text);
    assert.ok((await metric(/^branches_expiring\{domain="wiki\.test"\} (\d+)/m)) >= 0);
    await waitFor('the branch expired and was swept', 15_000, async () => ((await metric(/^branches_expired_total\{domain="wiki\.test"\} (\d+)/m)) >= 1 ? true : undefined));
    assert.equal((await request(url)).status, 404);
    await waitFor('both swept', 10_000, async () => ((await metric(/^branches_expired_total\{domain="wiki\.test"\} (\d+)/m)) >= 2 ? true : undefined));
    assert.ok(!(await request(`${env.v1}/branches/`, { headers: session })).json.items.some((b: { branch: string }) => b.branch === owned.json.branch), "gone from the owner's list");
    // What the sweep left: no expiry entry, no branch rows (engines without native TTL included).
    const rows = await request(`${s.base}/wiki.test/sys/table/page_branches/_query`, { method: 'POST', headers: { ...admin, ...JSON_TYPE }, body: { attributes: { branch: made.json.branch } } });
    assert.deepEqual(rows.json.items, []);
    // The sweep reads the expiry index's day partitions, never the branch table as a whole: its
    // reads of page_branches are one per expiring entry, however many branches are stored.
    const reads = () => metric(/^storage_operation_seconds_count\{operation="get",table="page_branches"\} (\d+)/m);
    const before = await reads();
    await sleep(1200);
    assert.equal(await reads(), before, 'idle sweeps read no branch');
  });
});

describe('a promote survives kill -9 in its transaction (two real processes)', () => {
  const domain = 'branch.example';
  const processes = crashTestProcesses(domain);
  const config = processes.config;

  it('the wiki edit is made once and the branch marked merged once, by the process that finishes the transaction', async () => {
    const base = processes.base();
    const wiki = processes.wiki();
    const title = `Branch crash ${RUN}`.replace(/ /g, '_');
    const rev0 = await wiki.edit(title, 'Before the crash.');
    const made = await request(`${base}/${domain}/v1/page/${title}/branches/`, { method: 'POST', headers: JSON_TYPE, body: { wikitext: 'Promoted by a process that died.', base_revid: rev0 } });
    assert.equal(made.status, 201, made.text);
    const victim = startProcess(config('after-dependent'));
    const port = await victim.port;
    const answer = await request(`http://127.0.0.1:${port}/${domain}/v1/page/${title}/branches/${made.json.branch}/promote`, { method: 'POST', headers: JSON_TYPE }).catch(() => undefined);
    assert.equal(answer, undefined, 'the promoting process died before answering');
    const saved = await wiki.latestRevid(title);
    assert.ok(saved > rev0, 'the wiki has the edit');
    const meta = await waitFor('the branch marked merged by the survivor', 20_000, async () => {
      const res = await request(`${base}/${domain}/v1/page/${title}/branches/${made.json.branch}`);
      return res.json?.state === 'merged' ? res : undefined;
    });
    assert.equal(meta.json.merged_rev, saved);
    // Promoted again (a client retrying): nothing more reaches the wiki as an edit.
    assert.equal((await request(`${base}/${domain}/v1/page/${title}/branches/${made.json.branch}/promote`, { method: 'POST', headers: JSON_TYPE })).status, 409);
    const history = await wiki.history(title, 10);
    assert.equal(history.filter((h) => h.revid > rev0).length, 1, 'one edit');
  });
});

describe("changes of drafts counted against the wiki's own edit rate limits", () => {
  let env: AgainstWiki;
  before(async () => {
    // The test speaks as a front on 127.0.0.1 that names its clients (X-Forwarded-For).
    env = await startAgainstWiki({ ...FAST_FOLLOWER, trusted_proxies: ['127.0.0.1'] });
  });
  after(() => env.close());

  it("keeps a user's branch listed, and moves every branch with its page, past a thousand anonymous branches of it", async () => {
    const title = `Branch crowd ${RUN}`;
    const rev = await env.wiki.edit(title, 'Crowded.');
    const url = (t: string) => `${env.v1}/page/${encodeURIComponent(t)}/branches/`;
    const session = { cookie: env.wiki.cookieHeader(), 'x-csrf-token': env.wiki.csrfToken() };
    const start = (headers: Record<string, string>, text: string) => request(url(title), { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body: { wikitext: text, base_revid: rev } });
    const own = await start(session, 'Mine.');
    assert.equal(own.status, 201, own.text);
    const anonymous: string[] = [];
    for (let i = 0; i < 1005; i += 25) {
      const made = await Promise.all(Array.from({ length: 25 }, (_, j) => start({}, `Anonymous ${i + j}.`)));
      for (const m of made) {
        assert.equal(m.status, 201, m.text);
        anonymous.push(m.json.branch);
      }
    }
    // Read newest first, a page's list of a thousand would end before the user's own.
    const listed = await request(url(title), { headers: session });
    assert.deepEqual(listed.json.items.map((b: { branch: string }) => b.branch), [own.json.branch]);
    const to = `${title} moved`;
    await env.wiki.move(title, to);
    const meta = (branch: string, headers: Record<string, string> = {}) => request(`${url(to)}${branch}`, { headers });
    await waitFor('the oldest anonymous branch moved', 60_000, async () => ((await meta(anonymous[0]!)).status === 200 ? true : undefined));
    assert.equal((await meta(anonymous[anonymous.length - 1]!)).json.page, to.replace(/ /g, '_'));
    assert.equal((await meta(own.json.branch, session)).status, 200);
    // Asked under another title, the branch redirects to the same part of it under its page, even
    // where that title spells the branch's name.
    const id = own.json.branch as string;
    for (const other of [title.replace(/ /g, '_'), `${id[0]!.toUpperCase()}${id.slice(1)}`]) {
      const moved = await request(`${url(other)}${own.json.branch}/wikitext`, { headers: session });
      assert.equal(moved.status, 301, moved.text);
      assert.equal(located(moved), `/wiki.test/v1/page/${encodeURIComponent(to.replace(/ /g, '_'))}/branches/${own.json.branch}/wikitext`);
    }
  });

  it('refuses changes of drafts to a user or an address the wiki blocked from editing, as the wiki refuses their edits', async () => {
    const blocked = await new WikiAdmin().login('Blockeduser');
    const session = { cookie: blocked.cookieHeader(), 'x-csrf-token': blocked.csrfToken() };
    const title = `Branch blocked ${RUN}`;
    const rev = await env.wiki.edit(title, 'Open to editors.');
    // The wiki's own answer to their edit, for comparison.
    const own = await (await fetch(`${WIKI_URL}/api.php`, {
      method: 'POST', headers: { cookie: blocked.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'edit', title, text: 'Blocked edit.', token: blocked.csrfToken(), format: 'json', formatversion: '2' }).toString(),
    })).json() as { error?: { code: string } };
    assert.equal(own.error?.code, 'blocked');
    const made = await request(`${env.v1}/page/${encodeURIComponent(title)}/branches/`, { method: 'POST', headers: { ...JSON_TYPE, ...session }, body: { wikitext: 'Drafted anyway.', base_revid: rev } });
    assert.equal(made.status, 403, made.text);
    assert.equal(made.json.type, 'urn:problem:blocked');
    assert.equal(made.json.wiki_code, 'blocked');
    // An address the wiki blocked (scripts/wiki.sh) is blocked here too for anonymous drafts; the one beside it is not.
    const anonymous = (address: string) => request(`${env.v1}/page/${encodeURIComponent(title)}/branches/`, { method: 'POST', headers: { ...JSON_TYPE, 'x-forwarded-for': address }, body: { wikitext: 'Anonymous draft.', base_revid: rev } });
    const fromBlocked = await anonymous('203.0.113.77');
    assert.equal(fromBlocked.status, 403, fromBlocked.text);
    assert.equal(fromBlocked.json.type, 'urn:problem:blocked');
    assert.equal((await anonymous('203.0.113.78')).status, 201);
    // Reading is not a change: their (empty) list still answers.
    assert.equal((await request(`${env.v1}/branches/`, { headers: session })).status, 200);
    // Another user's change is not refused.
    const open = await request(`${env.v1}/page/${encodeURIComponent(title)}/branches/`, { method: 'POST', headers: { ...JSON_TYPE, cookie: env.wiki.cookieHeader(), 'x-csrf-token': env.wiki.csrfToken() }, body: { wikitext: 'Drafted.', base_revid: rev } });
    assert.equal(open.status, 201, open.text);
  });

  it("asks the wiki of at most 61 made-up sessions an address sends in a minute, then refuses its new ones with 429, not its known ones", async () => {
    const address = '198.51.100.99';
    const from = (cookie: string) => request(`${env.v1}/branches/`, { headers: { cookie, 'x-forwarded-for': address } });
    const real = env.wiki.cookieHeader();
    assert.equal((await from(real)).status, 200, 'a real session, known before');
    // The count is a sliding window over whole minutes: a burst that crossed into the next minute
    // would find the last minute's count already weighing less, and one more session let through
    // a second later. Begun with 20 s of the minute left at least, the burst stays within it.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 20_000) await sleep(left + 100);
    const statuses: number[] = [];
    const asked: number[] = [];
    for (let i = 0; i < 70; i++) {
      // The questions of who a session is: the follower's own requests (other files' pages) are counted apart.
      const before = env.wikiRequests('action-user');
      statuses.push((await from(`session=made-up-${RUN}-${i}`)).status);
      asked.push(env.wikiRequests('action-user') - before);
    }
    // A session the wiki does not know is no one: their own branches are not listed (401) until the address is refused.
    assert.deepEqual(statuses, [...Array(61).fill(401), ...Array(9).fill(429)]);
    assert.ok(asked.slice(0, 61).every((n) => n >= 1), `each of the first 61 asked of the wiki: ${asked}`);
    // (A request's count may land just after its answer: the 61st's, during the 62nd.)
    assert.ok(asked.slice(61).reduce((a, b) => a + b, 0) <= 1 && asked.slice(63).every((n) => n === 0), `the refused ones asked nothing: ${asked}`);
    const refused = await from(`session=made-up-${RUN}-last`);
    assert.equal(refused.json.type, 'urn:problem:rate-limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await from(real)).status, 200, 'the real session is still served');
    const elsewhere = await request(`${env.v1}/branches/`, { headers: { cookie: `session=made-up-${RUN}-elsewhere`, 'x-forwarded-for': '198.51.100.100' } });
    assert.equal(elsewhere.status, 401, 'another address is asked of the wiki, not refused');
  });

  it('refuses a version larger than the wiki takes a page, with 413 as the wiki refuses such an edit', async () => {
    const general = ((await (await fetch(`${WIKI_URL}/api.php?action=query&meta=siteinfo&format=json&formatversion=2`)).json()) as { query: { general: { maxarticlesize: number } } }).query.general;
    const title = `Branch size ${RUN}`;
    const rev = await env.wiki.edit(title, 'Small.');
    const start = (wikitext: string) => request(`${env.v1}/page/${encodeURIComponent(title)}/branches/`, { method: 'POST', headers: JSON_TYPE, body: { wikitext, base_revid: rev } });
    const largest = await start('é'.repeat(general.maxarticlesize / 2));
    assert.equal(largest.status, 201, 'as large as a page may be (in bytes, not characters)');
    const over = await start(`${'é'.repeat(general.maxarticlesize / 2)}x`);
    assert.equal(over.status, 413, over.text.slice(0, 300));
    assert.equal(over.json.type, 'urn:problem:content-too-big');
    assert.equal(over.json.wiki_code, 'contenttoobig');
    // The same limit for a new version.
    const url = `${env.v1}/page/${encodeURIComponent(title)}/branches/${largest.json.branch}`;
    const updated = await request(url, { method: 'PUT', headers: { ...JSON_TYPE, 'if-match': String(largest.headers.etag) }, body: { wikitext: `${'é'.repeat(general.maxarticlesize / 2)}x` } });
    assert.equal(updated.status, 413, updated.text.slice(0, 300));
  });

  it("refuses a user's writes past the wiki's edit limit for them with 429 and Retry-After, and counts no one else's", async () => {
    const reviewer = await new WikiAdmin().login('Reviewer');
    // The wiki's word on the limit (its bot password grants no `noratelimit`): 90 a minute by MediaWiki's defaults.
    const info = await fetch(`${WIKI_URL}/api.php?action=query&meta=userinfo&uiprop=ratelimits&format=json&formatversion=2`, { headers: { cookie: reviewer.cookieHeader() } });
    const limits = ((await info.json()) as { query: { userinfo: { ratelimits: Record<string, Record<string, unknown>> } } }).query.userinfo.ratelimits;
    const limit = limits.edit!.user as { hits: number; seconds: number };
    assert.ok(limit.hits >= 1 && limit.hits <= 200, JSON.stringify(limits));
    const title = `Branch rate ${RUN}`;
    const rev = await env.wiki.edit(title, 'Limited.');
    const url = `${env.v1}/page/${encodeURIComponent(title)}/branches/`;
    const session = { cookie: reviewer.cookieHeader(), 'x-csrf-token': reviewer.csrfToken() };
    const start = (headers: Record<string, string>, i: number) => request(url, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body: { wikitext: `Draft ${i}.`, base_revid: rev } });
    for (let i = 0; i < limit.hits; i += 10) {
      const made = await Promise.all(Array.from({ length: Math.min(10, limit.hits - i) }, (_, j) => start(session, i + j)));
      assert.deepEqual([...new Set(made.map((m) => m.status))], [201], made.map((m) => m.text).join('\n'));
    }
    const refused = await start(session, limit.hits);
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.json.type, 'urn:problem:rate-limited');
    assert.match(refused.headers['content-type'] ?? '', /problem\+json/);
    const wait = Number(refused.headers['retry-after']);
    assert.ok(wait >= 1 && wait <= 2 * limit.seconds, `Retry-After ${wait}`);
    // A version of a branch is a change too; reading is not.
    const branch = (await request(url, { headers: session })).json.items[0].branch as string;
    assert.equal((await request(`${url}${branch}/wikitext`, { headers: session })).status, 200);
    // Anonymous callers are another count (and this wiki exempts them: `noratelimit` for everyone but bot passwords without it).
    for (let i = 0; i < 3; i++) assert.equal((await start({}, i)).status, 201);
  });
});

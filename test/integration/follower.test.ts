import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { HttpError } from '../../src/util/errors.js';
import { Metrics } from '../../src/util/metrics.js';
import { ChangeFollower } from '../../src/modules/page/follow/change-follower.js';
import { planChanges } from '../../src/modules/page/follow/change-plan.js';
import type { FollowerState } from '../../src/modules/page/tables/follower-state.js';
import type { PageService } from '../../src/modules/page/read/page-service.js';
import type { RequestContext } from '../../src/router/types.js';
import type { RecentChange } from '../../src/upstream/action-api.js';
import { processConfig, request, sleep, startProcess, tempDir } from '../helpers.js';
import { etagOf, FAST_FOLLOWER, startAgainstWiki, storedPage, waitFor, WIKI_URL, WikiAdmin, type AgainstWiki } from '../wiki.js';

/**
 * How long a change made on the wiki may take to be followed here: a few of the follower's polls
 * (0.2 s in these tests), whose answers take seconds when three other test files keep the wiki's
 * API workers busy, as they do in a full run.
 */
const FOLLOWED_MS = 5000;
/**
 * A move is followed once the wiki has answered for the new title (its revisions, a render by
 * Parsoid), while the suite's backfill test renders every page of the same wiki: on a slow machine
 * the new title was not stored within 5 s. This test is of what a move leaves, not of how soon.
 */
const MOVE_FOLLOWED_MS = 20_000;

const RUN = Date.now().toString(36);
const under = (title: string) => title.replace(/ /g, '_');

const change = (c: Partial<RecentChange> & Pick<RecentChange, 'type' | 'title'>, i = 1): RecentChange => ({ ns: 0, rcid: i, timestamp: `2026-01-01T00:00:0${i}Z`, ...c });

describe('planning a batch of the wiki\'s changes', () => {
  it('refreshes each touched page once, in the order of its last change, and both ends of a move', () => {
    const plan = planChanges([
      change({ type: 'edit', title: 'A' }, 1),
      change({ type: 'new', title: 'B' }, 2),
      change({ type: 'log', title: 'C', logtype: 'move', logaction: 'move', logparams: { target_ns: 0, target_title: 'D' } }, 3),
      change({ type: 'edit', title: 'A' }, 4),
      change({ type: 'log', title: 'E', logtype: 'delete', logaction: 'delete' }, 5),
      change({ type: 'log', title: 'User:F', ns: 2, logtype: 'block', logaction: 'block' }, 6),
      change({ type: 'log', title: '', logtype: 'delete', logaction: 'delete' }, 7),
    ]);
    assert.deepEqual(plan.refresh, ['B', 'C', 'D', 'A', 'E'], 'a change with no title kept here (hidden, a special page) is left out');
    assert.equal(plan.changedAt.get('A'), Date.parse('2026-01-01T00:00:04Z'));
    assert.equal(plan.kinds.get('edit'), 2);
    assert.equal(plan.kinds.get('block/block'), 1, 'counted, though nothing is done for it');
    assert.deepEqual(plan.recheck, []);
  });

  it('re-checks the revisions a revision deletion names, and queues templates and modules that changed', () => {
    const plan = planChanges([
      change({ type: 'log', title: 'A', logtype: 'delete', logaction: 'revision', logparams: { type: 'revision', ids: [7, 8] } }, 1),
      change({ type: 'log', title: 'A', logtype: 'suppress', logaction: 'revision', logparams: { type: 'revision', ids: [8] } }, 2),
      change({ type: 'edit', title: 'Template:Box', ns: 10 }, 3),
      change({ type: 'edit', title: 'Module:Calc', ns: 828 }, 4),
      change({ type: 'log', title: 'Template:Old', ns: 10, logtype: 'move', logaction: 'move', logparams: { target_ns: 10, target_title: 'Template:New' } }, 5),
    ]);
    assert.deepEqual(plan.recheck, [{ title: 'A', revid: 7 }, { title: 'A', revid: 8 }]);
    assert.deepEqual(plan.dependencies, ['Template:Box', 'Module:Calc', 'Template:Old', 'Template:New']);
    assert.ok(!plan.refresh.includes('A'), 'hiding a revision does not change the page');
  });
});

describe('the follower stopping', () => {
  it('starts nothing if it is stopped while its lease is being taken, and gives the lease back', async () => {
    const calls: string[] = [];
    const state = {
      lead: async () => {
        calls.push('lead');
        await sleep(200);
        return true;
      },
      release: async () => void calls.push('release'),
      renew: async () => true,
      cursor: async () => {
        calls.push('cursor');
        return undefined;
      },
    } as unknown as FollowerState;
    const options = { storedOnly: false, pollMs: 50, batchSize: 10, concurrency: 1, pagesPerSecond: 10, dependentsPerSecond: 1, leaseMs: 3000 };
    const metrics = new Metrics(false);
    const follower = new ChangeFollower('wiki.test', {} as PageService, state, options, metrics, pino({ level: 'silent' }));
    assert.match(await metrics.registry.metrics(), /^follower_leading\{domain="wiki\.test"\} 0$/m, 'standing by is exported from the start');
    const ctx = {} as RequestContext;
    follower.start(ctx);
    await sleep(20);
    await follower.stop(ctx);
    await sleep(300);
    assert.equal(follower.isLeading, false);
    assert.deepEqual(calls, ['lead', 'release'], 'no loop ever read the cursor');
  });
});

/**
 * A fake wiki's recent changes for the follower (`changes`, read live), a cursor kept as storage
 * would keep it (none yet when `fresh`), and page refreshes that take their turn at the follower's
 * pace: for tests of what the follower does, and in which order.
 */
function fakeFollowing(changes: RecentChange[], options: { fresh?: boolean; refresh?: (title: string) => Promise<void> } = {}) {
  let stored: { ts: string; seen: [number, number][] } | undefined = options.fresh ? undefined : { ts: changes[0]!.timestamp.replace(/:\d\dZ$/, ':00Z'), seen: [] };
  const cursors: string[] = [];
  const refreshed: string[] = [];
  const told: { titles: string[]; at: number; refreshedBefore: number }[] = [];
  const service = {
    wiki: () => ({
      api: {
        newestChanges: async () => [...changes].reverse(),
        // As the wiki answers: every change from the start asked for, oldest first.
        recentChanges: async (start: string) => ({ changes: changes.filter((c) => c.timestamp >= start) }),
      },
      normalize: async (title: string) => title,
    }),
    revisions: {
      refreshFromWiki: async (_ctx: RequestContext, _domain: string, title: string) => {
        await options.refresh?.(title);
        refreshed.push(title);
      },
    },
    renderer: { renderAndStore: async () => undefined },
  } as unknown as PageService;
  const state = {
    lead: async () => true,
    renew: async () => true,
    release: async () => undefined,
    cursor: async () => stored,
    advance: async (_ctx: RequestContext, _holder: string, cursor: typeof stored) => {
      stored = cursor;
      cursors.push(cursor!.ts);
      return true;
    },
    nextDependents: async () => undefined,
    queueDependents: async () => undefined,
  } as unknown as FollowerState;
  const pagesChanged = async (_ctx: RequestContext, _domain: string, titles: string[]) => void told.push({ titles, at: performance.now(), refreshedBefore: refreshed.length });
  const follow = (pace: { batchSize: number; pagesPerSecond: number }) =>
    new ChangeFollower('wiki.test', service, state, { storedOnly: false, pollMs: 20, concurrency: 1, dependentsPerSecond: 0, leaseMs: 3000, ...pace }, new Metrics(false), pino({ level: 'silent' }), pagesChanged);
  return { follow, cursors, told, refreshed };
}

const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString().replace(/\.\d+Z$/, 'Z');
/** A cursor's time as the follower stores it. */
const cursorAt = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
const edits = (n: number, title = (i: number) => `Edited ${i}`): RecentChange[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'edit', ns: 0, title: title(i), revid: 100 + i, rcid: i + 1, timestamp: at(i + 1) }));

describe('a batch of the wiki\'s changes: links first, renders at the wiki\'s pace after', () => {
  it('looks at the links to the pages a batch touched before refreshing its pages one by one', async () => {
    const batch: RecentChange[] = [...edits(20), { type: 'new', ns: 0, title: 'Created', revid: 200, rcid: 21, timestamp: at(21) }];
    const f = fakeFollowing(batch);
    // Five pages a second: the batch's 21 refreshes take four seconds.
    const follower = f.follow({ batchSize: 100, pagesPerSecond: 5 });
    const ctx = {} as RequestContext;
    follower.start(ctx);
    try {
      for (let waited = 0; f.told.length === 0 && waited < 2000; waited += 20) await sleep(20);
      const told = f.told[0];
      assert.ok(told, 'the links were looked at within 2 s');
      assert.ok(told.titles.includes('Created'));
      assert.ok(told.refreshedBefore < batch.length, `looked at after ${told.refreshedBefore} of ${batch.length} refreshes`);
    } finally {
      await follower.stop(ctx);
    }
  });
});

describe('batches of changes: read on while earlier ones are refreshed, the cursor moved in order', () => {
  it('looks at a later batch\'s links while an earlier batch\'s pages wait their turn at the wiki', async () => {
    const changes: RecentChange[] = [...edits(10), { type: 'new', ns: 0, title: 'Created later', revid: 200, rcid: 11, timestamp: at(11) }];
    const f = fakeFollowing(changes);
    // Batches of 10 at 5 pages a second: the first batch's refreshes take two seconds.
    const follower = f.follow({ batchSize: 10, pagesPerSecond: 5 });
    const ctx = {} as RequestContext;
    const t0 = performance.now();
    follower.start(ctx);
    try {
      for (let waited = 0; !f.told.some((t) => t.titles.includes('Created later')) && waited < 1500; waited += 20) await sleep(20);
      const later = f.told.find((t) => t.titles.includes('Created later'));
      assert.ok(later, 'the second batch\'s links were looked at within 1.5 s');
      assert.ok(later.refreshedBefore < 10, `while the first batch was being refreshed (${later.refreshedBefore} of 10 done, ${Math.round(later.at - t0)} ms)`);
      assert.ok(!f.cursors.includes(cursorAt(11)), 'the cursor is not past a batch whose pages are not all refreshed');
      for (let waited = 0; !f.cursors.includes(cursorAt(11)) && waited < 6000; waited += 50) await sleep(50);
      assert.deepEqual(f.refreshed, changes.map((c) => c.title), 'every page refreshed once, in order');
      assert.deepEqual(f.cursors, [cursorAt(10), cursorAt(11)], 'the cursor moved batch by batch, in order');
    } finally {
      await follower.stop(ctx);
    }
  });

  it('reads again from the last batch applied in full when a page of an earlier batch could not be refreshed', async () => {
    let failedOnce = false;
    const f = fakeFollowing(edits(6, (i) => `Page ${i}`), {
      refresh: async (title) => {
        if (title !== 'Page 1' || failedOnce) return;
        failedOnce = true;
        await sleep(100);
        throw new HttpError(503, 'upstream-unavailable', 'The wiki cannot be reached.');
      },
    });
    // Batches of 2: while the first fails, the second and third are read and queued.
    const follower = f.follow({ batchSize: 2, pagesPerSecond: 100 });
    const ctx = {} as RequestContext;
    follower.start(ctx);
    try {
      for (let waited = 0; !f.cursors.includes(cursorAt(6)) && waited < 6000; waited += 50) await sleep(50);
      assert.ok(failedOnce);
      assert.ok(f.cursors.includes(cursorAt(6)), `caught up (cursors ${f.cursors.join(' ')})`);
      assert.ok(f.refreshed.includes('Page 1'), 'the page that failed was refreshed when its batch was read again');
      assert.equal(f.cursors[0], cursorAt(2), `the first cursor stored is the first batch's (${f.cursors.join(' ')})`);
      assert.deepEqual([...f.cursors].sort(), f.cursors, 'never moved back');
    } finally {
      await follower.stop(ctx);
    }
  });
});

describe('a follower starting afresh', () => {
  it('applies none of the changes made before it began, and every one made after', async () => {
    const wiki = edits(3, (i) => `Before ${i}`);
    const f = fakeFollowing(wiki, { fresh: true });
    const follower = f.follow({ batchSize: 100, pagesPerSecond: 100 });
    const ctx = {} as RequestContext;
    follower.start(ctx);
    try {
      await sleep(200);
      assert.deepEqual(f.refreshed, [], 'the changes before it began are the backfill\'s');
      // One more in the same second as the newest before: new, so applied.
      wiki.push({ type: 'new', ns: 0, title: 'After', revid: 4, rcid: 4, timestamp: at(3) });
      for (let waited = 0; f.refreshed.length === 0 && waited < 2000; waited += 20) await sleep(20);
      assert.deepEqual(f.refreshed, ['After']);
    } finally {
      await follower.stop(ctx);
    }
  });
});

describe('following the real wiki\'s changes', () => {
  let env: AgainstWiki;
  const get = (path: string) => request(`${env.v1}${path}`);

  before(async () => {
    env = await startAgainstWiki(FAST_FOLLOWER);
    await waitFor('the follower leads', 10_000, async () => ((await request(`${env.s.base}/metrics`)).text.match(/^follower_leading\{domain="wiki.test"\} 1$/m) ? true : undefined));
  });
  after(() => env?.close());

  it('stores and renders an edit made on the wiki within 3 s, before any client asks', async () => {
    const title = under(`Followed ${RUN}`);
    const first = await env.wiki.edit(title, 'First version.');
    assert.equal(etagOf(await get(`/page/${title}/html`)).rev, first);
    const second = await env.wiki.edit(title, 'Second version.');
    const started = Date.now();
    const stored = await waitFor('the new revision stored and rendered', FOLLOWED_MS, async () => {
      const page = await storedPage(env.s.base, title);
      return page?.latest_rev === second && page.latest_tid ? page : undefined;
    });
    const took = Date.now() - started;
    const parsoidBefore = env.wikiRequests('parsoid');
    const res = await get(`/page/${title}/html`);
    assert.deepEqual(etagOf(res), { rev: second, tid: stored.latest_tid }, `served the follower's render (${took} ms)`);
    assert.match(res.text, /Second version/);
    assert.equal(env.wikiRequests('parsoid'), parsoidBefore, 'pre-rendered: the read asked nothing of Parsoid');
  });

  it('answers 404 within 5 s for a page deleted on the wiki, and serves it again once restored', async () => {
    const title = under(`Followed deleted ${RUN}`);
    await env.wiki.edit(title, 'Soon deleted.');
    assert.equal((await get(`/page/${title}/html`)).status, 200);
    await env.wiki.delete(title);
    await waitFor('404 after the deletion', FOLLOWED_MS, async () => ((await get(`/page/${title}/html`)).status === 404 ? true : undefined));
    await env.wiki.undelete(title);
    const res = await waitFor('200 after the restore', FOLLOWED_MS, async () => {
      const r = await get(`/page/${title}/html`);
      return r.status === 200 ? r : undefined;
    });
    assert.match(res.text, /Soon deleted/);
  });

  it('follows a move: the new title serves the page, the old one redirects to it', async () => {
    const from = under(`Followed move ${RUN}`);
    const to = under(`Followed moved ${RUN}`);
    const rev = await env.wiki.edit(from, 'Moving soon.');
    assert.equal(etagOf(await get(`/page/${from}/html`)).rev, rev);
    await env.wiki.move(from, to, { noredirect: true });
    await waitFor('the new title stored', MOVE_FOLLOWED_MS, async () => ((await storedPage(env.s.base, to))?.latest_tid ? true : undefined));
    const moved = await get(`/page/${to}/html`);
    assert.equal(moved.status, 200);
    assert.match(moved.text, /Moving soon/);
    // The old title is marked moved just after the new one is stored (one change, two writes).
    const old = await waitFor('the old title answers as moved', FOLLOWED_MS, async () => {
      const res = await get(`/page/${from}/html`);
      return res.status === 404 ? res : undefined;
    }).catch(async () => get(`/page/${from}/html`));
    assert.equal(old.status, 404, 'moved without a redirect');
    assert.equal(old.json.type, 'urn:problem:page-moved');
    assert.equal((await get(`/page/${from}/html/${rev}`)).status, 302, 'its revision URLs redirect');
  });

  it('answers 403 within 3 s for a revision whose text the wiki hid', async () => {
    const title = under(`Followed hidden ${RUN}`);
    const old = await env.wiki.edit(title, 'Private text.');
    await env.wiki.edit(title, 'Public text.');
    assert.equal((await get(`/page/${title}/html/${old}`)).status, 200);
    await env.wiki.hideRevision(title, old);
    await waitFor('403 after the revision deletion', FOLLOWED_MS, async () => ((await get(`/page/${title}/html/${old}`)).status === 403 ? true : undefined));
    assert.equal((await get(`/page/${title}/html`)).status, 200, 'the latest revision stays');
  });

  it('catches up with what changed on the wiki while it could not reach it', async () => {
    const title = under(`Followed outage ${RUN}`);
    await env.wiki.edit(title, 'Before the outage.');
    await waitFor('stored', FOLLOWED_MS, async () => ((await storedPage(env.s.base, title))?.latest_tid ? true : undefined));
    const metric = async (pattern: RegExp) => Number(pattern.exec((await request(`${env.s.base}/metrics`)).text)?.[1] ?? 0);
    assert.equal((await request(`${env.s.base}/_health`)).json.status, 'ok');
    env.proxy.down();
    const during = await env.wiki.edit(title, 'During the outage.');
    await sleep(1500);
    assert.notEqual((await storedPage(env.s.base, title))?.latest_rev, during, 'the wiki is unreachable: nothing learned');
    // A stalled follower is visible: on /_health, and on /metrics by kind and by age.
    const stalled = await waitFor('the follower reported stalled', 10_000, async () => {
      const health = (await request(`${env.s.base}/_health`)).json;
      return health.wikis['wiki.test'].follower.stalled ? health : undefined;
    });
    assert.equal(stalled.status, 'degraded');
    assert.equal(stalled.wikis['wiki.test'].follower.leading, true);
    assert.ok(stalled.wikis['wiki.test'].follower.failures_in_a_row > 0);
    assert.ok(stalled.wikis['wiki.test'].follower.last_poll_age_seconds >= 5);
    assert.ok((await metric(/^follower_failures_total\{domain="wiki\.test",kind="wiki-unavailable"\} (\d+)/m)) > 0);
    assert.ok((await metric(/^follower_last_poll_age_seconds\{domain="wiki\.test"\} ([\d.]+)/m)) >= 5);
    assert.ok((await metric(/^follower_cursor_age_seconds\{domain="wiki\.test"\} ([\d.]+)/m)) >= 5);
    assert.ok((await metric(/^wiki_request_outcomes_total\{domain="wiki\.test",outcome="unreachable"\} (\d+)/m)) > 0);
    env.proxy.up = true;
    // Its render waits its turn at the wiki's PHP workers, which other files' renders share.
    await waitFor('the change made during the outage', 30_000, async () => {
      const page = await storedPage(env.s.base, title);
      return page?.latest_rev === during && page.latest_tid ? true : undefined;
    });
    await waitFor('healthy again', 5_000, async () => ((await request(`${env.s.base}/_health`)).json.status === 'ok' ? true : undefined));
    assert.ok((await metric(/^follower_last_poll_age_seconds\{domain="wiki\.test"\} ([\d.]+)/m)) < 5);
  });

  it('re-renders the pages using a template that changed, keeping tids where nothing changed', async () => {
    const template = `Template:Followed box ${RUN}`;
    await env.wiki.edit(template, 'Box says one.');
    const user = under(`Followed user ${RUN}`);
    const bystander = under(`Followed bystander ${RUN}`);
    await env.wiki.edit(user, `Before {{Followed box ${RUN}}} after.`);
    await env.wiki.edit(bystander, `No template here.`);
    const before = await get(`/page/${user}/html`);
    assert.match(before.text, /Box says one/);
    const bystanderTid = etagOf(await get(`/page/${bystander}/html`)).tid;

    await env.wiki.edit(template, 'Box says two.');
    // Followed, its dependents listed, then a render that waits its turn at the wiki's PHP workers
    // (other files' renders share them): one run on a loaded machine took longer than 5 s.
    const res = await waitFor('the page using the template re-rendered', FOLLOWED_MS + 15_000, async () => {
      const r = await get(`/page/${user}/html`);
      return /Box says two/.test(r.text) ? r : undefined;
    });
    assert.equal(etagOf(res).rev, etagOf(before).rev, 'the same revision');
    assert.notEqual(etagOf(res).tid, etagOf(before).tid, 'a new render');
    assert.equal(etagOf(await get(`/page/${bystander}/html`)).tid, bystanderTid, 'a page not using it keeps its render');
  });
});

describe('a template\'s dependents: the most-read first', () => {
  let env: AgainstWiki;
  before(async () => {
    // One at a time, one a second: the order is visible.
    env = await startAgainstWiki({ ...FAST_FOLLOWER, follow_changes: 'stored', follower: { ...FAST_FOLLOWER.follower, concurrency: 1, dependents_per_second: 1 } });
    await waitFor('the follower leads', 10_000, async () => ((await request(`${env.s.base}/metrics`)).text.match(/^follower_leading\{domain="wiki.test"\} 1$/m) ? true : undefined));
  });
  after(() => env?.close());

  it('re-renders the stored pages using a changed template in order of reads, skipping pages not stored', async () => {
    const followed = async () => {
      const text = (await request(`${env.s.base}/metrics`)).text;
      return [...text.matchAll(/^follower_changes_total\{domain="wiki.test",kind="[^"]+"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const followedBefore = await followed();
    const template = `Template:Read order ${RUN}`;
    await env.wiki.edit(template, 'Order one.');
    const titles = ['Rarely', 'Often', 'Sometimes'].map((w) => under(`Read order ${w} ${RUN}`));
    for (const t of titles) await env.wiki.edit(t, `{{Read order ${RUN}}}`);
    // Edited last, so most recent: without read counts it would go first.
    for (let i = 0; i < 3; i++) await env.wiki.edit(under(`Read order unstored ${i} ${RUN}`), `{{Read order ${RUN}}}`);
    // The follower applies the seven edits above before any page is stored: the template's first
    // edit then has no stored dependents to re-render after the reads below.
    await waitFor('the edits above followed', 20_000, async () => ((await followed()) >= followedBefore + 7 ? true : undefined));
    await sleep(1500);
    const reads = { [titles[0]!]: 1, [titles[1]!]: 6, [titles[2]!]: 3 };
    const tids: Record<string, string> = {};
    for (const [t, n] of Object.entries(reads)) for (let i = 0; i < n; i++) tids[t] = etagOf(await request(`${env.v1}/page/${t}/html`)).tid;
    const parsoid = env.wikiRequests('parsoid');
    await env.wiki.edit(template, 'Order two.');
    const order: string[] = [];
    // Three renders a second apart, each waiting its turn at the wiki's PHP workers behind other
    // files' renders: one CI run on a loaded machine needed more than 15 s.
    await waitFor('all three re-rendered', FOLLOWED_MS + 40_000, async () => {
      for (const t of titles) {
        if (!order.includes(t) && etagOf(await request(`${env.v1}/page/${t}/html`)).tid !== tids[t]) order.push(t);
      }
      return order.length === 3 ? true : undefined;
    });
    assert.deepEqual(order, [titles[1], titles[2], titles[0]], 'most read first');
    assert.equal(env.wikiRequests('parsoid') - parsoid, 3, 'the pages not stored were not rendered');
  });
});

describe('following by default: only what is stored is kept fresh', () => {
  let env: AgainstWiki;
  before(async () => {
    env = await startAgainstWiki({ ...FAST_FOLLOWER, follow_changes: 'stored' });
    await waitFor('the follower leads', 10_000, async () => ((await request(`${env.s.base}/metrics`)).text.match(/^follower_leading\{domain="wiki.test"\} 1$/m) ? true : undefined));
  });
  after(() => env?.close());

  it('refreshes a stored page and hides a hidden revision within 3 s, and leaves pages nobody asked for to the wiki', async () => {
    const stored = under(`Followed stored ${RUN}`);
    const elsewhere = under(`Followed not stored ${RUN}`);
    const first = await env.wiki.edit(stored, 'Stored, first.');
    assert.equal(etagOf(await request(`${env.v1}/page/${stored}/html`)).rev, first);
    const parsoid = env.wikiRequests('parsoid');
    const second = await env.wiki.edit(stored, 'Stored, second.');
    await env.wiki.edit(elsewhere, 'Never asked for.');
    await waitFor('the stored page refreshed', FOLLOWED_MS, async () => ((await storedPage(env.s.base, stored))?.latest_rev === second ? true : undefined));
    await env.wiki.hideRevision(stored, first);
    await waitFor('the hidden revision answers 403', FOLLOWED_MS, async () => ((await request(`${env.v1}/page/${stored}/html/${first}`)).status === 403 ? true : undefined));
    await sleep(500);
    assert.equal(await storedPage(env.s.base, elsewhere), undefined, 'a page nobody asked for is not stored');
    assert.equal(env.wikiRequests('parsoid') - parsoid, 1, 'one render: the stored page\'s new revision');
    const listing = await request(`${env.v1}/page/`);
    assert.notEqual(listing.json.complete, true, 'the listing does not claim pages it does not follow');
  });
});

describe('one follower per wiki: another process takes over from one killed with kill -9', () => {
  const dir = tempDir('wikistore-follower-');
  const config = () => processConfig(dir, 'wiki.test', WIKI_URL, 'follow_changes: true\nfollower:\n  poll_interval: 0.2\n  lease: 2\n  pages_per_second: 50\n');
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  const leading = async (port: number) => /^follower_leading\{domain="wiki.test"\} 1$/m.test((await request(`http://127.0.0.1:${port}/metrics`)).text);

  it('misses no change of a burst of 50 edits on 10 pages made while the leader dies', async () => {
    const first = startProcess(config());
    children.push(first.child);
    const firstPort = await first.port;
    await waitFor('the first process leads', 10_000, async () => ((await leading(firstPort)) ? true : undefined));
    const second = startProcess(config());
    children.push(second.child);
    const secondPort = await second.port;
    await sleep(1000);
    assert.equal(await leading(secondPort), false, 'the second stands by while the first leads');

    const wiki = await new WikiAdmin().login();
    const titles = Array.from({ length: 10 }, (_, i) => under(`Takeover ${RUN} ${i}`));
    for (let round = 0; round < 5; round++) {
      for (const title of titles) await wiki.edit(title, `Round ${round} of ${title}.`);
      if (round === 1) first.child.kill('SIGKILL');
    }
    const expected = await Promise.all(titles.map((t) => wiki.latestRevid(t)));
    const base = `http://127.0.0.1:${secondPort}`;
    await waitFor('the second process leads', 10_000, async () => ((await leading(secondPort)) ? true : undefined));
    await waitFor('every page\'s latest revision stored and rendered', 15_000, async () => {
      const stored = await Promise.all(titles.map((t) => storedPage(base, t)));
      return stored.every((page, i) => page?.latest_rev === expected[i] && page.latest_tid) ? true : undefined;
    });
    for (const [i, title] of titles.entries()) {
      const page = await storedPage(base, title);
      assert.equal(page?.latest_rev, expected[i], title);
      assert.ok(page?.latest_tid, `${title} rendered`);
    }
  });
});

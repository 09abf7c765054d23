import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { notFound } from '../../../../../src/util/errors.js';
import { PageCaches } from '../../../../../src/modules/page/read/page-caches.js';
import { SingleFlight } from '../../../../../src/modules/page/model/single-flight.js';
import type { Render } from '../../../../../src/modules/page/model/render.js';
import type { RevisionRow } from '../../../../../src/modules/page/model/revision.js';
import { sleep } from '../../../../helpers.js';

const row = (rev: number) => ({ title: 'T', rev }) as RevisionRow;
const render = (tid: string, bytes = 10): Render => ({
  title: 'T', rev: 1, tid, digest: 'd', types: {} as Render['types'],
  parts: { html: Buffer.alloc(bytes), 'data-parsoid': Buffer.alloc(0), 'data-mw': Buffer.alloc(0), wikitext: Buffer.alloc(0) },
});

/** The invalidation rules of everything the page module keeps in memory. */
describe('page caches', () => {
  it('drops every cached row of a page on a write, and keeps no row read across a write', () => {
    const rows = new PageCaches({ rowTtlMs: 60_000, renderBytes: 1, missTtlMs: 0 }).rowsOf('d');
    rows.set('T', 'newest', row(1), rows.generation('T'));
    rows.set('T', '1', row(1), rows.generation('T'));
    rows.set('U', 'newest', row(7), rows.generation('U'));
    assert.equal(rows.get('T', 'newest')?.rev, 1);
    rows.invalidate('T');
    assert.equal(rows.get('T', 'newest'), undefined);
    assert.equal(rows.get('T', '1'), undefined);
    assert.equal(rows.get('U', 'newest')?.rev, 7, 'other pages keep theirs');
    const before = rows.generation('T');
    rows.invalidate('T'); // a write lands while a read is in flight
    rows.set('T', 'newest', row(1), before);
    assert.equal(rows.get('T', 'newest'), undefined, 'the stale read is not kept');
  });

  it("forgets rows after the row time, so other processes' writes are seen", async () => {
    const rows = new PageCaches({ rowTtlMs: 30, renderBytes: 1, missTtlMs: 0 }).rowsOf('d');
    rows.set('T', 'newest', row(1), rows.generation('T'));
    await sleep(60);
    assert.equal(rows.get('T', 'newest'), undefined);
  });

  it('keeps page state per domain', () => {
    const caches = new PageCaches({ rowTtlMs: 60_000, renderBytes: 1, missTtlMs: 0 });
    caches.rowsOf('a').set('T', 'newest', row(1), caches.rowsOf('a').generation('T'));
    assert.equal(caches.rowsOf('b').get('T', 'newest'), undefined);
  });

  it('keeps renders by domain and tid, evicting by size, never by time', () => {
    const caches = new PageCaches({ rowTtlMs: 1, renderBytes: 25, missTtlMs: 0 });
    caches.rememberRender('d', render('t1'));
    caches.rememberRender('d', render('t2'));
    assert.equal(caches.render('d', 't1')?.tid, 't1');
    assert.equal(caches.render('e', 't1'), undefined);
    caches.rememberRender('d', render('t3'));
    assert.equal(caches.render('d', 't2'), undefined, 'the least recently used went first');
  });

  it('once full, admits a render read from storage only if it was used more often lately than the one it would push out', () => {
    const counted = { hit: 0, miss: 0, kept: 0, refused: 0 };
    const counts = { sought: (hit: boolean) => counted[hit ? 'hit' : 'miss']++, offered: (kept: boolean) => counted[kept ? 'kept' : 'refused']++ };
    const caches = new PageCaches({ rowTtlMs: 1, renderBytes: 30, missTtlMs: 0, counts });
    /** A read as the render store makes it: a use counted, the render offered to the caches on a miss. */
    const read = (tid: string) => {
      const hit = caches.render('d', tid) !== undefined;
      caches.noteRenderUse('d', tid, hit);
      if (!hit) caches.offerRender('d', render(tid));
      return hit ? 'hit' : 'miss';
    };
    assert.equal(caches.wouldKeepRender('d', 'x'), true, 'an empty cache takes anything');
    // Reads cycling over five renders where three fit: the first three are kept and stay.
    const cycled = [];
    for (let round = 0; round < 4; round++) for (const tid of ['c0', 'c1', 'c2', 'c3', 'c4']) cycled.push(read(tid));
    assert.deepEqual(cycled.slice(5), Array(3).fill(['hit', 'hit', 'hit', 'miss', 'miss']).flat(), 'three of five read from memory, where LRU would read none');
    assert.deepEqual(counted, { hit: 9, miss: 11, kept: 3, refused: 8 }, 'the counts say so: each use a hit or a miss, each miss kept or refused');
    // A render read more often than the least used one kept is admitted in its place.
    for (let i = 0; i < 10; i++) caches.noteRenderUse('d', 'hot', false);
    assert.equal(caches.wouldKeepRender('d', 'hot'), true);
    assert.equal(caches.wouldKeepRender('d', 'c3'), false);
  });

  it("holds a farm's wiki to its share of the renders: its burst evicts its own, never another wiki's", () => {
    const caches = new PageCaches({ rowTtlMs: 1, renderBytes: 800, missTtlMs: 0, capped: (domain) => domain.endsWith('.farm') });
    for (const tid of ['h1', 'h2', 'h3']) caches.rememberRender('hot.farm', render(tid));
    for (let i = 0; i < 200; i++) caches.rememberRender('burst.farm', render(`b${i}`));
    assert.deepEqual(['h1', 'h2', 'h3'].map((t) => caches.render('hot.farm', t)?.tid), ['h1', 'h2', 'h3'], "another wiki's renders stay");
    const kept = Array.from({ length: 200 }, (_, i) => caches.render('burst.farm', `b${i}`)).filter(Boolean).length;
    assert.equal(kept, 10, 'an eighth of 800 bytes: ten renders of ten');
    assert.equal(caches.render('burst.farm', 'b199')?.tid, 'b199', 'its newest kept');
    // A wiki listed by name is not capped: it may fill the cache.
    for (let i = 0; i < 50; i++) caches.rememberRender('listed.example', render(`l${i}`));
    assert.equal(Array.from({ length: 50 }, (_, i) => caches.render('listed.example', `l${i}`)).filter(Boolean).length, 50);
  });

  it('builds response headers once per render and key', () => {
    const caches = new PageCaches({ rowTtlMs: 1, renderBytes: 100, missTtlMs: 0 });
    const r = render('t1');
    let built = 0;
    const build = () => ({ n: String(++built) });
    assert.equal(caches.headersFor(r, 'html', build), caches.headersFor(r, 'html', build));
    assert.equal(caches.headersFor(r, 'wikitext', build).n, '2');
    assert.equal(caches.headersFor(render('t1'), 'html', build).n, '3', 'another render object gets its own');
  });

  it('remembers a miss until its time is up or the page is seen to exist; a forced ask bypasses it', async () => {
    const caches = new PageCaches({ rowTtlMs: 1, renderBytes: 1, missTtlMs: 50 });
    let asked = 0;
    const ask = async () => {
      asked++;
      throw notFound('no such page', 'page-not-found');
    };
    for (let i = 0; i < 3; i++) await assert.rejects(caches.unlessMissing('page\u0000d\u0000T', false, ask), /no such page/);
    assert.equal(asked, 1);
    await assert.rejects(caches.unlessMissing('page\u0000d\u0000T', true, ask));
    assert.equal(asked, 2, 'forced');
    caches.forgetMiss('page\u0000d\u0000T');
    await assert.rejects(caches.unlessMissing('page\u0000d\u0000T', false, ask));
    assert.equal(asked, 3, 'forgotten once the page was seen');
    await sleep(70);
    await assert.rejects(caches.unlessMissing('page\u0000d\u0000T', false, ask));
    assert.equal(asked, 4, 'expired');
    const failing = async () => {
      asked++;
      throw new Error('wiki down');
    };
    await assert.rejects(caches.unlessMissing('page\u0000d\u0000U', false, failing));
    await assert.rejects(caches.unlessMissing('page\u0000d\u0000U', false, failing));
    assert.equal(asked, 6, 'only "not found" is remembered');
  });

  it('bounds normalised titles by bytes and keeps no failed normalisation', async () => {
    const caches = new PageCaches({ rowTtlMs: 1, renderBytes: 1, missTtlMs: 0, titleBytes: 10_000 });
    let calls = 0;
    for (let i = 0; i < 1000; i++) await caches.title('d', `t${'x'.repeat(100)}${i}`, async () => (calls++, `T${i}`));
    assert.ok(caches.titleBytes <= 10_000);
    assert.equal(await caches.title('d', `t${'x'.repeat(100)}999`, async () => 'again'), 'T999', 'recent titles stay');
    await assert.rejects(caches.title('d', 'bad', async () => Promise.reject(new Error('invalid'))));
    assert.equal(await caches.title('d', 'bad', async () => 'Fixed'), 'Fixed');
  });
});

describe('single flight', () => {
  it('runs concurrent work once, and again once it settled; a render key stays taken until stored', async () => {
    const flights = new SingleFlight();
    let runs = 0;
    const work = () => flights.run('k', async () => (await sleep(10), ++runs));
    assert.deepEqual(await Promise.all([work(), work(), work()]), [1, 1, 1]);
    assert.equal(await work(), 2);
    let store!: () => void;
    const stored = new Promise<void>((r) => (store = r));
    let renders = 0;
    const renderOnce = () => flights.runUntil('r', async () => ({ value: ++renders, settled: stored }));
    assert.equal(await renderOnce(), 1);
    assert.equal(await renderOnce(), 1, 'answered, not yet stored: joins');
    store();
    await sleep(1);
    assert.equal(await renderOnce(), 2, 'stored: a new request renders again');
    await assert.rejects(flights.runUntil('f', async () => Promise.reject(new Error('boom'))));
    assert.equal(await flights.runUntil('f', async () => ({ value: 'ok', settled: Promise.resolve() })), 'ok', 'a failure frees the key');
  });
});

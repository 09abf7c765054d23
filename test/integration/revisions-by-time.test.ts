import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { PageCaches } from '../../src/modules/page/read/page-caches.js';
import { ChangeLog, ChangeLogs } from '../../src/modules/page/tables/change-log.js';
import { PageRevisions } from '../../src/modules/page/tables/page-revisions.js';
import type { RequestContext } from '../../src/router/types.js';
import { BACKENDS, startServer, type TestServer } from '../helpers.js';

const T0 = Date.parse('2024-03-01T00:00:00Z');
const at = (minutes: number) => T0 + minutes * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A revision row as the wiki describes one (made `minutes` after T0). */
const row = (rev: number, minutes: number, pageId: number, parent: number | null) => ({
  rev, timestamp: iso(at(minutes)), page_id: pageId, parent_id: parent, text_hidden: false, user_hidden: false, comment_hidden: false, minor: false, tags: [],
});

for (const backend of BACKENDS) {
  describe(`the page revisions table: revisions by time, changes once (${backend.name})`, () => {
    let s: TestServer;
    let ctx: RequestContext;
    let revs: PageRevisions;

    before(async () => {
      s = await startServer({ storage: backend.storage() });
      ctx = s.app.router.context({ requestId: 'r', admin: true, log: pino({ level: 'silent' }), external: false });
      revs = new PageRevisions(s.domain, new PageCaches({ rowTtlMs: 0, renderBytes: 1024, missTtlMs: 0 }).rowsOf(s.domain), new ChangeLogs(3600).of(s.domain));
      await revs.create(ctx);
    });
    after(() => s?.close());

    it('finds the revision current at a time in a long history, by time and then by id', async () => {
      // 1,200 revisions a minute apart (more than two storage pages of a partition), ids not in
      // time order at one place (an import): 1,000 at minute 10 and 1,001 at minute 5.
      const rows = Array.from({ length: 1200 }, (_, i) => row(i + 1, i, 1, i === 0 ? null : i));
      rows[999] = row(1000, 10, 1, 999);
      rows[1000] = row(1001, 5, 1, 1000);
      rows.push(row(1201, 1199, 1, 1200)); // two revisions in the same second: the higher id is the later one
      for (const r of rows) await revs.saveRow(ctx, 'Long', r);
      const current = async (ms: number) => (await revs.currentAt(ctx, 'Long', ms))?.rev;
      assert.equal(await current(at(0) - 1), undefined, 'before the first revision');
      assert.equal(await current(at(0)), 1);
      assert.equal(await current(at(3) + 30_000), 4);
      assert.equal(await current(at(1100)), 1101, 'deep in the history');
      assert.equal(await current(at(5)), 1001);
      assert.equal(await current(at(7)), 8, 'by time, not by id (1,001 is older)');
      assert.equal(await current(at(10)), 1000, 'the same time: by id');
      assert.equal(await current(at(1199)), 1201, 'the same second: by id');
      assert.equal(await current(at(1198)), 1199);
      assert.equal(await current(at(5000)), 1201, 'after the last revision');
    });

    it('proves a time from storage only with the next revision or a check of the latest', async () => {
      for (const r of [row(1, 0, 7, null), row(2, 10, 7, 1), row(4, 30, 7, 3)]) await revs.saveRow(ctx, 'Proof', r);
      await revs.markLatest(ctx, 'Proof', 4, null, undefined);
      const proven = async (ms: number) => (await revs.provenCurrentAt(ctx, 'Proof', ms))?.rev;
      assert.equal(await proven(at(5)), 1, 'revision 2, made after, has it as its parent');
      assert.equal(await proven(at(20)), undefined, 'revision 3 is not stored: 2 may not be current then');
      assert.equal(await proven(at(40)), 4, 'the latest revision, checked after that time');
      assert.equal(await proven(Date.now() + 3_600_000), undefined, 'a time after the last check');
    });

    it("reads one row to prove the page's latest revision, two for the one before it, three further back", async () => {
      for (const r of [row(51, 0, 13, null), row(52, 10, 13, 51), row(53, 20, 13, 52), row(54, 30, 13, 53)]) await revs.saveRow(ctx, 'Reads', r);
      await revs.markLatest(ctx, 'Reads', 54, null, undefined);
      const reads = async () => {
        const metric = await s.app.metrics.storageDuration.get();
        return metric.values.filter((v) => v.metricName === 'storage_operation_seconds_count' && v.labels.operation === 'get' && v.labels.table === 'page_revisions').reduce((n, v) => n + v.value, 0);
      };
      // The table's rows are not kept in memory here (rowTtlMs 0): each proof reads what it needs.
      const proof = async (ms: number) => {
        const before = await reads();
        const rev = (await revs.provenCurrentAt(ctx, 'Reads', ms))?.rev;
        return `${rev} in ${(await reads()) - before}`;
      };
      assert.equal(await proof(at(35)), '54 in 1', 'the latest, checked since: its own row carries the page state');
      assert.equal(await proof(at(25)), '53 in 2', 'the next revision is the latest: of the page now at the title');
      assert.equal(await proof(at(15)), '52 in 3', "and the newest row, to know the page is the one now at the title");
    });

    it('does not count the revisions of a page deleted and made again at the same title', async () => {
      // The old page (id 8) kept its rows; the page there now (id 9) began at minute 100.
      for (const r of [row(10, 0, 8, null), row(11, 10, 8, 10), row(20, 100, 9, null), row(21, 110, 9, 20)]) await revs.saveRow(ctx, 'Again', r);
      await revs.markLatest(ctx, 'Again', 21, null, undefined);
      const proven = async (ms: number) => (await revs.provenCurrentAt(ctx, 'Again', ms))?.rev;
      assert.equal(await proven(at(5)), undefined, "the old page's revision: the wiki is asked");
      assert.equal(await proven(at(50)), undefined, "the old page's last revision, followed by the new page's first");
      assert.equal(await proven(at(105)), 20);
      assert.equal(await proven(at(120)), 21);
    });
    it("records a page's edit once when its render is stored while a refresh points the page at it", async () => {
      const since = ChangeLog.idBefore(Date.now());
      // Ten revisions, each met by the two writers at once, as a notice's refresh and a render's storing meet.
      for (let rev = 101; rev <= 110; rev++) {
        await revs.saveRow(ctx, 'Raced', row(rev, rev, 12, rev === 101 ? null : rev - 1));
        await revs.markLatest(ctx, 'Raced', rev, null, await revs.newest(ctx, 'Raced'));
        const tid = `${(rev - 100).toString(16).padStart(8, '0')}-0000-1000-8000-000000000000`;
        const current = await revs.newest(ctx, 'Raced');
        await Promise.all([revs.setRenderTid(ctx, 'Raced', rev, tid, true), revs.markLatest(ctx, 'Raced', rev, tid, current), revs.setRenderTid(ctx, 'Raced', rev, tid, true)]);
      }
      const events = (await revs.changes.after(ctx, since, 100)).filter((e) => e.title === 'Raced');
      assert.deepEqual(events.map((e) => `${e.kind} ${e.rev}`), Array.from({ length: 10 }, (_, i) => `edit ${101 + i}`));
      // A second render of the latest revision is a re-render, once.
      const again = '0000000b-0000-1000-8000-000000000000';
      await Promise.all([revs.setRenderTid(ctx, 'Raced', 110, again, true), revs.setRenderTid(ctx, 'Raced', 110, again, true)]);
      const more = (await revs.changes.after(ctx, since, 100)).filter((e) => e.title === 'Raced').slice(10);
      assert.deepEqual(more.map((e) => `${e.kind} ${e.rev} ${e.tid}`), [`rerender 110 ${again}`]);
    });
  });
}

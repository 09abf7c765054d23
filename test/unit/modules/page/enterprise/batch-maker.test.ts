import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { BatchMaker, type BatchSources } from '../../../../../src/modules/page/enterprise/batch-maker.js';
import { BATCH_DAYS, SnapshotShelf } from '../../../../../src/modules/page/enterprise/snapshot-shelf.js';

const HOUR = 3600_000;
const NOON = Date.parse('2026-03-10T12:00:00Z');

describe("Enterprise's batches: which is due", () => {
  const setUp = () => {
    const shelf = new SnapshotShelf(fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-batches-')));
    // `due` reads the shelf alone: no source is asked.
    const maker = new BatchMaker({} as BatchSources, shelf, { everyMs: HOUR, namespaces: [0] }, pino({ level: 'silent' }));
    /** A batch of `day` made at `at`: finished (its manifest) or under way (its pinned options only). */
    const made = (day: string, at: number, finished = true) => {
      const folder = shelf.folderFor('wiki.test', at, day);
      fs.mkdirSync(path.join(folder, '.work'), { recursive: true });
      fs.writeFileSync(path.join(folder, '.work', 'options.json'), JSON.stringify({ at }));
      if (finished) fs.writeFileSync(path.join(folder, 'manifest.json'), JSON.stringify({ wiki: 'w', date_modified: new Date(at).toISOString(), namespaces: [0], files: [] }));
      return folder;
    };
    return { shelf, maker, made };
  };

  it("makes today's at once, then again once the newest is as old as the interval", () => {
    const { shelf, maker, made } = setUp();
    assert.deepEqual(maker.due('wiki.test', NOON), { day: '2026-03-10', at: NOON, out: shelf.folderFor('wiki.test', NOON, '2026-03-10') });
    made('2026-03-10', NOON);
    assert.equal(maker.due('wiki.test', NOON + HOUR - 1), undefined);
    assert.equal(maker.due('wiki.test', NOON + HOUR)?.at, NOON + HOUR);
  });

  it("finishes yesterday's at the day's last moment, once, before today's", () => {
    const { maker, made } = setUp();
    made('2026-03-09', Date.parse('2026-03-09T23:30:00Z'));
    const end = Date.parse('2026-03-10T00:00:00Z') - 1;
    const due = maker.due('wiki.test', NOON)!;
    assert.deepEqual([due.day, due.at], ['2026-03-09', end]);
    made('2026-03-09', end);
    assert.equal(maker.due('wiki.test', NOON)?.day, '2026-03-10');
  });

  it('resumes a batch stopped half way, at its own moment', () => {
    const { maker, made } = setUp();
    made('2026-03-10', NOON - 2 * HOUR);
    const stopped = made('2026-03-10', NOON - HOUR, false);
    assert.deepEqual(maker.due('wiki.test', NOON), { day: '2026-03-10', at: NOON - HOUR, out: stopped });
  });

  it("keeps each day's newest finished batch, for the days Enterprise keeps them", () => {
    const { shelf, made } = setUp();
    const older = made('2026-03-10', NOON - HOUR);
    const newest = made('2026-03-10', NOON);
    const lastKept = new Date(NOON - (BATCH_DAYS - 1) * 24 * HOUR).toISOString().slice(0, 10);
    const tooOld = new Date(NOON - BATCH_DAYS * 24 * HOUR).toISOString().slice(0, 10);
    made(lastKept, NOON - (BATCH_DAYS - 1) * 24 * HOUR);
    made(tooOld, NOON - BATCH_DAYS * 24 * HOUR);
    shelf.pruneBatches('wiki.test', '2026-03-10');
    assert.ok(fs.existsSync(newest) && !fs.existsSync(older));
    assert.deepEqual(shelf.batchDays('wiki.test'), ['2026-03-10', lastKept]);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareTids, isTid, maxTidAt, newTid, parseTime, tidAfter, tidTime, unguessableTid } from '../../src/util/tid.js';

describe('unguessable time-uuids (ids that alone grant access)', () => {
  it('are version-1 time-uuids of now, whose random parts differ from one to the next', () => {
    const before = Date.now();
    const ids = Array.from({ length: 1000 }, unguessableTid);
    for (const id of ids) {
      assert.ok(isTid(id), id);
      assert.ok(tidTime(id) >= before && tidTime(id) <= Date.now());
    }
    // Node and clock sequence (the last two groups) are a process's constant in a plain v1.
    const tails = new Set(ids.map((id) => id.slice(19)));
    assert.equal(tails.size, ids.length);
    const plain = Array.from({ length: 10 }, newTid).map((id) => id.slice(19));
    assert.equal(new Set(plain).size, 1, 'what a plain v1 shares: the reason for unguessable ones');
  });
});

describe('new time-uuids', () => {
  it('are version-1 time-uuids of now, each after the one before, many in one millisecond', () => {
    const before = Date.now();
    const ids = Array.from({ length: 20_000 }, newTid);
    const after = Date.now();
    for (const id of ids) {
      assert.ok(isTid(id), id);
      assert.ok(tidTime(id) >= before && tidTime(id) <= after, id);
    }
    assert.equal(new Set(ids).size, ids.length);
    for (let i = 1; i < ids.length; i++) assert.ok(compareTids(ids[i - 1]!, ids[i]!) < 0, `${ids[i - 1]} then ${ids[i]}`);
  });

  it('stay after a tid made by a clock ahead of this one', () => {
    const ahead = maxTidAt(Date.now() + 5000);
    const next = tidAfter(ahead);
    assert.ok(isTid(next));
    assert.ok(compareTids(ahead, next) < 0);
  });
});

describe('the sortable form of a time-uuid', () => {
  it('puts the time first, so text order is time order, and turns back into the uuid', async () => {
    const { sortableToTimeuuid, timeuuidToSortable } = await import('../../src/util/timeuuid.js');
    const ids = [...Array.from({ length: 200 }, unguessableTid), maxTidAt(0), maxTidAt(Date.now()), maxTidAt(8_000_000_000_000)];
    for (const id of ids) {
      const sortable = timeuuidToSortable(id);
      assert.match(sortable, /^[0-9a-f]{32}$/);
      assert.equal(sortableToTimeuuid(sortable), id.toLowerCase());
      // Upper case, or written without dashes, it is the same uuid.
      assert.equal(timeuuidToSortable(id.toUpperCase()), sortable);
      assert.equal(timeuuidToSortable(id.replace(/-/g, '')), sortable);
    }
    const byTime = [...ids].sort((a, b) => tidTime(a) - tidTime(b) || compareTids(a, b));
    const byText = [...ids].sort((a, b) => (timeuuidToSortable(a) < timeuuidToSortable(b) ? -1 : 1));
    assert.deepEqual(byText.map(tidTime), byTime.map(tidTime));
  });
});

describe('times a client gives (?ts=, since)', () => {
  it('takes ISO 8601 and the compact form, and refuses a day the calendar lacks rather than take it for another', () => {
    assert.equal(parseTime('2020-02-29T12:00:00Z'), Date.UTC(2020, 1, 29, 12));
    assert.equal(parseTime('20200229T12:00:00Z'), Date.UTC(2020, 1, 29, 12));
    assert.equal(parseTime('2020-03-01T01:00:00+02:00'), Date.UTC(2020, 1, 29, 23));
    assert.equal(parseTime('0050-01-01T00:00:00Z'), Date.parse('0050-01-01T00:00:00Z'));
    for (const day of ['2019-02-29T00:00:00Z', '2020-02-30T00:00:00Z', '2020-04-31T00:00:00Z', '2020-13-01T00:00:00Z', '2020-00-10T00:00:00Z', '20200230T00:00:00Z']) {
      assert.throws(() => parseTime(day), (e: { status?: number }) => e.status === 400, day);
    }
  });
});

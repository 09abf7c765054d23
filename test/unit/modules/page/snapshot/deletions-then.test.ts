import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeletionEvent } from '../../../../../src/upstream/action-api.js';
import { deletionsThen, withDeletions } from '../../../../../src/modules/page/snapshot/deletions-then.js';

const AT = Date.parse('2026-01-10T00:00:00Z');
const event = (title: string, action: 'delete' | 'restore', timestamp: string, ns = 0): DeletionEvent => ({ title, ns, action, timestamp });

/** A deletion log: the events after the moment (oldest first), and the whole log for the state at a time. */
function fakeLog(all: DeletionEvent[]) {
  const asked: string[] = [];
  return {
    asked,
    async deletionsAfter(after: string) {
      return { events: all.filter((e) => e.timestamp > after) };
    },
    async deletionStateAt(title: string, at: string) {
      asked.push(title);
      return all.filter((e) => e.title === title && e.timestamp <= at).at(-1);
    },
  };
}

describe("a snapshot's reading of the deletion log", () => {
  it('marks a page deleted at the moment and restored since, and names pages deleted since', async () => {
    const log = fakeLog([
      event('Gone Then', 'delete', '2026-01-05T00:00:00Z'),
      event('Gone Then', 'restore', '2026-01-12T00:00:00Z'),
      event('There Then', 'delete', '2026-01-11T00:00:00Z'),
      event('There Then', 'restore', '2026-01-12T00:00:00Z'),
      event('Deleted Since', 'delete', '2026-01-11T00:00:00Z'),
      event('Talk:Elsewhere', 'delete', '2026-01-11T00:00:00Z', 1),
    ]);
    const then = await deletionsThen(log, AT, 0);
    assert.deepEqual([...then.deletedThen], [['Gone_Then', '2026-01-05T00:00:00Z']], 'only the page whose last event by then was a deletion');
    assert.deepEqual([...then.deletedSince], ['Deleted_Since'], 'restored since: not deleted; another namespace: not looked at');
    assert.deepEqual(log.asked.sort(), ['Gone Then', 'There Then'], 'the state at the moment is asked only of pages restored since');
  });

  it('adds the pages deleted since that nothing lists, within the snapshot’s scope', () => {
    const entries = [{ title: 'Gone_Then' }, { title: 'Stored' }];
    const marked = withDeletions(entries, { deletedThen: new Map([['Gone_Then', '2026-01-05T00:00:00Z']]), deletedSince: new Set(['Stored', 'Never_Stored', 'Out_Of_Scope']) }, (t) => !t.startsWith('Out'));
    assert.deepEqual(marked, [
      { title: 'Gone_Then', deletedThen: '2026-01-05T00:00:00Z' },
      { title: 'Stored' },
      { title: 'Never_Stored', deletedSince: true },
    ]);
  });
});

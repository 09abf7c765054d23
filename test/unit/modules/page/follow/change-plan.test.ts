import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planChanges } from '../../../../../src/modules/page/follow/change-plan.js';
import type { RecentChange } from '../../../../../src/upstream/action-api.js';

const change = (c: Partial<RecentChange>): RecentChange => ({ type: 'edit', ns: 0, title: 'A', timestamp: '2026-01-01T00:00:00Z', ...c }) as RecentChange;

describe('planning a batch of changes', () => {
  it('names the moves, in change order, and refreshes both titles of each', () => {
    const plan = planChanges([
      change({ type: 'log', logtype: 'move', logaction: 'move', title: 'A', logparams: { target_title: 'B', target_ns: 0 } }),
      change({ type: 'edit', title: 'C' }),
      change({ type: 'log', logtype: 'move', logaction: 'move_redir', title: 'B', logparams: { target_title: 'D', target_ns: 0 } }),
      change({ type: 'log', logtype: 'delete', logaction: 'delete', title: 'E' }),
    ]);
    assert.deepEqual(plan.moves, [{ from: 'A', to: 'B' }, { from: 'B', to: 'D' }]);
    assert.deepEqual(new Set(plan.refresh), new Set(['A', 'B', 'C', 'D', 'E']));
  });
});

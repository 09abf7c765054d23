import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import PQueue from 'p-queue';
import { ChangeApplier, type ApplierSources } from '../../../../../src/modules/page/follow/change-applier.js';
import type { FollowerState } from '../../../../../src/modules/page/tables/follower-state.js';
import type { RequestContext } from '../../../../../src/router/types.js';
import type { RecentChange } from '../../../../../src/upstream/action-api.js';
import { Metrics } from '../../../../../src/util/metrics.js';

const change = (c: Partial<RecentChange>): RecentChange => ({ type: 'edit', ns: 0, title: 'A', timestamp: '2026-01-01T00:00:00Z', ...c }) as RecentChange;

/** A wiki whose first render waits for `release`, and a log of what was asked in turn. */
function fakeSources() {
  const done: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let renders = 0;
  const sources = {
    wiki: () => ({ normalize: async (t: string) => t }),
    revisions: {
      refreshFromWiki: async (_ctx: unknown, _domain: string, title: string) => {
        done.push(`state ${title}`);
        return title === 'Gone' ? undefined : { title, rev: 1 };
      },
    },
    renderer: {
      renderAndStore: async (_ctx: unknown, _domain: string, row: { title: string }) => {
        if (renders++ === 0) await held;
        done.push(`render ${row.title}`);
      },
    },
  } as unknown as ApplierSources;
  return { sources, done, release };
}

describe('applying the wiki changes', () => {
  it("asks a later page's state (a deletion) ahead of renders still waiting, and renders each page after its state", async () => {
    const { sources, done, release } = fakeSources();
    const applier = new ChangeApplier('wiki.test', sources, {} as FollowerState, false, new Metrics(false));
    // One page at a time, as the wiki's notices are applied: the order is the queue's alone.
    const queue = new PQueue({ concurrency: 1 });
    const run = (_kind: string, work: () => Promise<unknown>, priority: number) => queue.add(work, { priority }).then(() => undefined);
    const ctx = {} as RequestContext;
    const first = await applier.apply(ctx, [change({ title: 'A' }), change({ title: 'B' })], run);
    await first.stored;
    // A's render is under way and held; B's waits.
    const second = await applier.apply(ctx, [change({ type: 'log', logtype: 'delete', logaction: 'delete', title: 'Gone' })], run);
    release();
    await Promise.all([first.rest, second.rest]);
    assert.deepEqual(done, ['state A', 'state B', 'render A', 'state Gone', 'render B']);
  });

  it('has a page state stored while a render holds the only place of its own queue', async () => {
    const { sources, done, release } = fakeSources();
    const applier = new ChangeApplier('wiki.test', sources, {} as FollowerState, false, new Metrics(false));
    // As the follower runs them: renders in a queue apart from states.
    const states = new PQueue({ concurrency: 1 });
    const renders = new PQueue({ concurrency: 1 });
    const run = (kind: string, work: () => Promise<unknown>, priority: number) => (kind === 'render' ? renders : states).add(work, { priority }).then(() => undefined);
    const ctx = {} as RequestContext;
    const first = await applier.apply(ctx, [change({ title: 'A' })], run);
    await first.stored;
    const second = await applier.apply(ctx, [change({ type: 'log', logtype: 'delete', logaction: 'delete', title: 'Gone' })], run);
    await second.stored;
    assert.deepEqual(done, ['state A', 'state Gone'], "the deletion's state is stored while A's render is held");
    release();
    await Promise.all([first.rest, second.rest]);
    assert.deepEqual(done, ['state A', 'state Gone', 'render A']);
  });
});

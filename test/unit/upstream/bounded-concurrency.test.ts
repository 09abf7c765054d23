import assert from 'node:assert/strict';
import { it } from 'node:test';
import { wikiConcurrency } from '../../../src/upstream/wiki.js';
import { HttpError } from '../../../src/util/errors.js';

it("keeps a wiki's requests under way within its bound, and refuses what would wait beyond 64 times as many", async () => {
  const bounded = wikiConcurrency(2);
  let running = 0;
  let most = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const task = () => bounded(async () => {
    running++;
    most = Math.max(most, running);
    await gate;
    running--;
    return 'done';
  });
  const all = Array.from({ length: 130 }, task);
  await new Promise((r) => setImmediate(r));
  assert.equal(running, 2, 'two under way, the rest waiting');
  await assert.rejects(task(), (e: unknown) => e instanceof HttpError && e.status === 503, 'the 131st is refused');
  open();
  assert.deepEqual(new Set(await Promise.all(all)), new Set(['done']));
  assert.equal(most, 2);
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InOrderBatches } from '../../../../../src/modules/page/follow/in-order-batches.js';

/** A batch whose finish waits for `end`. */
function held() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { end, finish: () => ended };
}

const settledWithin = async (p: Promise<void>, ms = 20) => Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('batches of changes applied in order', () => {
  it('lets batches be read ahead up to a number of changes, not of batches', async () => {
    const batches = new InOrderBatches();
    const small = Array.from({ length: 10 }, held);
    for (const b of small) batches.add(b.finish, 2);
    // Ten batches of two changes: within 300 changes ahead.
    assert.equal(await settledWithin(batches.atMost(300)), true);
    const big = held();
    batches.add(big.finish, 290);
    assert.equal(await settledWithin(batches.atMost(300)), false, '310 changes are under way');
    const waiting = batches.atMost(300);
    small[0]!.end();
    assert.equal(await settledWithin(waiting), false, '308 still');
    for (const b of small.slice(1, 5)) b.end();
    assert.equal(await settledWithin(waiting), true, 'at 300 once five of the small batches finished');
    for (const b of [...small.slice(5), big]) b.end();
    await batches.settled();
    assert.equal(batches.size, 0);
  });

  it('finishes a batch only after those added before it', async () => {
    const batches = new InOrderBatches();
    const order: number[] = [];
    const first = held();
    batches.add(async () => {
      await first.finish();
      order.push(1);
    });
    batches.add(async () => {
      order.push(2);
    });
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(order, []);
    first.end();
    await batches.settled();
    assert.deepEqual(order, [1, 2]);
  });
});

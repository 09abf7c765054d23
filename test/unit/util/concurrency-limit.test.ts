import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { boundedConcurrency, concurrencyLimit, mapAtMost } from '../../../src/util/concurrency-limit.js';

describe('a concurrency limit', () => {
  it('runs at most n tasks at once, starting them in the order given, each as soon as a place is free', async () => {
    const limit = concurrencyLimit(3);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const task = (i: number) => limit(async () => {
      started.push(i);
      most = Math.max(most, ++running);
      // Uneven lengths: places free up out of order.
      for (let t = 0; t < (i * 7) % 5; t++) await nextTurn();
      running--;
      return i * 2;
    });
    const first = Array.from({ length: 10 }, (_, i) => task(i));
    // Newcomers arriving while places are handed over wait their turn too.
    await nextTurn();
    const later = Array.from({ length: 10 }, (_, i) => task(10 + i));
    assert.deepEqual(await Promise.all([...first, ...later]), Array.from({ length: 20 }, (_, i) => i * 2));
    assert.equal(most, 3);
    assert.deepEqual(started, Array.from({ length: 20 }, (_, i) => i));
  });

  it('refuses a task at once past the tasks allowed to wait, and takes one again once a place frees', async () => {
    const limit = boundedConcurrency(2, 3, () => new Error('busy'));
    const gates: (() => void)[] = [];
    const task = () => limit(() => new Promise<string>((resolve) => gates.push(() => resolve('done'))));
    const admitted = Array.from({ length: 5 }, task);
    await assert.rejects(task(), /busy/, 'two running, three waiting: the sixth is refused');
    await nextTurn();
    assert.equal(gates.length, 2, 'two run');
    gates.shift()!();
    await nextTurn();
    const again = task();
    await nextTurn();
    for (let i = 0; i < 5; i++) {
      gates.shift()?.();
      await nextTurn();
    }
    assert.deepEqual(await Promise.all([...admitted, again]), Array(6).fill('done'));
  });

  it('frees a failed task\'s place, and hands its failure to its caller alone', async () => {
    const limit = concurrencyLimit(1);
    const failed = limit(async () => {
      throw new Error('no');
    });
    const after = limit(async () => 'ran');
    await assert.rejects(failed, /no/);
    assert.equal(await after, 'ran');
  });
});

describe('mapping at most n at a time', () => {
  it('gives each item\'s result in the items\' order, with at most n under way', async () => {
    let running = 0;
    let most = 0;
    const results = await mapAtMost(Array.from({ length: 50 }, (_, i) => i), 4, async (i) => {
      most = Math.max(most, ++running);
      for (let t = 0; t < i % 3; t++) await nextTurn();
      running--;
      return `item ${i}`;
    });
    assert.deepEqual(results, Array.from({ length: 50 }, (_, i) => `item ${i}`));
    assert.equal(most, 4);
  });
});

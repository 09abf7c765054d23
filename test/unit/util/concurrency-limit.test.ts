import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { boundedConcurrency, concurrencyLimit, fairConcurrency, mapAtMost } from '../../../src/util/concurrency-limit.js';

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

describe('a concurrency limit shared fairly by wikis', () => {
  /** Tasks that finish when told, and the order they started in. */
  function held() {
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const task = (name: string) => () => new Promise<string>((resolve) => {
      started.push(name);
      finish.set(name, () => resolve(name));
    });
    return { started, task, finish: async (name: string) => {
      finish.get(name)!();
      for (let i = 0; i < 3; i++) await nextTurn();
    } };
  }

  it('hands a freed place to the next wiki in turn, not to the oldest waiting task', async () => {
    const limit = fairConcurrency(1, 100, () => new Error('busy'));
    const { started, task, finish } = held();
    const all = [...['a1', 'a2', 'a3', 'a4'].map((t) => limit('a', task(t))), limit('b', task('b1')), limit('c', task('c1')), limit('b', task('b2'))];
    await nextTurn();
    for (const name of ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4']) await finish(name);
    assert.deepEqual(started, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4'], 'a, b, c in turn once a1 ends');
    assert.equal((await Promise.all(all)).length, 7);
  });

  it('lets one wiki alone use every waiting place, and gives a newcomer\'s wiki a place taken from the wiki waiting for the most', async () => {
    const limit = fairConcurrency(1, 4, () => new Error('busy'));
    const { started, task, finish } = held();
    const outcome = (p: Promise<string>) => p.then((name) => name, (err: Error) => `refused: ${err.message}`);
    const flood = ['a0', 'a1', 'a2', 'a3', 'a4'].map((t) => outcome(limit('a', task(t))));
    await nextTurn();
    assert.equal(await outcome(limit('a', task('a5'))), 'refused: busy', 'one running, four waiting: the flood\'s next is refused');
    const b = ['b1', 'b2'].map((t) => outcome(limit('b', task(t))));
    assert.equal(await outcome(limit('b', task('b3'))), 'refused: busy', 'two each: b\'s third takes no place from a');
    for (const name of ['a0', 'a1', 'b1', 'a2', 'b2']) await finish(name);
    assert.deepEqual(await Promise.all([...flood, ...b]), ['a0', 'a1', 'a2', 'refused: busy', 'refused: busy', 'b1', 'b2'], 'a\'s newest two gave their places to b');
    assert.deepEqual(started, ['a0', 'a1', 'b1', 'a2', 'b2']);
  });

  it('frees the place of a task that fails', async () => {
    const limit = fairConcurrency(1, 1, () => new Error('busy'));
    const failed = limit('a', async () => {
      throw new Error('no');
    });
    const after = limit('b', async () => 'ran');
    await assert.rejects(failed, /no/);
    assert.equal(await after, 'ran');
    assert.equal(await limit('a', async () => 'again'), 'again');
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

import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { WriteBatch } from '../../../src/http/write-batch.js';

describe('write batch', () => {
  it('holds writes until the end of the turn, then makes them in the order given', async () => {
    const done: number[] = [];
    const batch = new WriteBatch(() => assert.fail('no write throws'), 16);
    for (let i = 0; i < 5; i++) batch.send(() => done.push(i));
    await Promise.resolve();
    assert.deepEqual(done, [], 'nothing written while the turn goes on');
    await nextTurn();
    assert.deepEqual(done, [0, 1, 2, 3, 4]);
  });

  it('writes at once when the bound is reached, and the rest at the end of the turn', async () => {
    const done: number[] = [];
    const batch = new WriteBatch(() => assert.fail('no write throws'), 4);
    for (let i = 0; i < 10; i++) batch.send(() => done.push(i));
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5, 6, 7], 'two full batches went out at once');
    await nextTurn();
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('reports a write that throws and still makes the others', async () => {
    const done: string[] = [];
    const errors: unknown[] = [];
    const batch = new WriteBatch((err) => errors.push(err));
    batch.send(() => done.push('a'));
    batch.send(() => {
      throw new Error('invalid header');
    });
    batch.send(() => done.push('c'));
    await nextTurn();
    assert.deepEqual(done, ['a', 'c']);
    assert.equal((errors[0] as Error).message, 'invalid header');
  });

  it('writes what is sent in a later turn in that turn', async () => {
    const done: number[] = [];
    const batch = new WriteBatch(() => {});
    batch.send(() => done.push(1));
    await nextTurn();
    batch.send(() => done.push(2));
    await nextTurn();
    assert.deepEqual(done, [1, 2]);
  });
});

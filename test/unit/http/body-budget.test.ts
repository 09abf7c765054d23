import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BodyBudget } from '../../../src/http/body-budget.js';
import { HttpError } from '../../../src/util/errors.js';

describe('the bytes of request bodies held at once', () => {
  it('lets bodies in while they fit, the next in order as room frees, one larger than all when alone', async () => {
    const budget = new BodyBudget(100);
    const a = await budget.take(60);
    const b = await budget.take(40);
    assert.equal(budget.size, 100);
    const order: string[] = [];
    const c = budget.take(50).then((release) => (order.push('c'), release));
    const d = budget.take(10).then((release) => (order.push('d'), release));
    const huge = budget.take(1000).then((release) => (order.push('huge'), release));
    await nextTurn();
    assert.deepEqual(order, [], 'full: all wait, the small one too (it would overtake)');
    a();
    a();
    const releaseC = await c;
    const releaseD = await d;
    assert.deepEqual(order, ['c', 'd'], 'in order, once room is there; released twice, given back once');
    assert.equal(budget.size, 100);
    b();
    releaseC();
    await nextTurn();
    assert.deepEqual(order, ['c', 'd'], 'the largest waits until it is alone');
    releaseD();
    (await huge)();
    assert.deepEqual(order, ['c', 'd', 'huge']);
    assert.equal(budget.size, 0);
  });

  it('refuses with a 503 one that waited too long, and lets the smaller ones behind it in', async () => {
    const budget = new BodyBudget(100, 50);
    const first = await budget.take(90);
    const big = budget.take(50);
    const small = budget.take(10);
    await assert.rejects(big, (e: HttpError) => e.status === 503 && e.problemType === 'urn:problem:bodies-busy' && e.headers['retry-after'] === '2');
    (await small)();
    first();
    assert.equal(budget.size, 0);
  });
});

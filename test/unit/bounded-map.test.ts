import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BoundedMap, SecondSight } from '../../src/util/bounded-map.js';

describe('BoundedMap', () => {
  it('holds at most its bound, starting over when a new key would pass it', () => {
    const map = new BoundedMap<string, number>(3);
    for (const [i, k] of ['a', 'b', 'c'].entries()) map.set(k, i);
    map.set('b', 10);
    assert.equal(map.size, 3, 'a known key is replaced in place');
    assert.equal(map.get('b'), 10);
    map.set('d', 4);
    assert.deepEqual([...map], [['d', 4]]);
  });

  it('remembers: makes a value once per key while it is kept', () => {
    const map = new BoundedMap<string, number>(2);
    let made = 0;
    const make = () => ++made;
    assert.equal(map.remember('a', make), 1);
    assert.equal(map.remember('a', make), 1, 'kept: not made again');
    assert.equal(map.remember('b', make), 2);
    assert.equal(map.remember('c', make), 3, 'full: starts over');
    assert.equal(map.remember('a', make), 4, 'forgotten when it started over: made again');
  });
});

describe('SecondSight', () => {
  it('admits a key the second time it comes soon, not the first, nor after more keys than it remembers', () => {
    const door = new SecondSight(4);
    assert.equal(door.admits('a'), false);
    assert.equal(door.admits('a'), true);
    assert.equal(door.admits('a'), false, 'forgotten once admitted');
    for (const k of ['b', 'c', 'd', 'e', 'f']) door.admits(k);
    assert.equal(door.admits('b'), false, 'too long ago');
  });
});

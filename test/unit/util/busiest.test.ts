import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Busiest } from '../../../src/util/busiest.js';

it('finds the busiest keys of a long tail in bounded memory', () => {
  const busiest = new Busiest(100);
  // Three busy keys among ten thousand seen once each, interleaved.
  for (let i = 0; i < 10_000; i++) {
    busiest.add(`tail${i}`);
    if (i % 10 === 0) busiest.add('busy-a');
    if (i % 20 === 0) busiest.add('busy-b');
    if (i % 40 === 0) busiest.add('busy-c');
  }
  assert.deepEqual(busiest.top(3).map(([k]) => k), ['busy-a', 'busy-b', 'busy-c']);
  assert.ok(busiest.top(1000).length <= 100, 'never more counters than kept');
});

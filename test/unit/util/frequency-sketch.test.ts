import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrequencySketch } from '../../../src/util/frequency-sketch.js';

describe('the frequency sketch', () => {
  it('counts uses of each key, saturating at 15, and never under-counts', () => {
    const sketch = new FrequencySketch(8192, 1_000_000);
    for (let i = 0; i < 3; i++) sketch.increment('a');
    for (let i = 0; i < 40; i++) sketch.increment('b');
    assert.equal(sketch.frequency('a'), 3);
    assert.equal(sketch.frequency('b'), 15);
    assert.equal(sketch.frequency('never'), 0);
    // 2,000 keys used once each in 8,192 counters a row: collisions may add, never take away.
    for (let i = 0; i < 2000; i++) sketch.increment(`k${i}`);
    for (let i = 0; i < 2000; i++) assert.ok(sketch.frequency(`k${i}`) >= 1);
    const overCounted = Array.from({ length: 2000 }, (_, i) => sketch.frequency(`k${i}`)).filter((f) => f > 2).length;
    assert.ok(overCounted < 20, `${overCounted} of 2,000 keys read as used more than twice`);
  });

  it('halves every count once its sample of uses is counted, so old popularity fades', () => {
    const sketch = new FrequencySketch(1024, 100);
    for (let i = 0; i < 12; i++) sketch.increment('old');
    for (let i = 0; i < 88; i++) sketch.increment(`other${i % 50}`);
    assert.equal(sketch.frequency('old'), 6);
    // The count of uses is halved too: the next halving comes after half a sample.
    for (let i = 0; i < 50; i++) sketch.increment(`later${i % 40}`);
    assert.equal(sketch.frequency('old'), 3);
  });
});

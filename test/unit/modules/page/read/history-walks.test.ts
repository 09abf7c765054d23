import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HistoryWalks } from '../../../../../src/modules/page/read/history-walks.js';

describe('walks through a page history, seen from reads due for their check', () => {
  it('names the direction of a walk from its second due read of the page within half a minute', () => {
    const walks = new HistoryWalks();
    assert.equal(walks.walked('w', 'A', 100, 0), undefined, 'one read is no walk');
    assert.equal(walks.walked('w', 'A', 99, 1_000), 'older');
    assert.equal(walks.walked('w', 'A', 60, 2_000), 'older', 'past revisions checked ahead');
    assert.equal(walks.walked('w', 'A', 61, 3_000), 'newer');
    assert.equal(walks.walked('w', 'A', 61, 4_000), undefined, 'the same revision again is no step');
    assert.equal(walks.walked('w', 'A', 62, 40_000), undefined, 'too long after the last');
    assert.equal(walks.walked('w', 'B', 61, 40_001), undefined, 'another page is another walk');
    assert.equal(walks.walked('v', 'A', 61, 40_002), undefined, 'another wiki too');
  });

  it('checks a revision ahead once at a time, and at most 200 revisions of a wiki at once', () => {
    const walks = new HistoryWalks();
    assert.equal(walks.begin('w', 'A', 1), true);
    assert.equal(walks.begin('w', 'A', 1), false, 'already under way');
    walks.done('w', 'A', 1);
    assert.equal(walks.begin('w', 'A', 1), true, 'free again once done');
    for (let rev = 2; rev <= 200; rev++) assert.equal(walks.begin('w', 'A', rev), true);
    assert.equal(walks.begin('w', 'B', 1), false, 'the wiki has no place left');
    assert.equal(walks.begin('v', 'B', 1), true, 'another wiki has its own');
    walks.done('w', 'A', 7);
    assert.equal(walks.begin('w', 'B', 1), true, 'a place given back is taken');
  });
});

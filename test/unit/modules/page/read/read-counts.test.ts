import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReadCounts } from '../../../../../src/modules/page/read/read-counts.js';

describe('read counts', () => {
  it('counts a page once whichever form its title comes in (stored with underscores, listed by the wiki with spaces)', () => {
    const reads = new ReadCounts();
    reads.note('wiki.test', 'Main_Page');
    reads.note('wiki.test', 'Main Page');
    assert.equal(reads.of('wiki.test', 'Main Page'), 2);
    assert.equal(reads.of('wiki.test', 'Main_Page'), 2);
    assert.equal(reads.of('other.test', 'Main Page'), 0);
  });
});

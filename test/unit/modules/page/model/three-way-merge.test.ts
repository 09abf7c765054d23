import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeWikitext } from '../../../../../src/modules/page/model/three-way-merge.js';

describe('three-way merge of wikitext', () => {
  const base = 'Alpha.\n\nBeta.\n\nGamma.';

  it('takes each side\'s changes to lines the other left alone', () => {
    assert.deepEqual(mergeWikitext(base, 'Alpha, ours.\n\nBeta.\n\nGamma.', 'Alpha.\n\nBeta.\n\nGamma, theirs.'), { clean: true, text: 'Alpha, ours.\n\nBeta.\n\nGamma, theirs.' });
  });

  it('takes the same change made on both sides once', () => {
    const same = 'Alpha.\n\nBeta, both.\n\nGamma.';
    assert.deepEqual(mergeWikitext(base, same, same), { clean: true, text: same });
    assert.deepEqual(mergeWikitext(base, 'New first line.\nAlpha.\n\nBeta, both.\n\nGamma.', same), { clean: true, text: 'New first line.\nAlpha.\n\nBeta, both.\n\nGamma.' });
  });

  it('reports different changes to the same lines as hunks, with their line in the base', () => {
    assert.deepEqual(mergeWikitext(base, 'Alpha.\n\nBeta, ours.\n\nGamma.', 'Alpha.\n\nBeta, theirs.\n\nGamma.'), {
      clean: false,
      conflicts: [{ base_line: 3, base: ['Beta.'], ours: ['Beta, ours.'], theirs: ['Beta, theirs.'] }],
    });
  });

  it('keeps one side whole when the other did not change', () => {
    assert.deepEqual(mergeWikitext(base, base, 'Anything.'), { clean: true, text: 'Anything.' });
    assert.deepEqual(mergeWikitext(base, 'Anything.', base), { clean: true, text: 'Anything.' });
  });
});

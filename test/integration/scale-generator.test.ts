import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scaleScenario } from '../../bench/scenarios/scale.js';
import { WIKI_URL } from '../wiki.js';

/**
 * The scale benchmark's generator, on a small store: what a full run would measure is sound only
 * if the store it grows is served as a running service would serve it (no read failing, none
 * reaching the wiki) and its listings page to their ends. No timing is asserted.
 */
describe('the scale benchmark on a small SQLite store (a smoke test of its generator)', () => {
  it('grows a store of real renders, reads every sampled page and render from it alone (by time too), and pages its listings to the end', async () => {
    const [row] = await scaleScenario({ name: 'sqlite' }, [2000], WIKI_URL, 1);
    assert.ok(row);
    assert.ok(row.renders >= 2000, `${row.renders} renders`);
    assert.equal(row.wikiRequestsDuringReads, 0, 'every read served from the store');
    assert.deepEqual(Object.keys(row.reads), ['latest', 'by revid', 'by tid', 'by time (?ts=)']);
    for (const [name, sample] of Object.entries(row.reads)) assert.ok(sample.rps > 0, `${name}: ${sample.rps} req/s`);
    assert.ok(row.listing.pages >= 1);
    // The long history (500 revisions here), 100 renders a page: five full pages at least.
    assert.ok(row.history.pages >= 5, `${row.history.pages} pages of history`);
    assert.ok(row.gzippedPartsPerRender > 0 && row.bytesPerRender >= row.gzippedPartsPerRender * 0.5, `${row.bytesPerRender} bytes a render`);
  });
});

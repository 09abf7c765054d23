import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderedTid, SAVE_STEPS, saveTransaction, step } from '../../../../../src/modules/page/edit/save-steps.js';

describe("a save's transaction steps", () => {
  it('builds each step from the route its module serves, the title as one path segment', () => {
    const txn = saveTransaction({ domain: 'wiki.test', title: 'AC/DC', rev: 12, from: 11, row: {}, lock: 'l1', purge: true });
    assert.equal(txn.uri, '/wiki.test/sys/page_saves/AC%2FDC/12');
    assert.deepEqual(txn.then.map((s) => [s.name, s.method, s.uri]), [
      ['release', 'DELETE', '/wiki.test/sys/page_saves/AC%2FDC/lock/l1'],
      ['render', 'PUT', '/wiki.test/sys/page_renders/AC%2FDC/12'],
      ['purge', 'PUT', '/wiki.test/sys/page_purges/AC%2FDC'],
    ]);
    // Each URI is its route's path with the parameters in place: the same declaration serves both sides.
    for (const s of txn.then) {
      const route = SAVE_STEPS[s.name as keyof typeof SAVE_STEPS];
      assert.match(s.uri.slice('/wiki.test/sys'.length), new RegExp(`^${route.path.replace(/\{\w+\}/g, '[^/]+')}$`));
    }
    assert.throws(() => step('wiki.test', 'record', SAVE_STEPS.record, { title: 'X' }), /no value for \{rev\}/);
  });

  it("reads the render's tid from the render step's answer, not from a header", () => {
    const tid = '6f1c2d40-ea95-11f1-8000-5f1d7c3b2a10';
    assert.equal(renderedTid({ then: [{ name: 'release' }, { name: 'render', body: { title: 'X', rev: 1, tid } }] }), tid);
    assert.equal(renderedTid({ then: [{ name: 'render', headers: { etag: `"1/${tid}"` } }] }), null);
    assert.equal(renderedTid(undefined), null);
  });
});

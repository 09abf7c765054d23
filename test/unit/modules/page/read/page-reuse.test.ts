import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PageCaches } from '../../../../../src/modules/page/read/page-caches.js';

describe("a page answer's reuse", () => {
  const caches = () => new PageCaches({ rowTtlMs: 5000, renderBytes: 1024 * 1024, missTtlMs: 0 });

  it('holds until this process writes the page, for a second at most', () => {
    const c = caches();
    const reuse = c.reuseOfPage('d', 'Page')(() => true, () => {});
    assert.ok(reuse.valid!());
    assert.ok(reuse.until <= Date.now() + 1000);
    c.rowsOf('d').invalidate('Other');
    assert.ok(reuse.valid!(), 'another page written');
    c.rowsOf('d').invalidate('Page');
    assert.equal(reuse.valid!(), false);
  });

  it('does not outlive a write made while the answer was being made', () => {
    const c = caches();
    const make = c.reuseOfPage('d', 'Page'); // taken before the page's state is read
    c.rowsOf('d').invalidate('Page'); // a write lands before the answer is finished
    assert.equal(make(() => true, () => {}).valid!(), false);
  });

  it("adds the handler's own conditions, and is never longer than the page's state may be kept", () => {
    const c = caches();
    let open = false;
    assert.equal(c.reuseOfPage('d', 'P')(() => !open, () => {}).valid!(), true);
    open = true;
    assert.equal(c.reuseOfPage('d', 'P')(() => !open, () => {}).valid!(), false);
    const none = new PageCaches({ rowTtlMs: 0, renderBytes: 1024, missTtlMs: 0 });
    assert.ok(none.reuseOfPage('d', 'P')(() => true, () => {}).until <= Date.now());
  });
});

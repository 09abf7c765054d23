import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openStorage } from '../../../../src/storage/index.js';
import { ReadCache } from '../../../../src/storage/sql/read-cache.js';
import { freshDomain, tempDir } from '../../../helpers.js';

describe('the SQLite read cache', () => {
  it('counts the queries naming its answers against its memory, not only the answers', () => {
    const cache = new ReadCache(1024 * 1024);
    const longQuery = (i: number) => `${i}:${'x'.repeat(200 * 1024)}`;
    for (let i = 0; i < 20; i++) cache.set(longQuery(i), { items: [{ k: i }] }, 1, undefined, () => true);
    const kept = Array.from({ length: 20 }, (_, i) => cache.get(longQuery(i), 1, Date.now())).filter(Boolean).length;
    assert.ok(kept >= 1 && kept <= 2, `${kept} answers with 400 KB queries kept in 1 MB`);
  });

  it('keeps small answers at once, answers of large values or with a blob only when read again soon', () => {
    const cache = new ReadCache(16 * 1024 * 1024);
    const large = (k: string) => ({ items: [{ k, v: Buffer.alloc(64 * 1024) }] });
    cache.set('small', { items: [{ k: 'a', v: 'text', n: 1 }] }, 1, undefined, () => true);
    cache.set('large', large('b'), 1, undefined, () => true);
    cache.set('blob', { items: [{ k: 'c', v: Buffer.alloc(1024) }] }, 1, undefined, () => true);
    assert.ok(cache.get('small', 1, Date.now()));
    assert.equal(cache.get('large', 1, Date.now()), undefined, 'a large answer read once is not kept');
    assert.equal(cache.get('blob', 1, Date.now()), undefined, 'a small answer with a blob (a render) read once is not kept');
    cache.set('blob', { items: [{ k: 'c', v: Buffer.alloc(1024) }] }, 1, undefined, () => true);
    assert.ok(cache.get('blob', 1, Date.now()), 'read again at once, it is kept');
    cache.set('large', large('b'), 1, undefined, () => true);
    assert.ok(cache.get('large', 1, Date.now()), 'read again at once, it is kept');
    // A scan: each large answer comes back only after thousands of others.
    for (let round = 0; round < 2; round++) for (let i = 0; i < 3000; i++) cache.set(`scan${i}`, large(`s${i}`), 1, undefined, () => true);
    assert.equal(cache.get('scan0', 1, Date.now()), undefined, 'a scan over more than it remembers keeps nothing');
  });

  it('takes any size in megabytes, a fraction of a byte meaning none', async () => {
    for (const read_cache_mb of [1e-9, 0.5]) {
      const storage = await openStorage({ backend: 'sqlite', path: path.join(tempDir(), 'db.sqlite3'), read_cache_mb });
      const domain = freshDomain();
      await storage.createTable(domain, 't', { attributes: { k: 'string' }, index: [{ attribute: 'k', type: 'hash' }] });
      await storage.put(domain, { table: 't', attributes: { k: 'a' } });
      for (let i = 0; i < 2; i++) assert.deepEqual((await storage.get(domain, { table: 't', attributes: { k: 'a' }, proj: ['k'] })).items, [{ k: 'a' }]);
      await storage.close();
    }
  });

  it("sees its own writes at once, and another process's once it has committed", async () => {
    const file = path.join(tempDir(), 'db.sqlite3');
    const [ours, theirs] = [await openStorage({ backend: 'sqlite', path: file }), await openStorage({ backend: 'sqlite', path: file })];
    try {
      const domain = freshDomain();
      await ours.createTable(domain, 't', { attributes: { k: 'string', v: 'int' }, index: [{ attribute: 'k', type: 'hash' }] });
      const read = async (storage = ours) => (await storage.get(domain, { table: 't', attributes: { k: 'a' } })).items[0]?.v;
      await ours.put(domain, { table: 't', attributes: { k: 'a', v: 1 } });
      assert.equal(await read(), 1);
      for (let v = 2; v < 6; v++) {
        await ours.put(domain, { table: 't', attributes: { k: 'a', v } });
        assert.equal(await read(), v, 'its own write, read at once');
      }
      await read(theirs);
      await theirs.put(domain, { table: 't', attributes: { k: 'a', v: 10 } });
      assert.equal(await read(), 10, "another process's write, once committed");
    } finally {
      await ours.close();
      await theirs.close();
    }
  });
});

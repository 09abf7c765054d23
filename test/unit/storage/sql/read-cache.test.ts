import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openStorage } from '../../../../src/storage/index.js';
import { ReadCache, sizeOfAnswer } from '../../../../src/storage/sql/read-cache.js';
import { SqliteDriver } from '../../../../src/storage/sqlite/sqlite-driver.js';
import { freshDomain, tempDir } from '../../../helpers.js';

describe('the SQLite read cache', () => {
  /** Keeps an answer as the storage does: only what the doorkeeper admits. */
  const keep = (cache: ReadCache, key: string, result: { items: Record<string, unknown>[] }, version = 1) => {
    if (cache.admits(key, sizeOfAnswer(result.items))) cache.set(key, result, version, undefined, () => true);
  };

  it('counts the queries naming its answers against its memory, not only the answers', () => {
    const cache = new ReadCache(1024 * 1024);
    const longQuery = (i: number) => `${i}:${'x'.repeat(200 * 1024)}`;
    for (let i = 0; i < 20; i++) cache.set(longQuery(i), { items: [{ k: i }] }, 1, undefined, () => true);
    const kept = Array.from({ length: 20 }, (_, i) => cache.get(longQuery(i), 1, Date.now())).filter(Boolean).length;
    assert.ok(kept >= 1 && kept <= 2, `${kept} answers with 400 KB queries kept in 1 MB`);
  });

  it('keeps an answer read again soon, not one read once; a large one only when read again among fewer others', () => {
    const cache = new ReadCache(16 * 1024 * 1024);
    const large = (k: string) => ({ items: [{ k, v: Buffer.alloc(64 * 1024) }] });
    const small = (k: string) => ({ items: [{ k, v: 'text', n: 1 }] });
    keep(cache, 'small', small('a'));
    keep(cache, 'large', large('b'));
    keep(cache, 'blob', { items: [{ k: 'c', v: Buffer.alloc(1024) }] });
    assert.equal(cache.get('small', 1, Date.now()), undefined, 'a small answer read once is not kept');
    assert.equal(cache.get('large', 1, Date.now()), undefined, 'a large answer read once is not kept');
    assert.equal(cache.get('blob', 1, Date.now()), undefined, 'a small answer with a blob (a render) read once is not kept');
    const again: [string, { items: Record<string, unknown>[] }][] = [['small', small('a')], ['blob', { items: [{ k: 'c', v: Buffer.alloc(1024) }] }], ['large', large('b')]];
    for (const [key, result] of again) {
      keep(cache, key, result);
      assert.ok(cache.get(key, 1, Date.now()), `${key}: read again at once, it is kept`);
    }
    // Reads spread over more than the doorkeepers remember: each answer comes back after thousands of others.
    for (let round = 0; round < 2; round++) for (let i = 0; i < 3000; i++) keep(cache, `scan${i}`, large(`s${i}`));
    assert.equal(cache.get('scan0', 1, Date.now()), undefined, 'a scan of large answers over more than it remembers keeps nothing');
    for (let round = 0; round < 2; round++) for (let i = 0; i < 20_000; i++) keep(cache, `spread${i}`, small(`s${i}`));
    assert.equal(cache.get('spread0', 1, Date.now()), undefined, 'nor one of small answers');
    for (let i = 0; i < 3000; i++) keep(cache, `twice${i}`, small(`t${i}`));
    for (let i = 0; i < 3000; i++) keep(cache, `twice${i}`, small(`t${i}`));
    assert.ok(cache.get('twice0', 1, Date.now()), 'small answers read again among a few thousand others are kept');
  });

  it('sizes an answer in one walk: a blob in any row makes it large, as does text over 16 KB', () => {
    const small = sizeOfAnswer([{ k: 'a', n: 1 }, { k: 'b', n: 2, tags: ['x', 'y'] }]);
    assert.equal(small.large, false);
    assert.ok(small.bytes > 100 && small.bytes < 1024, `${small.bytes} bytes`);
    assert.equal(sizeOfAnswer([{ k: 'a' }, { k: 'b', v: Buffer.alloc(10) }]).large, true, 'a blob in the second row');
    const text = sizeOfAnswer([{ k: 'a', v: 'x'.repeat(9 * 1024) }]);
    assert.equal(text.large, true, 'two bytes a character: 18 KB of text');
    assert.ok(text.bytes > 18 * 1024, `${text.bytes} bytes`);
    assert.equal(sizeOfAnswer([]).large, false);
  });

  it('keeps at once the answer read after a kept one was ended by a commit', () => {
    const cache = new ReadCache(16 * 1024 * 1024);
    const answer = { items: [{ k: 'a', n: 1 }] };
    keep(cache, 'q', answer);
    keep(cache, 'q', answer);
    assert.ok(cache.get('q', 1, Date.now()));
    assert.equal(cache.get('q', 2, Date.now()), undefined, 'a commit ends it');
    keep(cache, 'q', { items: [{ k: 'a', n: 2 }] }, 2);
    assert.deepEqual(cache.get('q', 2, Date.now())?.items, [{ k: 'a', n: 2 }], 'read once after, it is kept');
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

  it('asks the data version only for a read whose answer is kept or could be: not for a query read once', async () => {
    const storage = await openStorage({ backend: 'sqlite', path: path.join(tempDir(), 'db.sqlite3') });
    const original = SqliteDriver.prototype.dataVersion;
    let asked = 0;
    SqliteDriver.prototype.dataVersion = function (this: SqliteDriver) {
      asked++;
      return original.call(this);
    };
    try {
      const domain = freshDomain();
      await storage.createTable(domain, 't', { attributes: { k: 'string', v: 'int' }, index: [{ attribute: 'k', type: 'hash' }] });
      for (let i = 0; i < 100; i++) await storage.put(domain, { table: 't', attributes: { k: `k${i}`, v: i } });
      const read = async (i: number) => (await storage.get(domain, { table: 't', attributes: { k: `k${i}` } })).items[0]?.v;
      assert.equal(await read(0), 0, 'the definition read in, the epoch checked');
      const askedBefore = asked;
      for (let i = 1; i < 100; i++) assert.equal(await read(i), i);
      assert.equal(asked - askedBefore, 0, 'queries read once: their answers would not be kept, no version asked');
      assert.equal(await read(1), 1);
      assert.equal(asked - askedBefore, 1, 'read again: kept, under the version asked before it was read');
      assert.equal(await read(1), 1);
      assert.equal(asked - askedBefore, 2, 'read from the cache once its version is confirmed');
      await storage.put(domain, { table: 't', attributes: { k: 'k1', v: 101 } });
      assert.equal(await read(1), 101, 'a commit ends the kept answer');
    } finally {
      SqliteDriver.prototype.dataVersion = original;
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

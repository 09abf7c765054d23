import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import { openStorage } from '../../src/storage/index.js';
import { MariadbDriver } from '../../src/storage/mariadb/mariadb-driver.js';
import { SqlTableStorage } from '../../src/storage/sql/sql-table-storage.js';
import { physicalNames } from '../../src/storage/sql/names.js';
import { freshDomain, MARIADB_URL, mariadbConfig } from '../helpers.js';
import { rejectsWith, storageConformance } from './conformance.js';

storageConformance('mariadb', mariadbConfig);

const titles = {
  table: 'titles',
  attributes: { title: 'string', tid: 'timeuuid', body: 'string' },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
  secondaryIndexes: { by_body: [{ attribute: 'body', type: 'hash' }, { attribute: 'title', type: 'range' }] },
};
const TID = 'a3f6e2b0-8f3c-11ef-8000-000000000001';

describe('mariadb: what its index key limits and strict mode mean for keys', () => {
  it("keeps the longest title MediaWiki allows (255 bytes of 4-byte characters) as a key, and refuses a key past its column's length with a 400, writing nothing", async () => {
    const storage = await openStorage(mariadbConfig());
    try {
      const domain = freshDomain();
      await storage.createTable(domain, 'titles', titles);
      const longest = '😀'.repeat(63) + 'abc';
      const body = 'x'.repeat(100_000);
      await storage.put(domain, { table: 'titles', attributes: { title: longest, tid: TID, body } });
      assert.deepEqual((await storage.get(domain, { table: 'titles', attributes: { title: longest } })).items.map((r) => r.body), [body]);
      // A long value in an indexed column is indexed by its prefix and still found by its whole value.
      assert.deepEqual((await storage.get(domain, { table: 'titles', index: 'by_body', attributes: { body } })).items.map((r) => r.title), [longest]);
      const tooLong = 'y'.repeat(5000);
      await rejectsWith(storage.put(domain, { table: 'titles', attributes: { title: tooLong, tid: TID, body: 'b' } }), 400, /does not fit/);
      assert.deepEqual((await storage.get(domain, { table: 'titles', attributes: { title: tooLong } })).items, []);
    } finally {
      await storage.close();
    }
  });
});

describe('mariadb: connections the server closes', () => {
  it('answers again once every connection of the pool was killed by the server (no 500: a 503 at worst)', async () => {
    const driver = await MariadbDriver.open(MARIADB_URL, 3);
    const storage = await SqlTableStorage.open(driver);
    const admin = await mysql.createConnection(MARIADB_URL);
    try {
      const domain = freshDomain();
      await storage.createTable(domain, 'titles', titles);
      await storage.put(domain, { table: 'titles', attributes: { title: 't1', tid: TID, body: 'b' } });
      // The pool's three connections, each busy at once so that each answers (other files share the database user).
      const ids = await Promise.all([1, 2, 3].map(async () => (await driver.one('SELECT CONNECTION_ID() AS id, SLEEP(0.2) AS s', []))!.id));
      assert.equal(new Set(ids).size, 3);
      for (const id of ids) await admin.query(`KILL CONNECTION ${Number(id)}`);
      const outcomes: string[] = [];
      for (let i = 0; i < 6; i++) {
        try {
          outcomes.push((await storage.get(domain, { table: 'titles', attributes: { title: 't1' } })).items.length === 1 ? 'ok' : 'empty');
        } catch (err) {
          await rejectsWith(Promise.reject(err), 503);
          outcomes.push('503');
        }
      }
      assert.equal(outcomes.at(-1), 'ok', outcomes.join(' '));
      assert.ok(outcomes.filter((o) => o === '503').length <= 3, outcomes.join(' '));
    } finally {
      await admin.end();
      await storage.close();
    }
  });

  it('answers 503 while the server cannot be reached', async () => {
    const url = new URL(MARIADB_URL);
    url.port = '1';
    await assert.rejects(openStorage({ backend: 'mariadb', url: url.toString() }), (err: Error & { code?: string }) => err.code === 'ECONNREFUSED');
  });
});

describe('mariadb: reads of a secondary index', () => {
  it("go through that index, not along a partition's primary key in the order asked", async () => {
    const driver = await MariadbDriver.open(MARIADB_URL, 8);
    const reads: { sql: string; params: readonly unknown[] }[] = [];
    const all = driver.all.bind(driver);
    driver.all = (sql, params) => {
      reads.push({ sql, params });
      return all(sql, params);
    };
    const storage = await SqlTableStorage.open(driver);
    try {
      const domain = freshDomain();
      // A render store's shape: a page's renders by revision and tid, and found by tid alone.
      await storage.createTable(domain, 'renders', {
        attributes: { title: 'string', rev: 'int', tid: 'timeuuid', body: 'string' },
        index: [{ attribute: 'title', type: 'hash' }, { attribute: 'rev', type: 'range', order: 'desc' }, { attribute: 'tid', type: 'range', order: 'desc' }],
        secondaryIndexes: { by_tid: [{ attribute: 'tid', type: 'hash' }, { attribute: 'title', type: 'range' }, { attribute: 'rev', type: 'proj' }] },
      });
      const tid = (rev: number) => `${(0xa3f6e2b0 + rev).toString(16)}-8f3c-11ef-8000-000000000001`;
      // Long enough a history that walking it in order looks cheaper to the planner than a seek and a sort.
      for (let from = 1; from <= 3000; from += 100) {
        await Promise.all(Array.from({ length: 100 }, (_, i) => storage.put(domain, { table: 'renders', attributes: { title: 'Long', rev: from + i, tid: tid(from + i), body: `b${from + i}` } })));
      }
      const before = reads.length;
      const { items } = await storage.get(domain, { table: 'renders', index: 'by_tid', attributes: { tid: tid(1), title: 'Long' }, limit: 1 });
      assert.deepEqual(items.map((r) => [r.rev, r.body]), [[1, 'b1']]);
      const read = reads.slice(before).find((r) => r.sql.startsWith('SELECT') && r.sql.includes(physicalNames(domain, 'renders').main));
      assert.ok(read, 'the read was made');
      const plan = (await driver.all(`EXPLAIN ${read.sql}`, read.params)) as { table: string; key: string | null }[];
      const main = plan.find((row) => row.table === 'm');
      assert.match(main?.key ?? '', new RegExp(`^${physicalNames(domain, 'renders').main}_i_\\w+$`), JSON.stringify(plan));
    } finally {
      await storage.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import mysql from 'mysql2/promise';
import { openStorage } from '../../src/storage/index.js';
import { MariadbDriver } from '../../src/storage/mariadb/mariadb-driver.js';
import { SqlTableStorage } from '../../src/storage/sql/sql-table-storage.js';
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

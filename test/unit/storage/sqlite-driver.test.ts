import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteDriver } from '../../../src/storage/sqlite/sqlite-driver.js';

describe('SQLite driver: one statement alone beside transactions', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-driver-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('runs a statement alone after a transaction under way, never inside it, and keeps it when that transaction rolls back', async () => {
    const driver = new SqliteDriver(path.join(dir, 'order.sqlite3'));
    try {
      await driver.run('CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)', []);
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const tx = driver.transaction(undefined, async (x) => {
        await x.run("INSERT INTO t VALUES ('in-tx', 'a')", []);
        order.push('tx wrote');
        await held;
        throw new Error('rolled back');
      });
      await new Promise((resolve) => setImmediate(resolve));
      const alone = driver.runAlone("INSERT INTO t VALUES ('alone', 'b')", []).then((n) => (order.push('alone wrote'), n));
      release();
      await assert.rejects(tx, /rolled back/);
      assert.equal(await alone, 1);
      assert.deepEqual(order, ['tx wrote', 'alone wrote']);
      assert.deepEqual((await driver.all('SELECT k FROM t ORDER BY k', [])).map((r) => r.k), ['alone']);
    } finally {
      await driver.close();
    }
  });

  it('with nothing queued, answers a failing statement as a rejected promise, and the queue goes on', async () => {
    const driver = new SqliteDriver(path.join(dir, 'fail.sqlite3'));
    try {
      await driver.run('CREATE TABLE t (k TEXT PRIMARY KEY)', []);
      const failing = driver.runAlone("INSERT INTO missing VALUES ('x')", []);
      assert.ok(failing instanceof Promise);
      await assert.rejects(failing, /no such table/);
      assert.equal(await driver.runAlone("INSERT INTO t VALUES ('x')", []), 1);
      await assert.rejects(driver.runAlone("INSERT INTO t VALUES ('x')", []), /UNIQUE/);
      // A write after them is not held up by them.
      assert.equal(await driver.transaction(undefined, (x) => x.run("INSERT INTO t VALUES ('y')", [])), 1);
      assert.equal((await driver.all('SELECT count(*) AS n FROM t', []))[0]!.n, 2n);
    } finally {
      await driver.close();
    }
  });
});

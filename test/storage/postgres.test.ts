import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import postgres from 'postgres';
import { openStorage } from '../../src/storage/index.js';
import { PostgresDriver } from '../../src/storage/postgres/postgres-driver.js';
import { PG_URL, postgresConfig } from '../helpers.js';
import { storageConformance } from './conformance.js';

storageConformance('postgres', postgresConfig);

describe('postgres: processes starting together on a new database', () => {
  it('all open it, though they race to create the same bookkeeping tables', async () => {
    const schema = `fresh_${process.pid}_${Date.now().toString(36)}`;
    const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE SCHEMA ${schema}`);
    try {
      const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}search_path=${schema}`;
      const opened = await Promise.allSettled(Array.from({ length: 8 }, () => openStorage({ backend: 'postgres', url, pool_size: 1 })));
      for (const r of opened) if (r.status === 'fulfilled') await r.value.close();
      assert.deepEqual(opened.map((r) => (r.status === 'fulfilled' ? 'opened' : String(r.reason))), Array(8).fill('opened'));
      const [{ count }] = await admin.unsafe(`SELECT count(*)::int AS count FROM information_schema.tables WHERE table_schema = '${schema}'`);
      assert.equal(count, 2, 'the definitions and the schema epoch, once each');
    } finally {
      await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});

describe('postgres: the connections the storage layer opens', () => {
  it('plan without JIT compilation: a statement estimated costly on a table not analyzed yet would compile first', async () => {
    const driver = new PostgresDriver(PG_URL, 1);
    try {
      assert.deepEqual([...(await driver.all('SHOW jit', []))], [{ jit: 'off' }]);
    } finally {
      await driver.close();
    }
  });
});

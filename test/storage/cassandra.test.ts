import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import cassandra from 'cassandra-driver';
import { cqlTable, keyspaceName } from '../../src/storage/cassandra/cql-schema.js';
import { describe as describeTable, normalizeSchema } from '../../src/storage/schema.js';
import { after, before, describe, it } from 'node:test';
import { openStorage, type TableStorage } from '../../src/storage/index.js';
import { CASSANDRA_HOST, cassandraConfig, freshDomain } from '../helpers.js';
import { rejectsWith, storageConformance } from './conformance.js';

storageConformance('cassandra', cassandraConfig);

describe('cassandra: what only this engine bounds', () => {
  let storage: TableStorage;
  before(async () => {
    storage = await openStorage(cassandraConfig());
  });
  after(() => storage.close());

  it('answers a write larger than one mutation may be with 400, not 500', async () => {
    const domain = freshDomain();
    await storage.createTable(domain, 'big', { table: 'big', attributes: { k: 'string', v: 'blob' }, index: [{ attribute: 'k', type: 'hash' }] });
    // A mutation may be half a commit log segment (16 MiB by default).
    await rejectsWith(storage.put(domain, { table: 'big', attributes: { k: 'x', v: crypto.randomBytes(17 * 1024 * 1024) } }), 400, /larger than the storage accepts/);
  });

  it("sets a table's gc_grace_seconds and compaction from its schema's options, and changes them with a new version", async () => {
    const domain = freshDomain();
    const schema = { table: 'events', attributes: { k: 'string', t: 'timeuuid' }, index: [{ attribute: 'k', type: 'hash' }, { attribute: 't', type: 'range' }] };
    const options = { gc_grace_seconds: 600, updates: { pattern: 'timeseries' } };
    await storage.createTable(domain, 'events', { ...schema, options });
    const client = new cassandra.Client({ contactPoints: [CASSANDRA_HOST], localDataCenter: 'datacenter1' });
    try {
      const t = cqlTable(describeTable(normalizeSchema({ ...schema, options }, 'events', domain)), keyspaceName(cassandraConfig().keyspace_prefix, domain), 'events');
      const properties = async () => {
        const { rows } = await client.execute('SELECT gc_grace_seconds, compaction FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?', [t.keyspace, t.main]);
        return { grace: rows[0]!.gc_grace_seconds as number, compaction: (rows[0]!.compaction as Record<string, string>).class };
      };
      assert.deepEqual(await properties(), { grace: 600, compaction: 'org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy' });
      await storage.createTable(domain, 'events', { ...schema, version: 2, options: { gc_grace_seconds: 3600, updates: { pattern: 'random-update' } } });
      assert.deepEqual(await properties(), { grace: 3600, compaction: 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy' });
      await storage.createTable(domain, 'events', { ...schema, version: 3 });
      assert.deepEqual(await properties(), { grace: 864000, compaction: 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy' });
    } finally {
      await client.shutdown();
    }
  });
});

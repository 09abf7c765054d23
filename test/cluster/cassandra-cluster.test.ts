import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import { type TableStorage, openStorage } from '../../src/storage/index.js';
import { StorageError } from '../../src/storage/errors.js';
import { cassandraConfig, freshDomain, sleep } from '../helpers.js';
import { storageConformance } from '../storage/conformance.js';
import { CLUSTER, CLUSTER_ONLY, clusterConfig } from './cluster.js';

/**
 * The slow tier, first part: three Cassandra nodes (the test command starts them on 127.0.0.1-3),
 * replication factor 3, QUORUM; run before the sweep at scale (cluster-sweep.test.ts) and before
 * a node is killed (node-loss.test.ts).
 */
describe('Cassandra cluster: three nodes, replication factor 3', CLUSTER_ONLY, () => {
  // What depends on three replicas: schema changes agreed by every node, conditional writes and
  // retention under concurrent writers (Paxos across nodes), index tables written after their
  // rows, reads seeing writes made through other coordinators, a storage group's index on the
  // domain built on every node before a wiki is listed through it. The rest (queries, paging, TTLs,
  // validation, the buckets and branches built on them) one node proves in test/storage/ and
  // test/integration/, and does not change with the number of replicas.
  storageConformance('cassandra, three nodes', () => clusterConfig(), {
    only: ['schemas', "the implicit '_tid'", 'writes', 'secondary indexes', 'reads after writes elsewhere', 'isolation and concurrency', 'storage groups'],
  });

  it('answers a schema change once every node holds it, ten times over', async () => {
    const storage = await openStorage(clusterConfig());
    const client = new cassandra.Client({ contactPoints: CLUSTER!, localDataCenter: 'datacenter1' });
    try {
      await client.connect();
      const hosts = client.hosts.values();
      assert.equal(hosts.length, 3);
      const domain = freshDomain();
      for (let i = 0; i < 10; i++) {
        const started = Date.now();
        await storage.createTable(domain, `t${i}`, { table: `t${i}`, attributes: { key: 'string', value: 'string' }, index: [{ attribute: 'key', type: 'hash' }] });
        const took = Date.now() - started;
        // Each node's own schema version, asked of that node at once.
        const versions = await Promise.all(hosts.map(async (host) => String((await client.execute('SELECT schema_version FROM system.local', [], { host })).rows[0]!.schema_version)));
        assert.equal(new Set(versions).size, 1, `table ${i}, made in ${took} ms: every node holds it (${versions.join(', ')})`);
      }
    } finally {
      await client.shutdown();
      await storage.close();
    }
  });

  it('starts four processes at once on an empty cluster, five times over, without one failing', async () => {
    for (let round = 0; round < 5; round++) {
      // A keyspace prefix nobody has used: the meta keyspace and its tables are made by the racers.
      const prefix = `wsr${Date.now().toString(36).slice(-5)}${round}`;
      const opened = await Promise.allSettled(Array.from({ length: 4 }, () => openStorage(cassandraConfig({ ...clusterConfig(), keyspace_prefix: prefix }))));
      const failed = opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
      const open = opened.filter((o): o is PromiseFulfilledResult<TableStorage> => o.status === 'fulfilled').map((o) => o.value);
      try {
        assert.deepEqual(failed, [], `round ${round}: every process started`);
        // And they work together: a table made by one is written by another and read by a third.
        const domain = freshDomain();
        await Promise.all(open.map((st) => st.createTable(domain, 'kv', { table: 'kv', attributes: { key: 'string', value: 'string' }, index: [{ attribute: 'key', type: 'hash' }] })));
        await open[1]!.put(domain, { table: 'kv', attributes: { key: 'k', value: `round ${round}` } });
        assert.equal((await open[2]!.get(domain, { table: 'kv', attributes: { key: 'k' } })).items[0]?.value, `round ${round}`);
      } finally {
        await Promise.all(open.map((st) => st.close()));
      }
    }
  });

  it('serves two processes writing without one error while a column is added, and heals within seconds of a table recreated with another type', async () => {
    const [a, b] = await Promise.all([openStorage(clusterConfig()), openStorage(clusterConfig())]);
    const domain = freshDomain();
    const schema = { table: 'live', attributes: { key: 'string', n: 'int' }, index: [{ attribute: 'key', type: 'hash' }] };
    let stop = false;
    let load: Promise<unknown> = Promise.resolve();
    try {
      await a.createTable(domain, 'live', schema);
      let phase: 'before' | 'added' | 'recreating' | 'recreated' = 'before';
      const errors: string[] = [];
      const healed = new Map<TableStorage, number>();
      let recreatedAt = 0;
      const writer = async (st: TableStorage, w: number) => {
        for (let i = 0; !stop; i++) {
          const key = `w${w}-${i}`;
          const at = phase;
          const startedAt = Date.now();
          const attributes = at === 'before' ? { key, n: i } : at === 'recreated' ? { key, n: `text ${i}` } : { key, n: i, note: `added ${i}` };
          try {
            await st.put(domain, { table: 'live', attributes });
            const [row] = (await st.get(domain, { table: 'live', attributes: { key } })).items;
            if (row?.n !== attributes.n) errors.push(`${key} (${at}): read ${JSON.stringify(row)}`);
            if (at === 'recreated' && !healed.has(st)) healed.set(st, Date.now() - recreatedAt);
          } catch (err) {
            // While a table is dropped and made anew, a write finds it missing, or finds the new
            // definition (a column's type changed, another gone), or a read at QUORUM meets a
            // replica that dropped the table under it (503, retry): only those are expected.
            const expected = err instanceof StorageError && (err.kind === 'not-found' || err.kind === 'invalid' || err.kind === 'unavailable');
            // Started before the table was made anew: seen by the phase it began in (a write begun in
            // the millisecond the new table was made, before the test marked it, is one of them).
            const duringRecreation = at === 'recreating' || ((phase === 'recreating' || phase === 'recreated') && (recreatedAt === 0 || startedAt < recreatedAt));
            if (!(duringRecreation && expected)) errors.push(`${key} (${at}): ${String(err).slice(0, 300)}`);
            await sleep(50);
          }
        }
      };
      load = Promise.all([a, b].flatMap((st, p) => [0, 1, 2].map((w) => writer(st, p * 3 + w))));
      await sleep(1000);
      await a.createTable(domain, 'live', { ...schema, version: 2, attributes: { ...schema.attributes, note: 'string' } });
      phase = 'added';
      await sleep(2000);
      assert.deepEqual(errors.slice(0, 10), [], 'no error while a column was added and written at once, from either process');
      phase = 'recreating';
      await a.dropTable(domain, 'live');
      await a.createTable(domain, 'live', { ...schema, attributes: { key: 'string', n: 'string' } });
      recreatedAt = Date.now();
      phase = 'recreated';
      await sleep(4000);
      stop = true;
      await load;
      console.log(`# a table recreated with another type: writes succeed again after ${[...healed.values()].map((ms) => `${ms} ms`).join(' and ')}`);
      assert.deepEqual(errors.slice(0, 10), [], 'no error in either process once the table was made anew');
      assert.equal(healed.size, 2, 'both processes write the new type');
      assert.ok(Math.max(...healed.values()) < 3000, 'within three seconds');
    } finally {
      stop = true;
      await load;
      await Promise.all([a.close(), b.close()]);
    }
  });

});

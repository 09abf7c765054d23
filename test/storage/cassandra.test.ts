import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import cassandra from 'cassandra-driver';
import { cqlTable, keyspaceName } from '../../src/storage/cassandra/cql-schema.js';
import { describe as describeTable, normalizeSchema } from '../../src/storage/schema.js';
import { after, before, describe, it } from 'node:test';
import { openStorage, type TableStorage } from '../../src/storage/index.js';
import { GroupedStorage, groupStore } from '../../src/storage/storage-groups.js';
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

  it('reads a conditional write whose answer was lost back at SERIAL: tried again if it was not applied, else a 503 saying its values are there', async () => {
    const domain = freshDomain();
    await storage.createTable(domain, 'cas', { table: 'cas', attributes: { k: 'string', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }] });
    const client = (storage as unknown as { client: cassandra.Client }).client;
    const lost = () => Object.assign(new cassandra.errors.ResponseError(cassandra.types.responseErrorCodes.writeTimeout, 'Operation timed out - received only 0 responses.'), { writeType: 'CAS' });
    // The next conditional statement is lost on its way back (after it ran) or on its way there.
    let fault: 'answer-lost' | 'request-lost' | undefined;
    let faults = 0;
    const inject = async <T>(conditional: boolean, send: () => Promise<T>): Promise<T> => {
      const chosen = conditional ? fault : undefined;
      if (!chosen) return send();
      fault = undefined;
      faults++;
      if (chosen === 'answer-lost') await send();
      throw lost();
    };
    type Send = (...args: unknown[]) => Promise<cassandra.types.ResultSet>;
    const execute = client.execute as unknown as Send;
    const batch = client.batch as unknown as Send;
    const isConditional = (query: string) => /\sIF\s/i.test(query);
    const patched = client as unknown as { execute: Send; batch: Send };
    patched.execute = (...args) => inject(isConditional(args[0] as string), () => execute.apply(client, args));
    patched.batch = (...args) => inject((args[0] as { query: string }[]).some((q) => isConditional(q.query)), () => batch.apply(client, args));
    const value = async () => (await storage.get(domain, { table: 'cas', attributes: { k: 'a' } })).items[0]?.v;
    try {
      fault = 'answer-lost';
      // Applied, but an identical write could have put the same values there: not claimed as its own.
      await rejectsWith(storage.put(domain, { table: 'cas', attributes: { k: 'a', v: 'one' }, if: 'not exists' }), 503, /values are in the row/);
      assert.equal(await value(), 'one');
      fault = 'request-lost';
      await storage.put(domain, { table: 'cas', attributes: { k: 'a', v: 'two' }, if: { v: { eq: 'one' } } });
      assert.equal(await value(), 'two', 'not applied, so tried again');
      fault = 'answer-lost';
      await rejectsWith(storage.put(domain, { table: 'cas', attributes: { k: 'a', v: 'three' }, if: { v: { eq: 'one' } } }), 412);
      assert.equal(await value(), 'two', 'a condition that no longer holds is a 412, after the read-back');
      assert.equal(faults, 3);
    } finally {
      patched.execute = execute;
      patched.batch = batch;
    }
  });

  it('writes no tombstone with a new row that never expires or has a null, and still clears the expiry of one written with a TTL before', async () => {
    const domain = freshDomain();
    await storage.createTable(domain, 'kept', { table: 'kept', attributes: { k: 'string', v: 'string' }, index: [{ attribute: 'k', type: 'hash' }] });
    await storage.put(domain, { table: 'kept', attributes: { k: 'a', v: 'one', _ttl: 3600 } });
    const ttl = async () => (await storage.get(domain, { table: 'kept', attributes: { k: 'a' }, withTTL: true })).items[0]?._ttl;
    assert.ok(typeof (await ttl()) === 'number');
    await storage.put(domain, { table: 'kept', attributes: { k: 'a', v: 'two' } });
    assert.equal(await ttl(), null, 'written again without a TTL, it no longer expires');
    // A new row's null (`if: 'not exists'`) is nothing to clear: no tombstone for it either.
    await storage.put(domain, { table: 'kept', attributes: { k: 'b', v: null }, if: 'not exists' });
    assert.deepEqual((await storage.get(domain, { table: 'kept', attributes: { k: 'b' } })).items.map((r) => r.v), [null]);
    const inner = (storage as unknown as { client: cassandra.Client }).client;
    const keyspace = keyspaceName(cassandraConfig().keyspace_prefix, domain);
    const { rows } = await inner.execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?', [keyspace], { prepare: true });
    const traced = await inner.execute(`SELECT * FROM "${keyspace}"."${rows[0]!.table_name as string}" WHERE "k" = ?`, ['b'], { prepare: true, traceQuery: true });
    let events: string[] = [];
    for (let attempt = 0; attempt < 20 && !events.some((e) => /live rows/.test(e)); attempt++) {
      await new Promise((r) => setTimeout(r, 250));
      events = ((await inner.metadata.getTrace(traced.info.traceId).catch(() => undefined))?.events ?? []).map((e) => e.activity);
    }
    assert.ok(events.some((e) => /Read 1 live rows and 0 tombstone cells/.test(e)), events.filter((e) => /live rows/.test(e)).join(' | ') || 'no trace');
  });

  it("reads an index page's rows a few at a time, not all of the page's at once", async () => {
    const domain = freshDomain();
    await storage.createTable(domain, 'tagged', {
      table: 'tagged', attributes: { k: 'string', tag: 'string' }, index: [{ attribute: 'k', type: 'hash' }],
      secondaryIndexes: { by_tag: [{ attribute: 'tag', type: 'hash' }, { attribute: 'k', type: 'range' }] },
    });
    for (let i = 0; i < 200; i++) await storage.put(domain, { table: 'tagged', attributes: { k: `k${i}`, tag: 'same' } });
    const inner = (storage as unknown as { client: cassandra.Client }).client;
    type Execute = (query: string, params?: unknown[], options?: cassandra.QueryOptions) => Promise<cassandra.types.ResultSet>;
    const patched = inner as unknown as { execute: Execute };
    const execute = patched.execute;
    let inFlight = 0;
    let most = 0;
    patched.execute = async (query, params, options) => {
      // A row read by its whole key: what each entry of the index page asks for.
      const rowRead = /^SELECT .* WHERE "k" = \?$/.test(query);
      if (rowRead) most = Math.max(most, ++inFlight);
      try {
        return await execute.call(inner, query, params, options);
      } finally {
        if (rowRead) inFlight--;
      }
    };
    try {
      const { items } = await storage.get(domain, { table: 'tagged', index: 'by_tag', attributes: { tag: 'same' }, limit: 1000 });
      assert.equal(items.length, 200);
    } finally {
      patched.execute = execute;
    }
    assert.ok(most > 1 && most <= 32, `rows read at once: ${most}`);
  });

  describe("a storage group's wiki, listed through an index by domain", () => {
    const schema = { table: 'titles', attributes: { title: 'string', rev: 'int', note: 'string' }, index: [{ attribute: 'title', type: 'hash' }, { attribute: 'rev', type: 'range' }] };
    let client: cassandra.Client;
    before(async () => {
      client = new cassandra.Client({ contactPoints: [CASSANDRA_HOST], localDataCenter: 'datacenter1' });
      await client.connect();
    });
    after(() => client.shutdown());

    const farmOf = () => `g${process.pid}i${Date.now().toString(36)}`;
    const groupedFor = (farm: string, inner: TableStorage) => new GroupedStorage(inner, (domain) => (domain.endsWith(`.${farm}.test`) ? farm : undefined));
    const domainIndexes = async (farm: string) => {
      const keyspace = keyspaceName(cassandraConfig().keyspace_prefix, groupStore(farm));
      const { rows } = await client.execute('SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = ?', [keyspace], { prepare: true });
      return rows.filter((r) => (r.options as Record<string, string>).target === '"_domain"').map((r) => ({ keyspace, name: r.index_name as string, kind: (r.options as Record<string, string>).class_name }));
    };

    it("reads one wiki's partitions through the index, which the group's table is made with", async () => {
      const farm = farmOf();
      const grouped = groupedFor(farm, storage);
      const [a, b] = [`a.${farm}.test`, `b.${farm}.test`];
      await grouped.createTable(a, 'titles', schema);
      const [index] = await domainIndexes(farm);
      assert.ok(index, 'the group table has an index on the domain');
      assert.match(index.kind, /StorageAttachedIndex/);
      for (let i = 0; i < 30; i++) await grouped.put(i % 3 === 0 ? a : b, { table: 'titles', attributes: { title: `T${i}`, rev: 1, note: 'x' } });
      // The storage's own statement for a wiki's listing, traced by Cassandra.
      const traced: string[] = [];
      const inner = (storage as unknown as { client: cassandra.Client }).client;
      type Execute = (query: string, params?: unknown[], options?: cassandra.QueryOptions) => Promise<cassandra.types.ResultSet>;
      const patched = inner as unknown as { execute: Execute };
      const execute = patched.execute;
      patched.execute = async (query, params, options) => {
        if (!/"_domain" = \?(?! AND)/.test(query) || /LIMIT 1$/.test(query)) return execute.call(inner, query, params, options);
        const result = await execute.call(inner, query, params, { ...options, traceQuery: true });
        if (result.info.traceId) traced.push(String(result.info.traceId));
        return result;
      };
      let listed: string[] = [];
      try {
        let next: string | undefined;
        do {
          const page = await grouped.get(a, { table: 'titles', distinct: true, limit: 4, ...(next ? { next } : {}) });
          listed.push(...page.items.map((r) => r.title as string));
          next = page.next;
        } while (next);
      } finally {
        patched.execute = execute;
      }
      assert.deepEqual(listed.sort(), Array.from({ length: 10 }, (_, i) => `T${i * 3}`).sort(), "a's ten titles, paged, and none of b's");
      assert.ok(traced.length >= 3, `every page of the listing was traced (${traced.length})`);
      const activities = async (id: string) => {
        for (let attempt = 0; attempt < 20; attempt++) {
          const trace = await inner.metadata.getTrace(cassandra.types.Uuid.fromString(id)).catch(() => undefined);
          if (trace && trace.events.length > 0) return trace.events.map((e) => e.activity);
          await new Promise((r) => setTimeout(r, 250));
        }
        return [];
      };
      const events = await activities(traced[0]!);
      assert.ok(events.some((e) => e.includes(`using index ${index.name}`)), `read through the index: ${events.slice(0, 5).join(' | ')}`);
    });

    it('indexes a group table made before the index at its next set-up, and lists its rows at once', async () => {
      const farm = farmOf();
      const a = `a.${farm}.test`;
      await groupedFor(farm, storage).createTable(a, 'titles', schema);
      for (let i = 0; i < 20; i++) await groupedFor(farm, storage).put(a, { table: 'titles', attributes: { title: `T${i}`, rev: 1, note: 'x' } });
      const [made] = await domainIndexes(farm);
      await client.execute(`DROP INDEX "${made!.keyspace}"."${made!.name}"`);
      assert.deepEqual(await domainIndexes(farm), [], 'as a store made before the index has it');
      // A process started afterwards sets the table up as every start does.
      const later = await openStorage(cassandraConfig());
      try {
        const grouped = groupedFor(farm, later);
        assert.equal(await grouped.createTable(a, 'titles', schema), 'unchanged');
        assert.equal((await domainIndexes(farm)).length, 1, 'the index is made');
        const { items } = await grouped.get(a, { table: 'titles', distinct: true });
        assert.equal(items.length, 20, 'and answers as soon as the set-up returns');
      } finally {
        await later.close();
      }
    });
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import cassandra from 'cassandra-driver';
import { DomainIndex } from '../../../src/storage/cassandra/cql-domain-index.js';
import type { Table } from '../../../src/storage/cassandra/cql-indexes.js';
import { unavailable, type StorageError } from '../../../src/storage/errors.js';

const groupTable = { info: { hash: ['_domain', 'title'] }, cql: { keyspace: 'ks', main: 't_pages' }, main: '"ks"."t_pages"' } as unknown as Table;
const ownTable = { info: { hash: ['title'] }, cql: { keyspace: 'ks', main: 't_own' }, main: '"ks"."t_own"' } as unknown as Table;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A session whose index reads fail (as while Cassandra builds the index) until `builtAfter` reads. */
function session(builtAfter: number, ddlError?: Error) {
  const seen = { ddl: [] as string[], probes: 0 };
  return {
    seen,
    ddl: async (query: string) => {
      seen.ddl.push(query);
      if (ddlError) throw ddlError;
    },
    run: async () => {
      seen.probes++;
      if (seen.probes <= builtAfter) throw unavailable('Server failure during read query at consistency LOCAL_ONE');
      return {} as cassandra.types.ResultSet;
    },
  };
}

const listable = (index: DomainIndex) => {
  try {
    index.checkListable(groupTable);
    return true;
  } catch (e) {
    assert.equal((e as StorageError).code, 'index-building');
    assert.equal((e as StorageError).kind, 'unavailable');
    assert.equal((e as StorageError).retryAfter, 10, 'asked again in seconds, not at once');
    return false;
  }
};

describe("a storage group table's index by domain", () => {
  it('is made for a group table only, and a set-up waits for it to answer when that is quick', async () => {
    const s = session(3);
    const index = new DomainIndex(s, { setupWaitMs: 5000, probeIntervalMs: 5 });
    await index.ensure(ownTable);
    assert.deepEqual(s.seen.ddl, []);
    await index.ensure(groupTable);
    assert.match(s.seen.ddl[0]!, /CREATE CUSTOM INDEX IF NOT EXISTS "t_pages_domain" ON "ks"."t_pages" \("_domain"\) USING 'StorageAttachedIndex'/);
    assert.equal(s.seen.probes, 4, 'asked until the index answered');
    assert.ok(listable(index));
    await index.ensure(groupTable);
    assert.equal(s.seen.ddl.length, 1, 'once per table and process');
    index.forget(groupTable);
    await index.ensure(groupTable);
    assert.equal(s.seen.ddl.length, 2, 'and again for a table dropped and made again');
  });

  it('lets a long build go on after the set-up, listings refused (503) until the index answers', async () => {
    const s = session(6);
    const index = new DomainIndex(s, { setupWaitMs: 10, probeIntervalMs: 10 });
    await index.ensure(groupTable);
    assert.ok(s.seen.probes < 6, 'the set-up did not wait for the build');
    assert.equal(listable(index), false);
    for (let i = 0; i < 100 && !listable(index); i++) await sleep(10);
    assert.ok(listable(index), 'listed once the index answers');
    assert.equal(s.seen.probes, 7);
    index.stop();
  });

  it('keeps filtering on a Cassandra without SAI or with secondary indexes turned off', async () => {
    for (const message of [
      "Unable to find custom indexer class 'StorageAttachedIndex'",
      'Guardrail secondary_indexes violated: User creation of secondary indexes is not allowed',
    ]) {
      const s = session(0, new cassandra.errors.ResponseError(0x2200, message));
      const index = new DomainIndex(s, { setupWaitMs: 10, probeIntervalMs: 5 });
      await index.ensure(groupTable);
      assert.equal(s.seen.probes, 0);
      assert.ok(listable(index));
    }
    // Anything else fails the set-up, which tries again next time.
    const s = session(0, new Error('connection reset'));
    const index = new DomainIndex(s, { setupWaitMs: 10, probeIntervalMs: 5 });
    await assert.rejects(index.ensure(groupTable), /connection reset/);
    await assert.rejects(index.ensure(groupTable), /connection reset/);
    assert.equal(s.seen.ddl.length, 2);
  });
});

import cassandra from 'cassandra-driver';
import { GROUP_DOMAIN } from '../schema.js';
import { StorageError } from '../errors.js';
import { q } from './cql-schema.js';
import type { CqlSession } from './cql-session.js';
import type { Table } from './cql-indexes.js';

/** How long a start waits for Cassandra to index a group table's existing rows. */
const BUILD_WAIT_MS = 60 * 60 * 1000;
const PROBE_INTERVAL_MS = 1000;

/** A storage group's table: the domain is the first of several partition key columns. */
export const isGroupTable = (table: Table) => table.info.hash[0] === GROUP_DOMAIN && table.info.hash.length > 1;

export const domainIndexName = (table: Table) => `${table.cql.main}_domain`;

/**
 * A storage group's tables are indexed by domain with Cassandra's own storage-attached index
 * (SAI), so that one wiki's rows (its page listing, its snapshot) are found without reading every
 * partition of the group. Cassandra keeps the index in the row's own mutation: nothing to write
 * beside a row, no entry to remove with it, none left behind by an expiry. A table made before
 * the index gets it at its first set-up, and that set-up waits until Cassandra has indexed the
 * rows already there: until then a read through the index fails.
 */
export class DomainIndex {
  private readonly ready = new Map<string, Promise<void>>();

  constructor(private readonly session: CqlSession) {}

  ensure(table: Table): Promise<void> {
    if (!isGroupTable(table)) return Promise.resolve();
    const key = `${table.cql.keyspace}.${table.cql.main}`;
    let ready = this.ready.get(key);
    if (!ready) {
      ready = this.make(table);
      this.ready.set(key, ready);
      // A failure is not kept: the next set-up tries again.
      ready.catch(() => this.ready.delete(key));
    }
    return ready;
  }

  private async make(table: Table): Promise<void> {
    const name = domainIndexName(table);
    try {
      await this.session.ddl(`CREATE CUSTOM INDEX IF NOT EXISTS ${q(name)} ON ${q(table.cql.keyspace)}.${q(table.cql.main)} (${q(GROUP_DOMAIN)}) USING 'StorageAttachedIndex'`);
    } catch (err) {
      // A Cassandra without SAI (before 5.0), or whose operator turned secondary indexes off (a
      // guardrail), keeps filtering, as storage groups always did there.
      if (withoutSai(err)) return;
      throw err;
    }
    await this.queryable(table);
  }

  /** Until a read through the index is answered (it fails while Cassandra builds the index). */
  private async queryable(table: Table): Promise<void> {
    const probe = { query: `SELECT ${q(GROUP_DOMAIN)} FROM ${table.main} WHERE ${q(GROUP_DOMAIN)} = ? LIMIT 1`, params: [''] };
    const deadline = Date.now() + BUILD_WAIT_MS;
    for (;;) {
      try {
        await this.session.run(probe);
        return;
      } catch (err) {
        if (!(err instanceof StorageError && err.kind === 'unavailable') || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, PROBE_INTERVAL_MS));
      }
    }
  }
}

function withoutSai(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return (err instanceof cassandra.errors.ResponseError || err instanceof StorageError) && /StorageAttachedIndex|Unable to find custom indexer class|Guardrail secondary_indexes/i.test(message);
}

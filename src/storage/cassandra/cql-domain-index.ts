import cassandra from 'cassandra-driver';
import { GROUP_DOMAIN } from '../schema.js';
import { StorageError, unavailable } from '../errors.js';
import { q } from './cql-schema.js';
import type { CqlSession } from './cql-session.js';
import type { Table } from './cql-indexes.js';

export interface DomainIndexTiming {
  /** How long a table's set-up waits for Cassandra to index its existing rows before going on without. */
  setupWaitMs: number;
  /** Between two asks whether the index answers yet. */
  probeIntervalMs: number;
}

const TIMING: DomainIndexTiming = { setupWaitMs: 30_000, probeIntervalMs: 1000 };

/** The part of the session the index needs. */
type Session = Pick<CqlSession, 'ddl' | 'run'>;

/** A storage group's table: the domain is the first of several partition key columns. */
export const isGroupTable = (table: Table) => table.info.hash[0] === GROUP_DOMAIN && table.info.hash.length > 1;

export const domainIndexName = (table: Table) => `${table.cql.main}_domain`;

const keyOf = (table: Table) => `${table.cql.keyspace}.${table.cql.main}`;

/** Seconds after which a listing refused while the index is built is worth asking again. */
const INDEX_BUILDING_RETRY_S = 10;

/**
 * A storage group's tables are indexed by domain with Cassandra's own storage-attached index
 * (SAI), so that one wiki's rows (its page listing, its snapshot) are found without reading every
 * partition of the group. Cassandra keeps the index in the row's own mutation: nothing to write
 * beside a row, no entry to remove with it, none left behind by an expiry.
 *
 * A table made before the index gets it at its first set-up. Until Cassandra has indexed the rows
 * already there, a read through the index fails (filtering is not an alternative: Cassandra picks
 * the index once it exists). The set-up waits for that a while; a group large enough to take
 * longer is served meanwhile, every read by key as before, and only its wikis' listings answer 503
 * until the index answers.
 */
export class DomainIndex {
  private readonly ready = new Map<string, Promise<void>>();
  /** Tables whose index Cassandra is still building. */
  private readonly building = new Set<string>();
  private stopped = false;

  constructor(private readonly session: Session, private readonly timing: DomainIndexTiming = TIMING) {}

  ensure(table: Table): Promise<void> {
    if (!isGroupTable(table)) return Promise.resolve();
    const key = keyOf(table);
    let ready = this.ready.get(key);
    if (!ready) {
      ready = this.make(table);
      this.ready.set(key, ready);
      // A failure is not kept: the next set-up tries again.
      ready.catch(() => this.ready.delete(key));
    }
    return ready;
  }

  /** A table dropped: made again, it is indexed again. */
  forget(table: Table): void {
    this.ready.delete(keyOf(table));
    this.building.delete(keyOf(table));
  }

  /** Stops watching builds (the storage is closed). */
  stop(): void {
    this.stopped = true;
  }

  /** Refuses a read across one wiki's partitions while its table's index is being built. */
  checkListable(table: Table): void {
    if (!this.building.has(keyOf(table))) return;
    throw unavailable(
      `Cassandra is indexing the storage group's table by domain (after an upgrade); a wiki's listing answers once it is done. Reads by key are served meanwhile.`,
      'index-building',
      // Building takes seconds to minutes (about 4 s for 100,000 partitions on one node).
      INDEX_BUILDING_RETRY_S,
    );
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
    if (await this.answersWithin(table, this.timing.setupWaitMs, true)) return;
    const key = keyOf(table);
    this.building.add(key);
    void this.answersWithin(table, Infinity, false).then(
      () => this.building.delete(key),
      // Anything but "not yet" (the table dropped, say): listings go back to answering for themselves.
      () => this.building.delete(key),
    );
  }

  /**
   * Whether a read through the index is answered within `ms` (it fails while Cassandra builds it).
   * A watch in the background (`holdsProcess` false) does not keep the process alive.
   */
  private async answersWithin(table: Table, ms: number, holdsProcess: boolean): Promise<boolean> {
    const probe = { query: `SELECT ${q(GROUP_DOMAIN)} FROM ${table.main} WHERE ${q(GROUP_DOMAIN)} = ? LIMIT 1`, params: [''] };
    const deadline = Date.now() + ms;
    while (!this.stopped) {
      try {
        await this.session.run(probe);
        return true;
      } catch (err) {
        if (!(err instanceof StorageError && err.kind === 'unavailable')) throw err;
        if (Date.now() + this.timing.probeIntervalMs > deadline) return false;
        await new Promise((r) => {
          const timer = setTimeout(r, this.timing.probeIntervalMs);
          if (!holdsProcess) timer.unref();
        });
      }
    }
    return false;
  }
}

function withoutSai(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return (err instanceof cassandra.errors.ResponseError || err instanceof StorageError) && /StorageAttachedIndex|Unable to find custom indexer class|Guardrail secondary_indexes/i.test(message);
}

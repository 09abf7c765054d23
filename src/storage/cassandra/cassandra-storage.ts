import cassandra from 'cassandra-driver';
import { itemMaker } from '../item-maker.js';
import type { CassandraStorageConfig } from '../../config.js';
import { conditionFailed, invalidInput, missing, StorageError, unavailable } from '../errors.js';
import { decodeToken, encodeToken } from '../paging.js';
import { KeptPlans, withValues } from '../kept-plans.js';
import { planQuery, type QueryPlan } from '../query-plan.js';
import { compareSchemas, describe, normalizeSchema, publicSchema, TABLE_NAME, withIndexLayout, type TableInfo } from '../schema.js';
import type { StorageHealth, TableStorage } from '../table-storage.js';
import { clusterHealth, watchNodes, type NodeCounts, type NodeListener } from './cql-health.js';
import type { Delete, Query, QueryResult, Row, TableSchema, Write } from '../types.js';
import { planDelete, planWrite, type WritePlan } from '../write-plan.js';
import { isStaleSchema } from './cql-errors.js';
import { definitionTag, IndexUpkeep, type Table } from './cql-indexes.js';
import { DomainIndex } from './cql-domain-index.js';
import { Retention } from './cql-retention.js';
import { consistency, CqlSession, SESSION_CLIENT_OPTIONS, type CqlRow } from './cql-session.js';
import { SchemaCache } from '../schema-cache.js';
import {
  cqlTable, createTableCql, dropTableCql, keyspaceName, metaKeyspaceName, migrateTableCql, q, qualified,
} from './cql-schema.js';
import { deleteCql, insertRowCql, readCql, selectCql, updateCql, type CqlStatement } from './cql-statements.js';
import { expiryOf, fromCql, NO_EXPIRY, toCql } from './cql-values.js';
import { mapAtMost } from '../../util/concurrency-limit.js';

const { consistencies } = cassandra.types;

type CassandraOptions = Omit<CassandraStorageConfig, 'backend'>;

/**
 * The rows an index query's entries name, read this many at once: a page of up to 1,000 entries
 * takes its turns beside other requests' reads instead of queueing all of its own ahead of them.
 */
const INDEX_ROWS_AT_ONCE = 32;

/** Tries at claiming a new table's definition when a claim's outcome is lost. */
const CREATE_ATTEMPTS = 4;

/**
 * The table storage API on Apache Cassandra: a keyspace per domain, hash keys as the partition
 * key, range keys as clustering columns, static columns, TTL and lightweight transactions native,
 * secondary indexes as tables of their own (written after the primary row, removed before it, and
 * checked against it on read).
 */
export class CassandraTableStorage implements TableStorage {
  readonly backend = 'cassandra';
  readonly expiresNatively = true;
  private readonly tables: SchemaCache<Table>;
  private readonly epoch: string;
  private readonly keyspaces = new Set<string>();
  private readonly meta: string;
  private readonly session: CqlSession;
  private readonly indexes: IndexUpkeep;
  private readonly retention: Retention;
  private readonly domainIndex: DomainIndex;
  /** Key reads' plans, kept per shape: a later read of one brings only its key values. */
  private readonly plans = new KeptPlans<string | undefined>(toCql);

  private constructor(private readonly client: cassandra.Client, private readonly options: CassandraOptions) {
    this.meta = qualified(metaKeyspaceName(options.keyspace_prefix), 'tables');
    this.epoch = qualified(metaKeyspaceName(options.keyspace_prefix), 'schema_epoch');
    this.tables = new SchemaCache({
      readEpoch: async () => String((await this.session.run({ query: `SELECT changed FROM ${this.epoch} WHERE id = 0`, params: [] })).rows[0]?.changed ?? ''),
    });
    this.session = new CqlSession(client, consistency(options.consistency.read), consistency(options.consistency.write));
    this.indexes = new IndexUpkeep(this.session);
    this.retention = new Retention(this.session, this.indexes);
    this.domainIndex = new DomainIndex(this.session);
  }

  static async open(options: CassandraOptions): Promise<CassandraTableStorage> {
    const client = new cassandra.Client({
      contactPoints: options.contact_points,
      localDataCenter: options.local_data_center,
      encoding: { useBigIntAsLong: true, useBigIntAsVarint: true },
      queryOptions: { prepare: true, serialConsistency: consistency(options.consistency.serial) },
      ...SESSION_CLIENT_OPTIONS,
    });
    try {
      await client.connect();
      const storage = new CassandraTableStorage(client, options);
      await storage.ensureKeyspace(metaKeyspaceName(options.keyspace_prefix));
      await storage.session.ddl(`CREATE TABLE IF NOT EXISTS ${storage.meta} (domain text, name text, definition text, PRIMARY KEY ((domain), name))`);
      await storage.session.ddl(`CREATE TABLE IF NOT EXISTS ${storage.epoch} (id int PRIMARY KEY, changed timeuuid)`);
      return storage;
    } catch (err) {
      await client.shutdown().catch(() => undefined);
      throw err;
    }
  }

  private async ensureKeyspace(keyspace: string): Promise<void> {
    if (this.keyspaces.has(keyspace)) return;
    const replication = Object.entries(this.options.replication).map(([dc, n]) => `'${dc.replace(/'/g, "''")}': ${Number(n)}`);
    await this.session.ddl(`CREATE KEYSPACE IF NOT EXISTS ${q(keyspace)} WITH replication = {'class': 'NetworkTopologyStrategy', ${replication.join(', ')}}`);
    this.keyspaces.add(keyspace);
  }

  private describeTable(domain: string, name: string, schema: TableSchema): Table {
    const info = describe(schema);
    const cql = cqlTable(info, keyspaceName(this.options.keyspace_prefix, domain), name);
    const tag = definitionTag(info);
    const indexNames = new Map([...cql.indexes.values()].map((index) => [index.table, `${qualified(cql.keyspace, index.table)}${tag}`]));
    return { info, cql, main: `${qualified(cql.keyspace, cql.main)}${tag}`, indexNames };
  }

  private async storedSchema(domain: string, name: string): Promise<string | undefined> {
    const result = await this.session.run({ query: `SELECT definition FROM ${this.meta} WHERE domain = ? AND name = ?`, params: [domain, name] });
    return result.rows[0]?.definition as string | undefined;
  }

  private async table(domain: string, name: unknown): Promise<Table> {
    if (typeof name !== 'string' || !TABLE_NAME.test(name)) throw invalidInput(`Invalid table name ${JSON.stringify(name)}.`, 'invalid-table-name');
    return this.tables.get(`${domain}\u0000${name}`, async () => {
      const stored = await this.storedSchema(domain, name);
      if (stored === undefined) throw missing(`Table '${name}' does not exist in ${domain}.`, 'unknown-table');
      return this.describeTable(domain, name, JSON.parse(stored) as TableSchema);
    });
  }

  /** Tells other processes that a definition changed (see SchemaCache). */
  private bumpEpoch(): Promise<unknown> {
    return this.session.runWrites([{ query: `UPDATE ${this.epoch} SET changed = now() WHERE id = 0`, params: [] }]);
  }

  /** Runs a table operation again, with definitions reloaded, if another process changed the table under it. */
  private fresh<R>(operation: () => Promise<R>): Promise<R> {
    return this.tables.retryStale(operation, isStaleSchema);
  }

  async createTable(domain: string, name: string, rawSchema: unknown, attempt = 0): Promise<'created' | 'updated' | 'unchanged'> {
    const given = normalizeSchema(rawSchema, name, domain);
    const stored = await this.storedSchema(domain, name);
    const schema = withIndexLayout(given, stored === undefined ? undefined : (JSON.parse(stored) as TableSchema));
    const next = this.describeTable(domain, name, schema);
    const text = JSON.stringify(schema);
    let outcome: 'created' | 'updated' | 'unchanged';
    if (stored === undefined) {
      await this.ensureKeyspace(next.cql.keyspace);
      for (const statement of createTableCql(next.info, next.cql)) await this.session.ddl(statement);
      let claim: Awaited<ReturnType<CqlSession['runWrites']>>;
      try {
        claim = await this.session.runWrites([{ query: `INSERT INTO ${this.meta} (domain, name, definition) VALUES (?, ?, ?) IF NOT EXISTS`, params: [domain, name, text] }]);
      } catch (e) {
        // Processes creating tables at once contend in Paxos, and a claim may time out with its
        // outcome unknown. Creating is idempotent: look again at what is stored, a few times.
        if (!(e instanceof StorageError && e.code === 'write-outcome-unknown') || attempt >= CREATE_ATTEMPTS - 1) throw e;
        await new Promise((r) => setTimeout(r, 250 * (attempt + 1)));
        return this.createTable(domain, name, rawSchema, attempt + 1);
      }
      // Another process created it meanwhile: treat this one as a re-PUT of its schema.
      if (!claim.wasApplied()) return this.createTable(domain, name, rawSchema, attempt);
      await this.bumpEpoch();
      outcome = 'created';
    } else {
      const current = this.describeTable(domain, name, JSON.parse(stored) as TableSchema);
      if (compareSchemas(current.info.schema, schema) === 'unchanged') {
        outcome = 'unchanged';
      } else {
        const { statements, newIndexes } = migrateTableCql(current.info, next.info, current.cql, next.cql);
        for (const statement of statements) await this.session.ddl(statement);
        for (const index of newIndexes) await this.indexes.fillIndex(next, index);
        await this.session.runWrites([{ query: `UPDATE ${this.meta} SET definition = ? WHERE domain = ? AND name = ? IF definition = ?`, params: [text, domain, name, stored] }]);
        await this.bumpEpoch();
        outcome = 'updated';
      }
    }
    // Made with a group's table, or at the first set-up of one made before the index was.
    await this.domainIndex.ensure(next);
    this.tables.set(`${domain}\u0000${name}`, next);
    return outcome;
  }

  async getSchema(domain: string, name: string): Promise<TableSchema & { domain: string }> {
    return { domain, ...publicSchema((await this.table(domain, name)).info.schema) };
  }

  async listTables(domain: string): Promise<string[]> {
    const result = await this.session.run({ query: `SELECT name FROM ${this.meta} WHERE domain = ?`, params: [domain] });
    return (result.rows as unknown as { name: string }[]).map((r) => r.name).sort();
  }

  async dropTable(domain: string, name: string): Promise<void> {
    const table = await this.table(domain, name);
    const { cql } = table;
    this.domainIndex.forget(table);
    await this.session.runWrites([{ query: `DELETE FROM ${this.meta} WHERE domain = ? AND name = ?`, params: [domain, name] }]);
    await this.bumpEpoch();
    this.tables.delete(`${domain}\u0000${name}`);
    for (const statement of dropTableCql(cql)) await this.session.ddl(statement);
  }

  async get(domain: string, query: Query): Promise<QueryResult> {
    if (typeof query !== 'object' || query === null) throw invalidInput('A query must be a JSON object.', 'invalid-query');
    return this.fresh(() => this.query(domain, query));
  }

  private async query(domain: string, query: Query): Promise<QueryResult> {
    const table = await this.table(domain, query.table);
    // Pages continue from the driver's paging state, wrapped in the shared token format.
    const { next: _next, ...asked } = query;
    const found = this.plans.find(table.info, asked, '');
    const plan = found ? withValues(found.kept.plan, found.values) : planQuery(table.info, asked, toCql);
    // A read of the table itself keeps its statement's text with its plan.
    const select = found ? found.kept.made : query.index === undefined ? this.tableSelect(table, plan) : undefined;
    if (!found) this.plans.keep(table.info, asked, '', plan, select);
    if (plan.scoped) this.domainIndex.checkListable(table);
    let pageState: string | undefined;
    if (query.next !== undefined && query.next !== null) {
      const [state] = decodeToken(query.next, plan.fingerprint(), 1);
      if (typeof state !== 'string' || !/^(?:[0-9a-f]{2})+$/.test(state)) throw invalidInput('The paging token (next) is malformed.', 'invalid-paging-token');
      pageState = state;
    }
    const paged = plan.order.length > 0;
    const options: cassandra.QueryOptions = paged ? { fetchSize: plan.limit, pageState } : {};
    const { items, state } =
      query.index !== undefined ? await this.indexQuery(table, query.index, plan, options) : await this.tableQuery(table, plan, select ?? this.tableSelect(table, plan), options);
    return paged && state ? { items, next: encodeToken(plan.fingerprint(), [state]) } : { items };
  }

  /** The CQL of a plan's read of the table itself: the same for every read of its shape (kept with its plan). */
  private tableSelect(table: Table, plan: QueryPlan): string {
    const { info } = table;
    const clustering = info.range.map((column) => ({ column, dir: info.rangeOrder[column] ?? ('asc' as const) }));
    // DISTINCT must name every partition key column; other rows carry their first range key, so
    // that a partition holding only static values (which CQL answers as one keyless row) is skipped.
    const columns = plan.distinct
      ? [...new Set([...info.hash, ...plan.output])]
      : [...new Set([...plan.output, ...plan.order.map((o) => o.column), ...info.range.slice(0, 1), ...(plan.withTTL ? ['_exp'] : [])])];
    return selectCql(table.main, plan, columns, clustering, plan.distinct).query;
  }

  /** `select`'s parameters are the plan's predicates' values, in order (as `selectCql` writes them). */
  private async tableQuery(table: Table, plan: QueryPlan, select: string, options: cassandra.QueryOptions): Promise<{ items: Row[]; state?: string }> {
    const { info } = table;
    const result = await this.session.run({ query: select, params: plan.predicates.map((p) => p.value) }, options);
    const rows = (result.rows as unknown as CqlRow[]).filter((r) => plan.distinct || info.range.length === 0 || r[info.range[0]!] !== null);
    return { items: rows.map((r) => this.toItem(info, r, plan)), state: result.pageState ?? undefined };
  }

  private async indexQuery(table: Table, name: string, plan: QueryPlan, options: cassandra.QueryOptions): Promise<{ items: Row[]; state?: string }> {
    const { info } = table;
    const index = table.cql.indexes.get(name)!;
    const result = await this.session.run(selectCql(table.indexNames.get(index.table)!, plan, index.columns, index.clustering, false), options);
    const keys = [...info.hash, ...info.range];
    const columns = [...new Set([...plan.output, ...index.columns, ...(plan.withTTL ? ['_exp'] : [])])];
    // An entry is a pointer: the primary row is read and must still carry the entry's values
    // (an entry left behind by an interrupted update or an expired row is skipped).
    const rows = await mapAtMost(
      result.rows as unknown as CqlRow[],
      INDEX_ROWS_AT_ONCE,
      async (entry) => {
        const key = Object.fromEntries(keys.map((k) => [k, entry[k]]));
        const [row] = (await this.session.run(readCql(table.main, key, columns))).rows as unknown as CqlRow[];
        const current = row !== undefined && index.columns.every((c) => this.indexes.sameValue(info, c, row[c], entry[c]));
        // On a versioned table, only an entity's current version (its newest tid) is found.
        if (current && plan.currentVersions && !(await this.indexes.isCurrentVersion(table, plan.currentVersions, key))) return undefined;
        return current ? row : undefined;
      },
    );
    return { items: rows.filter((r) => r !== undefined).map((r) => this.toItem(info, r, plan)), state: result.pageState ?? undefined };
  }

  private toItem(info: TableInfo, row: CqlRow, plan: QueryPlan): Row {
    const attributes = info.schema.attributes;
    const item = itemMaker(plan.output)(row as Record<string, unknown>, (c, stored) => fromCql(attributes[c]!, stored));
    if (plan.withTTL) {
      const expires = expiryOf(row._exp);
      item._ttl = expires === null ? null : Math.max(0, Math.ceil((expires - Date.now()) / 1000));
    }
    return item;
  }

  async put(domain: string, write: Write): Promise<void> {
    if (typeof write !== 'object' || write === null) throw invalidInput('A write must be a JSON object.', 'invalid-write');
    return this.fresh(() => this.writeRow(domain, write));
  }

  private async writeRow(domain: string, write: Write): Promise<void> {
    const table = await this.table(domain, write.table);
    const { info } = table;
    const plan = planWrite(info, write, toCql);
    const now = Date.now();
    const policy = info.schema.revisionRetentionPolicy;
    const ttls = [plan.ttl, policy.type === 'ttl' ? policy.ttl : undefined].filter((t): t is number => t !== undefined);
    const ttl = ttls.length > 0 ? Math.min(...ttls) : 0;
    const exp = ttl > 0 ? BigInt(now + ttl * 1000) : NO_EXPIRY;
    const key = plan.row && Object.fromEntries([...info.hash, ...info.range].map((k) => [k, plan.row![k]]));
    // An index entry can move only when it holds a column outside the primary key (the page
    // revisions' by-revision index holds none): only then is the row's prior state read.
    const before = key && this.indexes.indexesMove(table) ? await this.indexes.indexedValues(table, key) : undefined;

    const conditional = plan.notExists || plan.conditions.length > 0;
    const statements = this.writeStatements(table, plan, exp, ttl);
    const applied = conditional
      ? await this.session.oneAtATime(`${table.main}\u0000${Object.values(plan.hashKey).map(String).join('\u0000')}`, () => this.compareAndSet(table, plan, statements))
      : (await this.session.runWrites(statements), true);
    if (!applied) {
      throw plan.notExists
        ? conditionFailed('The row already exists.', 'row-exists')
        : conditionFailed(`The condition on '${plan.conditions.map((c) => c.column).join("', '")}' does not hold.`, 'condition-failed');
    }
    if (!plan.row || !key) return;
    if (table.cql.indexes.size > 0) await this.indexes.updateIndexes(table, { ...(before ?? key), ...plan.row }, before, ttl);
    if (policy.type === 'latest' || policy.type === 'latest_hash' || policy.type === 'interval') await this.retention.apply(table, plan, now);
  }

  /**
   * A conditional write whose lost answer is looked into: the row is read at SERIAL, which
   * completes any round in flight. Without the written values there, it was not applied and is
   * tried once more (its condition decides again). With them there, it or an identical write was
   * applied, which cannot be told apart: the caller's 503 says so.
   */
  private async compareAndSet(table: Table, plan: WritePlan, statements: CqlStatement[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.session.runWrites(statements)).wasApplied();
      } catch (err) {
        if (!(err instanceof StorageError && err.kind === 'unavailable') || attempt >= 2) throw err;
        const present = await this.appliedAtSerial(table, plan).catch(() => {
          throw err;
        });
        if (present) throw unavailable('The conditional write\'s answer was lost; its values are in the row, written by it or by an identical write. Read, then retry if needed.', 'write-outcome-unknown');
      }
    }
  }

  /** Whether the partition holds, read at SERIAL, every value a conditional write wrote. */
  private async appliedAtSerial(table: Table, plan: WritePlan): Promise<boolean> {
    const { info } = table;
    const keys = [...info.hash, ...info.range];
    const written: Record<string, unknown> = { ...plan.statics, ...(plan.row ?? {}) };
    const key = plan.row ? Object.fromEntries(keys.map((k) => [k, plan.row![k]])) : plan.hashKey;
    const columns = Object.keys(written);
    const [row] = (await this.session.run(readCql(table.main, key, columns), { consistency: consistencies.serial })).rows as unknown as CqlRow[];
    return row !== undefined && columns.every((c) => this.indexes.sameValue(info, c, row[c], written[c]));
  }

  /**
   * One row write and/or a static write, as one statement or one single-partition batch. Conditions
   * ride on an UPDATE of the columns written (a row's always includes `_exp`); a static condition
   * with no static written re-writes the expected value, which changes nothing when it holds.
   */
  private writeStatements(table: Table, plan: WritePlan, exp: bigint, ttl: number): CqlStatement[] {
    const { info } = table;
    const statements: CqlStatement[] = [];
    const condition = (c: WritePlan['conditions'][number]) => ({ column: c.column, value: toCql(info.schema.attributes[c.column]!, c.expected) });
    const rowConditions = plan.conditions.filter((c) => !c.isStatic).map(condition);
    const staticConditions = plan.conditions.filter((c) => c.isStatic).map(condition);
    if (plan.row) {
      const keys = [...info.hash, ...info.range];
      if (rowConditions.length === 0) {
        // A row that does not exist yet has no value for a null to clear: written, the null would
        // only be a tombstone cell (a render without data-parsoid had one, every read passing it).
        const row = plan.notExists ? withoutNulls(plan.row) : plan.row;
        statements.push(insertRowCql(table.main, row, exp, ttl, plan.notExists));
      } else {
        const key = Object.fromEntries(keys.map((k) => [k, plan.row![k]]));
        const regular = Object.fromEntries(Object.entries(plan.row).filter(([c]) => !keys.includes(c)));
        // One UPDATE: its `_exp` is always a value (NO_EXPIRY, never null), a live cell with the
        // write's TTL, which keeps the row as a row marker would. An INSERT of the key beside it
        // (a marker, needed while `_exp` was written null for rows that never expire) made every
        // conditional update a batch of two statements.
        statements.push(updateCql(table.main, key, { ...regular, _exp: exp }, ttl, rowConditions));
      }
    }
    if (Object.keys(plan.statics).length > 0 || staticConditions.length > 0) {
      const values = Object.keys(plan.statics).length > 0 ? plan.statics : { [staticConditions[0]!.column]: staticConditions[0]!.value };
      statements.push(updateCql(table.main, plan.hashKey, values, undefined, staticConditions));
    }
    return statements;
  }

  async delete(domain: string, del: Delete): Promise<void> {
    if (typeof del !== 'object' || del === null) throw invalidInput('A delete must be a JSON object.', 'invalid-delete');
    await this.fresh(async () => {
      const table = await this.table(domain, del.table);
      const plan = planDelete(table.info, del, toCql);
      await this.indexes.removeEntries(table, plan.key);
      await this.session.runWrites([deleteCql(table.main, plan.key)]);
    });
  }

  /** Cassandra drops expired cells itself (at compaction); there is nothing to sweep. */
  async sweepExpired(): Promise<number> {
    return 0;
  }

  health(timeoutMs: number): Promise<StorageHealth> {
    return clusterHealth(this.client, timeoutMs);
  }

  watchNodes(listener: NodeListener): NodeCounts {
    return watchNodes(this.client, listener);
  }

  close(): Promise<void> {
    this.domainIndex.stop();
    return this.client.shutdown();
  }
}

const withoutNulls = (row: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null && value !== undefined));

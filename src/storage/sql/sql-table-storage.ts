import { setTimeout as sleep } from 'node:timers/promises';
import { conditionFailed, invalidInput, missing, StorageError, unavailable } from '../errors.js';
import { itemMaker, type ColumnValue } from '../item-maker.js';
import { encodeToken } from '../paging.js';
import { planQuery, type QueryPlan } from '../query-plan.js';
import { ReadCache, sizeOfAnswer } from './read-cache.js';
import { PointReads } from './point-reads.js';
import { compareSchemas, describe, normalizeSchema, publicSchema, TABLE_NAME, withIndexLayout, type TableInfo } from '../schema.js';
import { bumpSchemaEpochSql, createTableDdl, dropTableDdl, metaTableDdl, migrateTableDdl, readSchemaEpochSql } from './ddl.js';
import { SchemaCache } from '../schema-cache.js';
import { insertUnlessLiveStatement, updateIfStatement,
  deleteRowsStatement, deleteStaticStatement, EPOCH_COLUMN, exec, nextExpiryStatement, read, selectStatement, sweepStatement, upsertRowStatement, upsertStaticStatement, type Statement,
} from './dml.js';
import type { SqlDriver, SqlExecutor, SqlRow } from './driver.js';
import { META_TABLE, physicalNames, q, type PhysicalNames } from './names.js';
import { checked, type StorageHealth, type TableStorage } from '../table-storage.js';
import type { Delete, Query, QueryResult, Row, TableSchema, Write } from '../types.js';
import { fromStorage, toStorage, type ToEngine, type ValueCodec } from '../values.js';
import { planDelete, planWrite, type WritePlan } from '../write-plan.js';
import { applyRetention, checkConditions } from './write-checks.js';

interface Table {
  info: TableInfo;
  names: PhysicalNames;
}

/** A query's identity as text; undefined for one JSON cannot spell (a BigInt from an internal caller). */
function cacheKey(domain: string, query: Query): string | undefined {
  try {
    return `${domain}\u0000${JSON.stringify(query)}`;
  } catch {
    return undefined;
  }
}

const optional = (row: SqlRow | undefined): SqlRow[] => (row === undefined ? [] : [row]);
/**
 * Whether a write with `if: {column: {eq}}` can be an UPDATE whose WHERE holds its conditions: a
 * row alone (no static columns, no retention pass), every condition on a row column expecting a
 * value whose SQL equality is the conformance suite's equality (text compared by code point,
 * integers, time-uuids).
 */
function updatesRowAlone(info: TableInfo, plan: WritePlan, counts: boolean): boolean {
  if (counts || plan.notExists || Object.keys(plan.statics).length > 0 || plan.conditions.length === 0) return false;
  return plan.conditions.every((c) => !c.isStatic && c.expected !== null && EXACT_EQUALITY.has(info.schema.attributes[c.column]!));
}

/** Types whose values SQL's `=` compares as the conformance suite does (text by code point: PostgreSQL's "C", MariaDB's binary collation). */
const EXACT_EQUALITY = new Set(['string', 'int', 'long', 'varint', 'timestamp', 'timeuuid', 'uuid']);
/** The schema epoch, as compared, from the row `readSchemaEpochSql` reads. */
const epochIn = (row: SqlRow | undefined): string => String(row?.epoch);
const readEpoch = async (x: SqlExecutor): Promise<string> => epochIn(await x.one(readSchemaEpochSql(), []));

/**
 * A result whose paging token is made when first read: most single-row reads (a latest revision)
 * never look at it, and hashing the query's fingerprint cost a tenth of such a read. The getter is
 * written in the literal: a property defined on each result afterwards cost a partition read
 * several percent of its time.
 */
function withLazyNext(items: Row[], makeNext: () => string): QueryResult {
  let token: string | undefined;
  return {
    items,
    get next() {
      return (token ??= makeNext());
    },
  };
}

/** The table storage API over any SQL driver. Validation and SQL are shared; drivers only execute. */
export class SqlTableStorage implements TableStorage {
  readonly expiresNatively = false;
  private readonly tables: SchemaCache<Table>;
  private readonly codec: ValueCodec;
  private readonly encode: ToEngine;
  /** Only for engines that can tell cheaply whether anything was committed since an answer was read. */
  private readonly cache: ReadCache | undefined;
  /** Per table, with the cache: its next row expiry as of a data version (see `nextExpiry`). */
  private readonly expiries = new Map<string, { version: number; until: number | undefined }>();
  private readonly pointReads: PointReads;
  /** The schema epoch last read for an empty answer, and the data version seen before it was read. */
  private epochSeen: { version: number; epoch: string } | undefined;

  private constructor(private readonly driver: SqlDriver, readCacheBytes: number) {
    const codec = (this.codec = driver.dialect);
    this.encode = (type, value) => toStorage(type, value, codec);
    this.pointReads = new PointReads(this.encode, this.driver.dialect.recursiveSkipScan, this.driver.dialect.indexHint);
    this.cache = driver.dataVersion && readCacheBytes > 0 ? new ReadCache(readCacheBytes) : undefined;
    this.tables = new SchemaCache({
      readEpoch: () => readEpoch(driver),
      dataVersion: driver.dataVersion && (() => driver.dataVersion!()),
    });
  }

  /**
   * Runs a table operation again, with definitions reloaded, if another process changed the table
   * under it; an engine that cannot answer now is reported as such (a 503 to retry, not a 500).
   */
  private async fresh<R>(operation: () => Promise<R>): Promise<R> {
    const { dialect } = this.driver;
    try {
      return await this.tables.retryStale(operation, dialect.isStaleSchema);
    } catch (err) {
      if (dialect.isUnavailable(err)) throw unavailable(`Storage could not answer: ${(err as Error).message}`);
      if (dialect.isValueRefused?.(err)) throw invalidInput(`A value does not fit its column: ${(err as Error).message}`, 'value-too-large');
      throw err;
    }
  }

  /** `readCacheBytes`: memory for query answers, on engines that can tell when they changed (see ReadCache). */
  static async open(driver: SqlDriver, options: { readCacheBytes?: number } = {}): Promise<SqlTableStorage> {
    try {
      for (const { sql, params } of metaTableDdl(driver.dialect)) {
        // Processes starting together on a new database race to create these: PostgreSQL may refuse
        // the loser's CREATE TABLE IF NOT EXISTS (a duplicate type); by the second try it exists.
        await driver.run(sql, params).catch(async () => {
          await sleep(100);
          await driver.run(sql, params);
        });
      }
    } catch (err) {
      // A storage that could not open leaves no connections behind (they would keep the process alive).
      await driver.close().catch(() => undefined);
      throw err;
    }
    return new SqlTableStorage(driver, options.readCacheBytes ?? 0);
  }

  get backend(): string {
    return this.driver.dialect.name;
  }

  /**
   * `confirmedLater`: the caller confirms the definition in the same snapshot as its work instead
   * (inside a write's transaction, or with a read's rows: see `confirmDefinitions`, `readConfirmed`).
   */
  private async table(domain: string, name: unknown, { confirmedLater }: { confirmedLater?: boolean } = {}): Promise<Table> {
    if (typeof name !== 'string' || !TABLE_NAME.test(name)) throw invalidInput(`Invalid table name ${JSON.stringify(name)}.`, 'invalid-table-name');
    return this.tables.get(`${domain}\u0000${name}`, async () => {
      const rows = await this.driver.all(`SELECT "schema" FROM ${q(META_TABLE)} WHERE "domain" = ? AND "name" = ?`, [domain, name]);
      if (rows.length === 0) throw missing(`Table '${name}' does not exist in ${domain}.`, 'unknown-table');
      return { info: describe(JSON.parse(rows[0]!.schema as string) as TableSchema), names: physicalNames(domain, name) };
    }, { confirmedLater: confirmedLater && this.confirmsInTransaction });
  }

  /** The definition kept for a table when no check of the epoch is due: no promise to wait on. */
  private keptTable(domain: string, name: unknown): Table | undefined {
    return typeof name === 'string' && !this.tables.due() ? this.tables.peek(`${domain}\u0000${name}`) : undefined;
  }

  /**
   * On an engine that tells when anything was committed (SQLite), asking before a write would touch
   * the reading connection after every commit (a fresh read transaction: ~120 µs a write). Instead
   * the epoch is read inside the write's transaction, on its own connection and under its lock, where
   * no other process can move it: exact, and a few microseconds. Elsewhere the check before it (at
   * most once a second) costs less than a read in every transaction.
   */
  private get confirmsInTransaction(): boolean {
    return this.driver.dataVersion !== undefined;
  }

  /**
   * A write or read planned on the table's definition as kept. Input it refuses is checked once more
   * on a definition known to be current: it may name what another process has just added.
   */
  private async plannedOn<P>(domain: string, name: unknown, plan: (info: TableInfo) => P): Promise<{ table: Table; plan: P }> {
    const kept = await this.table(domain, name, { confirmedLater: true });
    try {
      return { table: kept, plan: plan(kept.info) };
    } catch (err) {
      if (!(err instanceof StorageError && err.kind === 'invalid') || !this.confirmsInTransaction) throw err;
      const current = await this.table(domain, name);
      return { table: current, plan: plan(current.info) };
    }
  }

  /**
   * The kept definition and the plan made on it, without a promise, where the write confirms the
   * schema epoch itself (SQLite, see `confirmsInTransaction`); undefined when no definition is kept
   * or the plan fails on it (`plannedOn` then loads and plans again, and says why).
   */
  private plannedNow<P>(domain: string, name: unknown, plan: (info: TableInfo) => P): { table: Table; plan: P } | undefined {
    if (!this.confirmsInTransaction || typeof name !== 'string') return undefined;
    const kept = this.tables.peek(`${domain}\u0000${name}`);
    if (!kept) return undefined;
    try {
      return { table: kept, plan: plan(kept.info) };
    } catch {
      return undefined;
    }
  }

  private async confirmDefinitions(tx: SqlExecutor): Promise<void> {
    if (this.confirmsInTransaction) this.tables.confirm(await readEpoch(tx));
  }

  /** Creates a table or migrates it to a higher schema version; 'unchanged' for the same schema. */
  createTable(domain: string, name: string, rawSchema: unknown): Promise<'created' | 'updated' | 'unchanged'> {
    return this.fresh(() => this.defineTable(domain, name, rawSchema));
  }

  private async defineTable(domain: string, name: string, rawSchema: unknown): Promise<'created' | 'updated' | 'unchanged'> {
    const given = normalizeSchema(rawSchema, name, domain);
    let info = describe(withIndexLayout(given, undefined));
    const names = physicalNames(domain, name);
    const outcome = await this.driver.transaction(JSON.stringify(['schema', domain, name]), async (tx) => {
      const rows = await tx.all(`SELECT "schema" FROM ${q(META_TABLE)} WHERE "domain" = ? AND "name" = ?`, [domain, name]);
      const schema = withIndexLayout(given, rows.length === 0 ? undefined : (JSON.parse(rows[0]!.schema as string) as TableSchema));
      info = describe(schema);
      if (rows.length === 0) {
        for (const ddl of createTableDdl(info, names, this.driver.dialect)) await tx.run(ddl, []);
        await tx.run(`INSERT INTO ${q(META_TABLE)} ("domain", "name", "schema") VALUES (?, ?, ?)`, [domain, name, JSON.stringify(schema)]);
        await tx.run(bumpSchemaEpochSql(), []);
        return 'created' as const;
      }
      const current = JSON.parse(rows[0]!.schema as string) as TableSchema;
      if (compareSchemas(current, schema) === 'unchanged') return 'unchanged' as const;
      for (const ddl of migrateTableDdl(describe(current), info, names, this.driver.dialect)) await tx.run(ddl, []);
      await tx.run(`UPDATE ${q(META_TABLE)} SET "schema" = ? WHERE "domain" = ? AND "name" = ?`, [JSON.stringify(schema), domain, name]);
      await tx.run(bumpSchemaEpochSql(), []);
      return 'updated' as const;
    });
    this.tables.set(`${domain}\u0000${name}`, { info, names });
    return outcome;
  }

  /** The schema with every default filled in, and its domain: PUT back as it is, it changes nothing. */
  getSchema(domain: string, name: string): Promise<TableSchema & { domain: string }> {
    return this.fresh(async () => ({ domain, ...publicSchema((await this.table(domain, name)).info.schema) }));
  }

  dropTable(domain: string, name: string): Promise<void> {
    return this.fresh(() => this.removeTable(domain, name));
  }

  async listTables(domain: string): Promise<string[]> {
    const rows = await this.driver.all(`SELECT "name" FROM ${q(META_TABLE)} WHERE "domain" = ? ORDER BY "name"`, [domain]);
    return rows.map((r) => String((r as { name: unknown }).name));
  }

  private async removeTable(domain: string, name: string): Promise<void> {
    const { names } = await this.table(domain, name);
    await this.driver.transaction(JSON.stringify(['schema', domain, name]), async (tx) => {
      for (const ddl of dropTableDdl(names)) await tx.run(ddl, []);
      await tx.run(`DELETE FROM ${q(META_TABLE)} WHERE "domain" = ? AND "name" = ?`, [domain, name]);
      await tx.run(bumpSchemaEpochSql(), []);
    });
    this.tables.delete(`${domain}\u0000${name}`);
  }

  /** Whether nothing was committed since the data version was `version` (engines with a read cache). */
  private readonly stillAt = (version: number): boolean => this.driver.dataVersion!() === version;

  async get(domain: string, query: Query): Promise<QueryResult> {
    if (typeof query !== 'object' || query === null) throw invalidInput('A query must be a JSON object.', 'invalid-query');
    // A TTL in the answer counts down, so such answers are always read anew.
    const key = this.cache && query.withTTL !== true ? cacheKey(domain, query) : undefined;
    if (key === undefined) return this.readNow(domain, query)?.result ?? this.fresh(async () => (await this.readConfirmed(domain, query)).result);
    const cache = this.cache!;
    const now = Date.now();
    // The data version is asked (a statement of its own) only where an answer is kept or could be
    // kept: an answer is kept under the version read before it, and most reads that miss are of
    // queries not asked recently, whose answers would not be kept anyway.
    let version: number | undefined;
    if (cache.holds(key)) {
      version = this.driver.dataVersion!();
      const cached = cache.get(key, version, now);
      if (cached) return cached;
    }
    if (version === undefined && cache.mayKeep(key)) version = this.driver.dataVersion!();
    return this.fresh(async () => {
      const { table, result } = this.readNow(domain, query) ?? (await this.readConfirmed(domain, query));
      const size = sizeOfAnswer(result.items);
      // (Counted as seen either way; kept only under a version asked before the read.)
      if (cache.admits(key, size) && version !== undefined) cache.set(key, result, version, await this.nextExpiry(table, version, now), this.stillAt, size);
      return result;
    });
  }

  /**
   * The common read, answered without a promise per step: on an engine that answers at once
   * (SQLite), with the table's definition kept, the rows and the schema epoch come from one
   * statement, as in `readConfirmed`. Anything else (a definition not kept or found stale, bad
   * input, an engine error) answers undefined: `readConfirmed` then reads again and handles it.
   */
  private readNow(domain: string, query: Query): { table: Table; result: QueryResult } | undefined {
    const immediate = this.driver.immediate;
    const table = immediate && typeof query.table === 'string' && this.tables.peek(`${domain}\u0000${query.table}`);
    if (!table) return undefined;
    try {
      const now = Date.now();
      const { plan, stmt } = this.pointReads.statement(table.info, table.names, query, now);
      const rows = plan.order.length === 0 ? optional(immediate.oneSync(stmt.sql, stmt.params)) : immediate.allSync(stmt.sql, stmt.params);
      const { result, epoch } = this.answer(table, plan, rows, now, true, stmt);
      this.tables.confirm(String(epoch ?? this.epochOfEmptyAnswer(() => epochIn(immediate.oneSync(readSchemaEpochSql(), [])))));
      return { table, result };
    } catch {
      return undefined;
    }
  }

  /**
   * A query's answer, read on a current definition of its table. On an engine that tells when
   * anything was committed (SQLite) the schema epoch comes with the rows, from the same statement:
   * one read where asking first took two (a point read's own transaction costs about as much as the
   * row). A definition found stale is reloaded and the read made again (`fresh`). Elsewhere the
   * definitions are checked before, as for every operation.
   */
  private async readConfirmed(domain: string, query: Query): Promise<{ table: Table; result: QueryResult }> {
    if (!this.confirmsInTransaction) {
      const table = this.keptTable(domain, query.table) ?? (await this.table(domain, query.table));
      const now = Date.now();
      const { plan, stmt } = this.pointReads.statement(table.info, table.names, query, now, false);
      const rows = plan.order.length === 0 ? optional(await this.driver.one(stmt.sql, stmt.params)) : await read(this.driver, stmt);
      return { table, result: this.answer(table, plan, rows, now, false, stmt).result };
    }
    const { table, plan } = await this.plannedOn(domain, query.table, (info) => planQuery(info, query, this.encode));
    const { result, epoch } = await this.read(table, plan, true);
    // An empty answer carries no epoch: it is asked after. Epochs only grow, so one unchanged then was unchanged during the read.
    this.tables.confirm(String(epoch ?? this.epochOfEmptyAnswer() ?? (await readEpoch(this.driver))));
    return { table, result };
  }

  /**
   * The schema epoch for an answer without rows (which carry it): the one read last, while nothing
   * was committed since by any process (the data version unchanged since before it was read),
   * else read now with `readSync` if given (undefined without it: the caller asks). Under reads
   * that find nothing (a page's facts not yet asked, the revision after the newest), that is one
   * statement a read fewer.
   */
  private epochOfEmptyAnswer(readSync: () => string): string;
  private epochOfEmptyAnswer(): string | undefined;
  private epochOfEmptyAnswer(readSync?: () => string): string | undefined {
    const version = this.driver.dataVersion?.();
    const seen = this.epochSeen;
    if (version !== undefined && seen?.version === version) return seen.epoch;
    if (!readSync) return undefined;
    const epoch = readSync();
    if (version !== undefined) this.epochSeen = { version, epoch };
    return epoch;
  }

  /**
   * When the first row of a table still live at `now` expires, asked once per table and data
   * version: until a commit, only time passing that moment changes it (the index on `_exp` answers).
   */
  private async nextExpiry(table: Table, version: number, now: number): Promise<number | undefined> {
    const known = this.expiries.get(table.names.main);
    if (known && known.version === version && (known.until === undefined || now < known.until)) return known.until;
    // Asked after the answer was read: a commit in between changes the version, which retires both.
    const [next] = await read(this.driver, nextExpiryStatement(table.names, now));
    const until = next?.exp === null || next?.exp === undefined ? undefined : Number(next.exp);
    this.expiries.set(table.names.main, { version, until });
    return until;
  }

  /** `withEpoch`: the rows carry the schema epoch (returned as `epoch` when there is a row). */
  private async read(table: Table, plan: QueryPlan, withEpoch: boolean): Promise<{ result: QueryResult; epoch?: unknown }> {
    const now = Date.now();
    const stmt = selectStatement(table.info, table.names, plan, now, withEpoch, this.driver.dialect.recursiveSkipScan, this.driver.dialect.indexHint);
    // A plan with no order columns pins every key: one row at most.
    const rows = plan.order.length === 0 ? optional(await this.driver.one(stmt.sql, stmt.params)) : await read(this.driver, stmt);
    return this.answer(table, plan, rows, now, withEpoch, stmt);
  }

  /** The rows a plan's statement returned, as items (and a paging token when the page is full). */
  private answer({ info }: Table, plan: QueryPlan, rows: SqlRow[], now: number, withEpoch: boolean, stmt: Statement): { result: QueryResult; epoch?: unknown } {
    // As in DynamoDB, a full page carries a token even if nothing follows: reading one row more
    // to find out would read its values too (a second blob for every latest-revision lookup).
    // A pinned key's value is the parameter sent, the same in every row: decoded once.
    const pinned = stmt.pinned && new Map(stmt.pinned.map(({ column, param }) => [column, fromStorage(info.schema.attributes[column]!, stmt.params[param], this.codec)]));
    const attributes = info.schema.attributes;
    const codec = this.codec;
    const value: ColumnValue = pinned
      ? (c, stored) => (pinned.has(c) ? pinned.get(c) : fromStorage(attributes[c]!, stored, codec))
      : (c, stored) => fromStorage(attributes[c]!, stored, codec);
    const make = itemMaker(plan.output);
    const items = rows.map((row) => {
      const item = make(row, value);
      if (plan.withTTL) item._ttl = row._exp === null || row._exp === undefined ? null : Math.max(0, Math.ceil((Number(row._exp) - now) / 1000));
      return item;
    });
    const epoch = withEpoch ? rows[0]?.[EPOCH_COLUMN] : undefined;
    if (rows.length < plan.limit || plan.order.length === 0) return { result: { items }, epoch };
    const lastRow = rows[plan.limit - 1]!;
    const result = withLazyNext(items, () => {
      const last = this.toItem(info, lastRow, plan.order.map((o) => o.column));
      return encodeToken(plan.fingerprint(), plan.order.map((o) => last[o.column]));
    });
    return { result, epoch };
  }

  private toItem(info: TableInfo, row: SqlRow, columns: string[]): Row {
    const item: Row = {};
    for (const c of columns) item[c] = fromStorage(info.schema.attributes[c]!, row[c], this.codec);
    return item;
  }

  /** Writes one row (and/or its partition's static columns); a failed condition is a 412 and writes nothing. */
  async put(domain: string, write: Write): Promise<void> {
    if (typeof write !== 'object' || write === null) throw invalidInput('A write must be a JSON object.', 'invalid-write');
    return this.fresh(() => this.write(domain, write));
  }

  private async write(domain: string, write: Write): Promise<void> {
    const planning = (info: TableInfo) => planWrite(info, write, this.encode);
    const { table: { info, names }, plan } = this.plannedNow(domain, write.table, planning) ?? (await this.plannedOn(domain, write.table, planning));
    const conditional = plan.notExists || plan.conditions.length > 0;
    // Writes that read their partition (a condition, a retention pass counting its rows) take its
    // lock: two retention passes each blind to the other's new row would both keep too many.
    const policy = info.schema.revisionRetentionPolicy.type;
    const counts = plan.row !== undefined && info.range.length > 0 && (policy === 'latest' || policy === 'latest_hash' || policy === 'interval');
    const locked = conditional || counts;
    // The partition's lock, named only where it is taken: SQLite's one writer takes none, and the
    // name's JSON was the largest part of a conditional update's own work there.
    let lockName: string | undefined;
    const lockKey = () => (lockName ??= JSON.stringify([names.main, ...Object.values(plan.hashKey)]));
    // `if: not exists` on a row alone is one statement where the engine can take the partition's
    // lock with it: the same lock the other conditional writes take, a fifth of the round trips.
    const alone = plan.notExists && plan.conditions.length === 0 && Object.keys(plan.statics).length === 0 && !counts && !this.confirmsInTransaction;
    const { dialect } = this.driver;
    if (alone && plan.row && locked && (dialect.lockedRow || dialect.insertsWithoutLock)) {
      const now = Date.now();
      const written = await exec(this.driver, insertUnlessLiveStatement(dialect, info, names, plan.row, this.expiry(info, plan, now), now, lockKey()));
      if (written === 0) throw conditionFailed('The row already exists.', 'row-exists');
      return;
    }
    // SQLite: the INSERT alone, in autocommit, its row given only while the schema epoch is the
    // one the definitions were planned on. BEGIN IMMEDIATE, the epoch's read, the row's read and
    // COMMIT around it took a 50 KB row's write from 155 µs of CPU to 222. None written (a live
    // row there, or the definitions changed): the transaction below tells which.
    const autocommit = this.driver.runAlone?.bind(this.driver);
    const insertEpoch = plan.notExists && plan.conditions.length === 0 && Object.keys(plan.statics).length === 0 && !counts && plan.row && autocommit && this.confirmsInTransaction
      ? this.tables.currentEpoch()
      : undefined;
    if (autocommit && insertEpoch !== undefined) {
      const now = Date.now();
      const { sql, params } = insertUnlessLiveStatement(dialect, info, names, plan.row!, this.expiry(info, plan, now), now, '', insertEpoch);
      if ((await autocommit(sql, params)) > 0) return;
    }
    const byUpdate = plan.row !== undefined && locked && updatesRowAlone(info, plan, counts);
    if (byUpdate && this.updatesInOne()) {
      const now = Date.now();
      const written = await exec(this.driver, updateIfStatement(dialect, info, names, plan.row!, this.expiry(info, plan, now), now, this.conditionValues(info, plan), lockKey()));
      if (written > 0) return;
      // None matched: the condition failed. Where only rows changed are counted, the row may
      // already hold these values: the transaction below reads it and tells which.
      if (!dialect.countsChangedRows) throw conditionFailed('The conditions on the row do not hold.', 'condition-failed');
    }
    // SQLite: the UPDATE alone, in autocommit, written only while the schema epoch is the one the
    // definitions were planned on (the statement checks it). BEGIN IMMEDIATE, the epoch's own read
    // and COMMIT were as much again as the UPDATE. None written (the condition failed, or the
    // definitions changed): the transaction below tells which.
    const epoch = byUpdate && this.confirmsInTransaction && autocommit ? this.tables.currentEpoch() : undefined;
    if (autocommit && epoch !== undefined) {
      const now = Date.now();
      const { sql, params } = updateIfStatement(dialect, info, names, plan.row!, this.expiry(info, plan, now), now, this.conditionValues(info, plan), dialect.partitionLockSource ? lockKey() : undefined, epoch);
      if ((await autocommit(sql, params)) > 0) return;
    }
    await this.driver.transaction(locked ? lockKey() : undefined, async (tx) => {
      await this.confirmDefinitions(tx);
      const now = Date.now();
      if (byUpdate && !dialect.countsChangedRows) {
        // Under the partition's lock (SQLite: the one writer), the condition and the write are one UPDATE.
        const written = await exec(tx, updateIfStatement(dialect, info, names, plan.row!, this.expiry(info, plan, now), now, this.conditionValues(info, plan), lockKey()));
        if (written === 0) throw conditionFailed('The conditions on the row do not hold.', 'condition-failed');
        return;
      }
      const { rowLive } = conditional ? await checkConditions(tx, info, names, plan, now, this.codec, dialect.lockingRead) : { rowLive: undefined };
      if (plan.row && rowLive === false && dialect.insertsWithoutLock) {
        // Found absent: written only if it still is, since an INSERT of the row takes no lock here.
        const written = await exec(tx, insertUnlessLiveStatement(dialect, info, names, plan.row, this.expiry(info, plan, now), now, lockKey()));
        if (written === 0) throw conditionFailed('The row was written meanwhile.', 'row-exists');
      } else if (plan.row) {
        await exec(tx, upsertRowStatement(dialect, info, names, plan.row, this.expiry(info, plan, now), now));
      }
      if (Object.keys(plan.statics).length > 0) await exec(tx, upsertStaticStatement(this.driver.dialect, info, names, plan.hashKey, plan.statics));
      if (plan.row) await applyRetention(tx, info, names, plan.hashKey, now);
    });
  }

  /**
   * Whether an UPDATE of the row alone is a conditional write of its own here, outside a
   * transaction: on an engine that serialises it with the partition's other conditional writes
   * within the statement, and that checks the schema epoch before writing rather than inside.
   */
  private updatesInOne(): boolean {
    const { dialect } = this.driver;
    return !this.confirmsInTransaction && (dialect.partitionLockSource !== undefined || dialect.insertsWithoutLock === true);
  }

  /** The expected values of a write's conditions, as the engine stores them. */
  private conditionValues(info: TableInfo, plan: WritePlan): { column: string; value: unknown }[] {
    return plan.conditions.map(({ column, expected }) => ({ column, value: this.encode(info.schema.attributes[column]!, expected) }));
  }

  private expiry(info: TableInfo, plan: WritePlan, now: number): number | null {
    const policy = info.schema.revisionRetentionPolicy;
    const policyTtl = policy.type === 'ttl' ? policy.ttl : undefined;
    const ttl = plan.ttl === undefined ? policyTtl : policyTtl === undefined ? plan.ttl : Math.min(plan.ttl, policyTtl);
    return ttl === undefined ? null : now + ttl * 1000;
  }

  /** Deletes the rows matching a (partial) primary key; without range keys, the static columns too. */
  async delete(domain: string, del: Delete): Promise<void> {
    if (typeof del !== 'object' || del === null) throw invalidInput('A delete must be a JSON object.', 'invalid-delete');
    await this.fresh(async () => {
      const { table: { names }, plan } = await this.plannedOn(domain, del.table, (info) => planDelete(info, del, this.encode));
      await this.driver.transaction(undefined, async (tx) => {
        await this.confirmDefinitions(tx);
        await exec(tx, deleteRowsStatement(names, plan.key));
        if (plan.wholePartition) await exec(tx, deleteStaticStatement(names, plan.hashKey));
      });
    });
  }

  /** Removes rows whose TTL has passed (reads never return them; this reclaims their space). */
  async sweepExpired(): Promise<number> {
    const tables = await this.driver.all(`SELECT "domain", "name" FROM ${q(META_TABLE)}`, []);
    let removed = 0;
    const now = Date.now();
    for (const t of tables) removed += await exec(this.driver, sweepStatement(physicalNames(t.domain as string, t.name as string), now));
    return removed;
  }

  health(timeoutMs: number): Promise<StorageHealth> {
    return checked(timeoutMs, async () => {
      await this.driver.one('SELECT 1 AS ok', []);
      return { status: 'ok' };
    });
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}

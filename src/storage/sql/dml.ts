import type { Dialect, SqlExecutor } from './driver.js';
import type { QueryPlan } from '../query-plan.js';
import type { TableInfo } from '../schema.js';
import { readSchemaEpochSql } from './ddl.js';
import { q, type PhysicalNames } from './names.js';

export interface Statement {
  sql: string;
  params: unknown[];
  /**
   * Key columns the statement does not read because its WHERE pins them (`column = ?`): each
   * row's value is the parameter at `param`, as sent. A partition's rows do not each carry the
   * key the reader gave.
   */
  pinned?: { column: string; param: number }[];
}

/** Runs a statement (its count of rows changed), or reads its rows. */
export const exec = (x: SqlExecutor, s: Statement) => x.run(s.sql, s.params);
export const read = (x: SqlExecutor, s: Statement) => x.all(s.sql, s.params);

/**
 * A row not expired at `?` (no expiry: never). Written so that no engine can answer it from the
 * index on `_exp`: a read never wants that index (its keys find its rows), but MariaDB, which
 * plans each execution of a prepared statement anew, estimated `_exp IS NULL OR _exp > ?` on it
 * with two index dives per read: a fifth of a partition read's time on the server.
 */
const LIVE = (alias: string) => `COALESCE(${alias}."_exp", ${Number.MAX_SAFE_INTEGER}) > ?`;
const SQL_OPS = { eq: '=', lt: '<', gt: '>', le: '<=', ge: '>=' } as const;

/** The columns a plan reads: its output plus the keyset columns for the paging token. */
function selectedColumns(plan: QueryPlan): string[] {
  return [...new Set([...plan.output, ...plan.order.map((o) => o.column)])];
}

/** The column `selectStatement` adds with `withEpoch`: the schema epoch, read in the same statement as the rows. */
export const EPOCH_COLUMN = '_epoch';

/**
 * `withEpoch`: each row also carries the schema epoch, read in the same statement (one snapshot),
 * so the caller can tell whether the definition it planned on was current without a second read.
 */
export function selectStatement(info: TableInfo, names: PhysicalNames, plan: QueryPlan, now: number, withEpoch = false, recursiveSkipScan = true, indexHint?: Dialect['indexHint']): Statement {
  if (recursiveSkipScan && skipsPartitions(info, plan)) return distinctPartitionsStatement(info, names, plan, now, withEpoch);
  const statics = new Set(info.statics);
  const ref = (c: string) => `${statics.has(c) ? 's' : 'm'}.${q(c)}`;
  const params: unknown[] = [];
  const where: string[] = [];
  for (const p of plan.predicates) {
    where.push(`${ref(p.column)} ${SQL_OPS[p.op]} ?`);
    params.push(p.value);
  }
  // Key predicates first: SQLite's planner then seeks the primary key before checking expiry.
  where.push(LIVE('m'));
  params.push(now);
  if (plan.currentVersions) {
    // Only each entity's current version: no live row of the same entity with a newer tid.
    const { tid, entity } = plan.currentVersions;
    where.push(`NOT EXISTS (SELECT 1 FROM ${q(names.main)} n WHERE ${entity.map((c) => `n.${q(c)} = m.${q(c)}`).join(' AND ')} AND n.${q(tid)} > m.${q(tid)} AND ${LIVE('n')})`);
    params.push(now);
  }
  for (const c of plan.notNull) where.push(`${ref(c)} IS NOT NULL`);
  if (plan.after && plan.order.length > 0) {
    // Keyset continuation: rows strictly after the last one returned, in the plan's order.
    const branches = plan.order.map((o, i) => {
      const parts = plan.order.slice(0, i).map((prev) => `${ref(prev.column)} = ?`);
      parts.push(`${ref(o.column)} ${o.dir === 'asc' ? '>' : '<'} ?`);
      return `(${parts.join(' AND ')})`;
    });
    plan.order.forEach((_, i) => params.push(...plan.after!.slice(0, i + 1)));
    where.push(`(${branches.join(' OR ')})`);
  }
  const join = plan.joinStatics
    ? ` LEFT JOIN ${q(names.statics)} s ON ${info.hash.map((h) => `s.${q(h)} = m.${q(h)}`).join(' AND ')}`
    : '';
  // Key columns pinned by equality (predicates are the first parameters, in order) are not read.
  const keys = new Set([...info.hash, ...info.range]);
  const ordered = new Set(plan.order.map((o) => o.column));
  const pinned = plan.distinct ? [] : plan.predicates.flatMap((p, param) => (p.op === 'eq' && keys.has(p.column) && !ordered.has(p.column) ? [{ column: p.column, param }] : []));
  const pinnedColumns = new Set(pinned.map((p) => p.column));
  const columns = selectedColumns(plan).filter((c) => !pinnedColumns.has(c)).map((c) => `${ref(c)} AS ${q(c)}`);
  // A statement needs a column: a row with none read still says the row is there.
  if (columns.length === 0) columns.push('1 AS "_one"');
  if (plan.withTTL) columns.push('m."_exp" AS "_exp"');
  if (withEpoch) columns.push(`(${readSchemaEpochSql()}) AS ${q(EPOCH_COLUMN)}`);
  const orderBy = plan.order.length > 0 ? ` ORDER BY ${plan.order.map((o) => `${ref(o.column)} ${o.dir.toUpperCase()}`).join(', ')}` : '';
  // A point lookup finds one row at most and needs no LIMIT. Elsewhere the limit (a validated
  // integer of at most MAX_LIMIT) is written into the SQL: bound as a parameter, it keeps SQLite
  // from planning the small-limit read it is, several times slower on a latest-revision read.
  const point = plan.order.length === 0;
  if (!point && !(Number.isSafeInteger(plan.limit) && plan.limit > 0)) throw new Error(`invalid limit ${plan.limit}`);
  const hint = plan.index && indexHint ? indexHint(names.index(plan.index.name, plan.index.elements)) : '';
  return {
    sql: `SELECT ${plan.distinct ? 'DISTINCT ' : ''}${columns.join(', ')} FROM ${q(names.main)} m${hint}${join} WHERE ${where.join(' AND ')}${orderBy}${point ? '' : ` LIMIT ${plan.limit}`}`,
    params,
    ...(pinned.length ? { pinned } : {}),
  };
}

/** Whether a partition listing (distinct) can be read partition by partition (see `distinctPartitionsStatement`). */
function skipsPartitions(info: TableInfo, plan: QueryPlan): boolean {
  const statics = new Set(info.statics);
  return (
    plan.distinct && !plan.withTTL && info.hash.length === 1 && plan.order.length === 1 && plan.order[0]!.column === info.hash[0] &&
    plan.order[0]!.dir === 'asc' && !plan.predicates.some((p) => statics.has(p.column)) && !plan.notNull.some((c) => statics.has(c))
  );
}

/**
 * A page of a table's partitions, each found by one index seek from the one before (a skip scan,
 * which neither engine does by itself): `SELECT DISTINCT` over the rows read every row after the
 * page's start (PostgreSQL) or most of them (SQLite), so a listing's first pages cost in
 * proportion to the whole table. The recursion stops at the page's size.
 */
function distinctPartitionsStatement(info: TableInfo, names: PhysicalNames, plan: QueryPlan, now: number, withEpoch: boolean): Statement {
  const hash = q(info.hash[0]!);
  const params: unknown[] = [];
  // The live rows of partitions after `from` (SQL naming the previous partition, or none).
  const nextPartition = (from: string | undefined, fromParams: unknown[]) => {
    const where: string[] = [];
    for (const p of plan.predicates) {
      where.push(`m.${q(p.column)} ${SQL_OPS[p.op]} ?`);
      params.push(p.value);
    }
    where.push(LIVE('m'));
    params.push(now);
    for (const c of plan.notNull) where.push(`m.${q(c)} IS NOT NULL`);
    if (from !== undefined) {
      where.push(`m.${hash} > ${from}`);
      params.push(...fromParams);
    }
    return `(SELECT m.${hash} FROM ${q(names.main)} m WHERE ${where.join(' AND ')} ORDER BY m.${hash} ASC LIMIT 1)`;
  };
  const first = plan.after ? nextPartition('?', [plan.after[0]]) : nextPartition(undefined, []);
  const next = nextPartition('k.h', []);
  const columns = selectedColumns(plan).map((c) => (c === info.hash[0] ? `k.h AS ${q(c)}` : `s.${q(c)} AS ${q(c)}`));
  const join = info.statics.length > 0 ? ` LEFT JOIN ${q(names.statics)} s ON s.${hash} = k.h` : '';
  if (withEpoch) columns.push(`(${readSchemaEpochSql()}) AS ${q(EPOCH_COLUMN)}`);
  if (!(Number.isSafeInteger(plan.limit) && plan.limit > 0)) throw new Error(`invalid limit ${plan.limit}`);
  return {
    sql:
      `WITH RECURSIVE k(h, n) AS (SELECT ${first}, 1 UNION ALL SELECT ${next}, k.n + 1 FROM k WHERE k.h IS NOT NULL AND k.n < ${plan.limit}) ` +
      `SELECT ${columns.join(', ')} FROM k${join} WHERE k.h IS NOT NULL ORDER BY k.h ASC LIMIT ${plan.limit}`,
    params,
  };
}

/** When the first row of the table still live at `now` expires (the partial index on `_exp` answers it). */
export function nextExpiryStatement(names: PhysicalNames, now: number): Statement {
  return { sql: `SELECT MIN("_exp") AS "exp" FROM ${q(names.main)} WHERE "_exp" > ?`, params: [now] };
}

/** Upsert of one row; columns it does not name keep their value unless the old row had expired. */
export function upsertRowStatement(dialect: Dialect, info: TableInfo, names: PhysicalNames, values: Record<string, unknown>, exp: number | null, now: number): Statement {
  const keys = [...info.hash, ...info.range];
  const given = Object.keys(values);
  const table = q(names.main);
  const kept = info.regular.filter((c) => !given.includes(c));
  // `_exp` is set last: MariaDB reads a column assigned earlier in the list with its new value.
  const sets = [
    ...given.filter((c) => !keys.includes(c)).map((c) => `${q(c)} = ${dialect.inserted(c)}`),
    ...kept.map((c) => `${q(c)} = CASE WHEN ${table}."_exp" IS NOT NULL AND ${table}."_exp" <= ? THEN NULL ELSE ${table}.${q(c)} END`),
    `"_exp" = ${dialect.inserted('_exp')}`,
  ];
  const columns = [...given, '_exp'];
  return {
    sql: `INSERT INTO ${table} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ${dialect.onConflictUpdate(keys)} ${sets.join(', ')}`,
    params: [...Object.values(values), exp, ...kept.map(() => now)],
  };
}

/**
 * A row written unless a live row has its key (`if: not exists` as one statement): an INSERT whose
 * conflict replaces only a row whose TTL has passed (absent to every read), so its affected rows
 * say which: none when a live row is there. On an engine whose dialect takes the partition's lock
 * in the statement (`lockedRow`), `lockKey` is its last row parameter.
 */
export function insertUnlessLiveStatement(
  dialect: Dialect, info: TableInfo, names: PhysicalNames, values: Record<string, unknown>, exp: number | null, now: number, lockKey: string, epoch?: string,
): Statement {
  const given = Object.keys(values);
  const { sql, locked, conditionUses } = insertUnlessLiveSql(dialect, info, names, given, epoch !== undefined);
  return {
    sql,
    params: [...Object.values(values), exp, ...(locked ? [lockKey] : epoch === undefined ? [] : [Number(epoch)]), ...Array.from({ length: conditionUses }, () => now)],
  };
}

/** The text of `insertUnlessLiveStatement`, kept per table and shape as `updateIfSql`'s is: made anew, it was a twentieth of a small row's write. */
const insertUnlessLiveShapes = new WeakMap<PhysicalNames, Map<string, { sql: string; locked: boolean; conditionUses: number }>>();

function insertUnlessLiveSql(dialect: Dialect, info: TableInfo, names: PhysicalNames, given: string[], withEpoch: boolean): { sql: string; locked: boolean; conditionUses: number } {
  let shapes = insertUnlessLiveShapes.get(names);
  if (!shapes) insertUnlessLiveShapes.set(names, (shapes = new Map()));
  const shape = `${given.join('\0')}\u0001${withEpoch}`;
  let made = shapes.get(shape);
  if (made === undefined) {
    const keys = [...info.hash, ...info.range];
    const table = q(names.main);
    const columns = [...given, '_exp'];
    const locked = dialect.lockedRow?.([...given.map((c) => dialect.columnType(info.schema.attributes[c]!)), dialect.int64]);
    // With the epoch (an engine without a partition lock to take, SQLite): the row comes from a
    // SELECT that yields it only while the schema epoch is still the one given, so that the
    // statement alone, outside a transaction, writes only on the definitions it was planned on.
    const placeholders = columns.map(() => '?').join(', ');
    const source = locked ?? (withEpoch ? `SELECT ${placeholders} WHERE (${readSchemaEpochSql()}) = ?` : `VALUES (${placeholders})`);
    // `_exp` last: MariaDB reads a column assigned earlier in the list with its new value.
    const sets: [string, string][] = [
      ...given.filter((c) => !keys.includes(c)).map((c): [string, string] => [c, dialect.inserted(c)]),
      ...info.regular.filter((c) => !given.includes(c)).map((c): [string, string] => [c, 'NULL']),
      ['_exp', dialect.inserted('_exp')],
    ];
    const { sql, conditionUses } = dialect.upsertWhere(names.main, keys, sets, `${table}."_exp" IS NOT NULL AND ${table}."_exp" <= ?`);
    made = { sql: `INSERT INTO ${table} (${columns.map(q).join(', ')}) ${source} ${sql}`, locked: locked !== undefined, conditionUses };
    // Shapes are few per table; a caller that varied them without end would not grow this past a bound.
    if (shapes.size >= 256) shapes.clear();
    shapes.set(shape, made);
  }
  return made;
}

/**
 * A live row's columns written only where its conditions hold (`if: {column: {eq}}` as one
 * statement): an UPDATE whose WHERE is the key, the row being live and each condition, so its
 * affected rows say whether it held. Columns not given keep their values (the row is live). Where
 * the dialect takes the partition's lock in a statement (`partitionLockSource`), `lockKey` is its
 * parameter: the UPDATE serialises with the partition's other conditional writes as they do.
 * `epoch`: written only while the schema epoch is still this one (the definitions the write was
 * planned on are current), checked by the statement itself, outside any transaction.
 */
export function updateIfStatement(
  dialect: Dialect, info: TableInfo, names: PhysicalNames, values: Record<string, unknown>, exp: number | null, now: number,
  conditions: { column: string; value: unknown }[], lockKey: string | undefined, epoch?: string,
): Statement {
  const keys = [...info.hash, ...info.range];
  const given = Object.keys(values).filter((c) => !keys.includes(c));
  const lock = dialect.partitionLockSource;
  if (lock && lockKey === undefined) throw new Error('A partition lock is taken by name.');
  return {
    sql: updateIfSql(dialect, names, keys, given, conditions, epoch !== undefined),
    params: [...given.map((c) => values[c]), exp, ...(lock ? [lockKey] : []), ...keys.map((k) => values[k]), now, ...conditions.map((c) => c.value), ...(epoch === undefined ? [] : [Number(epoch)])],
  };
}

/**
 * The UPDATE's text, kept per table and shape (the columns written, the columns compared): a
 * save's or a follower's compare-and-set has one shape, and made anew each time it was a tenth of
 * the layer's own work on SQLite, with the driver's statement lookup hashing the new string again.
 */
const updateIfShapes = new WeakMap<PhysicalNames, Map<string, string>>();

function updateIfSql(dialect: Dialect, names: PhysicalNames, keys: string[], given: string[], conditions: { column: string }[], epoch: boolean): string {
  let shapes = updateIfShapes.get(names);
  if (!shapes) updateIfShapes.set(names, (shapes = new Map()));
  // Everything the text depends on beside the table's names: its keys, what is written and compared, the lock, the epoch.
  const shape = `${keys.join('\0')}\u0001${given.join('\0')}\u0001${conditions.map((c) => c.column).join('\0')}\u0001${dialect.partitionLockSource ?? ''}\u0001${epoch}`;
  let sql = shapes.get(shape);
  if (sql === undefined) {
    const table = q(names.main);
    const sets = [...given.map((c) => `${q(c)} = ?`), '"_exp" = ?'];
    const lock = dialect.partitionLockSource;
    sql = `UPDATE ${table} SET ${sets.join(', ')}${lock ? ` FROM ${lock}` : ''} WHERE ${[
      ...keys.map((k) => `${table}.${q(k)} = ?`), LIVE(table), ...conditions.map((c) => `${table}.${q(c.column)} = ?`),
      ...(epoch ? [`(${readSchemaEpochSql()}) = ?`] : []),
    ].join(' AND ')}`;
    // Shapes are few per table; a caller that varied them without end would not grow this past a bound.
    if (shapes.size >= 256) shapes.clear();
    shapes.set(shape, sql);
  }
  return sql;
}

export function upsertStaticStatement(dialect: Dialect, info: TableInfo, names: PhysicalNames, hashKey: Record<string, unknown>, values: Record<string, unknown>): Statement {
  const columns = [...info.hash, ...Object.keys(values)];
  return {
    sql: `INSERT INTO ${q(names.statics)} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ${dialect.onConflictUpdate(info.hash)} ${Object.keys(values).map((c) => `${q(c)} = ${dialect.inserted(c)}`).join(', ')}`,
    params: [...info.hash.map((h) => hashKey[h]), ...Object.values(values)],
  };
}

function whereEquals(key: Record<string, unknown>): { clause: string; params: unknown[] } {
  const cols = Object.keys(key);
  return { clause: cols.map((c) => `${q(c)} = ?`).join(' AND '), params: cols.map((c) => key[c]) };
}

export function readRowStatement(names: PhysicalNames, key: Record<string, unknown>, columns: string[], now: number, locking = ''): Statement {
  const w = whereEquals(key);
  const cols = columns.length > 0 ? columns.map(q).join(', ') : '1 AS "present"';
  return { sql: `SELECT ${cols} FROM ${q(names.main)} m WHERE ${w.clause} AND ${LIVE('m')}${locking}`, params: [...w.params, now] };
}

export function readStaticStatement(names: PhysicalNames, hashKey: Record<string, unknown>, columns: string[]): Statement {
  const w = whereEquals(hashKey);
  return { sql: `SELECT ${columns.map(q).join(', ')} FROM ${q(names.statics)} WHERE ${w.clause}`, params: w.params };
}

export function deleteRowsStatement(names: PhysicalNames, key: Record<string, unknown>): Statement {
  const w = whereEquals(key);
  return { sql: `DELETE FROM ${q(names.main)} WHERE ${w.clause}`, params: w.params };
}

export function deleteStaticStatement(names: PhysicalNames, hashKey: Record<string, unknown>): Statement {
  const w = whereEquals(hashKey);
  return { sql: `DELETE FROM ${q(names.statics)} WHERE ${w.clause}`, params: w.params };
}

/**
 * The partition's rows that have no expiry yet, what retention policies look at: newest first
 * (every range key descending), or in the table's own order (each in its declared direction).
 */
export function retentionCandidatesStatement(info: TableInfo, names: PhysicalNames, hashKey: Record<string, unknown>, order: 'declared' | 'newest-first'): Statement {
  const w = whereEquals(hashKey);
  const direction = (r: string) => (order === 'declared' && info.rangeOrder[r] === 'asc' ? 'ASC' : 'DESC');
  return {
    sql: `SELECT ${info.range.map(q).join(', ')} FROM ${q(names.main)} WHERE ${w.clause} AND "_exp" IS NULL ORDER BY ${info.range.map((r) => `${q(r)} ${direction(r)}`).join(', ')}`,
    params: w.params,
  };
}

export function expireRowStatement(names: PhysicalNames, key: Record<string, unknown>, exp: number): Statement {
  const w = whereEquals(key);
  return { sql: `UPDATE ${q(names.main)} SET "_exp" = ? WHERE ${w.clause} AND ("_exp" IS NULL OR "_exp" > ?)`, params: [exp, ...w.params, exp] };
}

export function sweepStatement(names: PhysicalNames, now: number): Statement {
  return { sql: `DELETE FROM ${q(names.main)} WHERE "_exp" IS NOT NULL AND "_exp" <= ?`, params: [now] };
}

import { createHash } from 'node:crypto';
import type { TableInfo } from '../schema.js';
import type { IndexElement } from '../types.js';
import { cqlType } from './cql-values.js';

/** Attribute names are validated against a strict pattern; quoting keeps their case. */
export const q = (identifier: string) => `"${identifier}"`;

const short = (text: string, length: number) => createHash('sha1').update(text).digest('hex').slice(0, length);
/** Readable part of a name (Cassandra allows [A-Za-z0-9_], 48 characters at most); a hash keeps it unique. */
const slug = (text: string, length: number) => text.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, length);

export function keyspaceName(prefix: string, domain: string): string {
  return `${prefix}_${slug(domain, 24)}_${short(domain, 8)}`;
}

export function metaKeyspaceName(prefix: string): string {
  return `${prefix}_meta`;
}

/** A secondary index kept as a table of its own: partitioned by the index's hash keys. */
export interface IndexTable {
  name: string;
  /** Physical table name; it changes with the index's definition, so a redefinition starts afresh. */
  table: string;
  hash: string[];
  /** The index's range keys in declared order, then the primary keys it does not name. */
  clustering: { column: string; dir: 'asc' | 'desc' }[];
  /** Every column an entry holds: what a write must know to place it. */
  columns: string[];
}

export interface CqlTable {
  keyspace: string;
  main: string;
  indexes: Map<string, IndexTable>;
}

export function indexTable(info: TableInfo, table: string, name: string, elements: IndexElement[]): IndexTable {
  const hash = elements.filter((e) => e.type === 'hash').map((e) => e.attribute);
  const clustering = elements.filter((e) => e.type === 'range').map((e) => ({ column: e.attribute, dir: e.order ?? 'asc' }));
  // The table's keys the index does not name follow, descending (or, in an index made before
  // layouts had a number, in their own order: its table keeps the name and order it was made with).
  for (const column of [...info.hash, ...info.range]) {
    if (!hash.includes(column) && !clustering.some((c) => c.column === column)) clustering.push({ column, dir: info.indexKeysDescending ? 'desc' : (info.rangeOrder[column] ?? 'asc') });
  }
  const layout = info.indexKeysDescending ? `\u0000${info.schema.indexLayout}` : '';
  return {
    name,
    table: `${slug(table, 20)}_${short(table, 8)}_i${short(`${name}\u0000${JSON.stringify(elements)}${layout}`, 8)}`,
    hash,
    clustering,
    columns: [...hash, ...clustering.map((c) => c.column)],
  };
}

export function cqlTable(info: TableInfo, keyspace: string, table: string): CqlTable {
  const indexes = new Map(Object.entries(info.schema.secondaryIndexes).map(([name, elements]) => [name, indexTable(info, table, name, elements)]));
  return { keyspace, main: `t_${slug(table, 30)}_${short(table, 8)}`, indexes };
}

export const qualified = (keyspace: string, table: string) => `${q(keyspace)}.${q(table)}`;

function primaryKey(hash: string[], clustering: { column: string; dir: 'asc' | 'desc' }[]): string {
  const partition = `(${hash.map(q).join(', ')})`;
  return `PRIMARY KEY (${[partition, ...clustering.map((c) => q(c.column))].join(', ')})`;
}

const CASSANDRA_GC_GRACE = 864000;
const COMPACTION: Record<string, string> = {
  // Rows that end by TTL in the order they were written: whole windows are dropped at once.
  timeseries: "{'class': 'TimeWindowCompactionStrategy', 'compaction_window_unit': 'HOURS', 'compaction_window_size': 1}",
  'random-update': "{'class': 'LeveledCompactionStrategy'}",
  'write-once': "{'class': 'SizeTieredCompactionStrategy'}",
};

/** The table properties a schema's options set (see checkStorageOptions); Cassandra's defaults where it names none. */
function tableProperties(options: Record<string, unknown>): string[] {
  const grace = typeof options.gc_grace_seconds === 'number' ? options.gc_grace_seconds : CASSANDRA_GC_GRACE;
  const pattern = (options.updates as { pattern?: string } | undefined)?.pattern ?? 'write-once';
  return [`gc_grace_seconds = ${grace}`, `compaction = ${COMPACTION[pattern]}`];
}

function withClause(clustering: { column: string; dir: 'asc' | 'desc' }[], options: Record<string, unknown>): string {
  const order = clustering.length > 0 ? [`CLUSTERING ORDER BY (${clustering.map((c) => `${q(c.column)} ${c.dir.toUpperCase()}`).join(', ')})`] : [];
  return ` WITH ${[...order, ...tableProperties(options)].join(' AND ')}`;
}

function indexDdl(info: TableInfo, t: CqlTable, index: IndexTable): string {
  const columns = index.columns.map((c) => `${q(c)} ${cqlType(info.schema.attributes[c]!)}`);
  return `CREATE TABLE IF NOT EXISTS ${qualified(t.keyspace, index.table)} (${columns.join(', ')}, ${primaryKey(index.hash, index.clustering)})${withClause(index.clustering, info.schema.options)}`;
}

export function createTableCql(info: TableInfo, t: CqlTable): string[] {
  const column = (c: string, suffix = '') => `${q(c)} ${cqlType(info.schema.attributes[c]!)}${suffix}`;
  const clustering = info.range.map((column) => ({ column, dir: info.rangeOrder[column] ?? ('asc' as const) }));
  // `_exp` (expiry, ms since the epoch) is written with the row's TTL: it says which rows already
  // expire, which retention policies and withTTL need and TTL() cannot tell for null columns
  // (0 or null: never; see NO_EXPIRY).
  const columns = [
    ...[...info.hash, ...info.range].map((c) => column(c)),
    ...info.statics.map((c) => column(c, ' STATIC')),
    '"_exp" bigint',
    ...info.regular.map((c) => column(c)),
  ];
  return [
    `CREATE TABLE IF NOT EXISTS ${qualified(t.keyspace, t.main)} (${columns.join(', ')}, ${primaryKey(info.hash, clustering)})${withClause(clustering, info.schema.options)}`,
    ...[...t.indexes.values()].map((index) => indexDdl(info, t, index)),
  ];
}

/** Statements from one compatible schema version to the next, and the index tables to fill. */
export function migrateTableCql(from: TableInfo, to: TableInfo, before: CqlTable, after: CqlTable): { statements: string[]; newIndexes: IndexTable[] } {
  const main = qualified(after.keyspace, after.main);
  const oldTables = new Set([...before.indexes.values()].map((i) => i.table));
  const newTables = new Set([...after.indexes.values()].map((i) => i.table));
  const statements = [
    ...[...oldTables].filter((n) => !newTables.has(n)).map((n) => `DROP TABLE IF EXISTS ${qualified(after.keyspace, n)}`),
    ...from.regular.filter((c) => !to.regular.includes(c)).map((c) => `ALTER TABLE ${main} DROP IF EXISTS ${q(c)}`),
    ...from.statics.filter((c) => !to.statics.includes(c)).map((c) => `ALTER TABLE ${main} DROP IF EXISTS ${q(c)}`),
    ...to.regular.filter((c) => !from.regular.includes(c)).map((c) => `ALTER TABLE ${main} ADD IF NOT EXISTS ${q(c)} ${cqlType(to.schema.attributes[c]!)}`),
    ...to.statics.filter((c) => !from.statics.includes(c)).map((c) => `ALTER TABLE ${main} ADD IF NOT EXISTS ${q(c)} ${cqlType(to.schema.attributes[c]!)} STATIC`),
  ];
  const newIndexes = [...after.indexes.values()].filter((i) => !oldTables.has(i.table));
  statements.push(...newIndexes.map((index) => indexDdl(to, after, index)));
  const properties = tableProperties(to.schema.options);
  if (properties.join() !== tableProperties(from.schema.options).join()) {
    const kept = [...after.indexes.values()].filter((i) => oldTables.has(i.table)).map((i) => qualified(after.keyspace, i.table));
    statements.push(...[main, ...kept].map((table) => `ALTER TABLE ${table} WITH ${properties.join(' AND ')}`));
  }
  return { statements, newIndexes };
}

export function dropTableCql(t: CqlTable): string[] {
  return [t.main, ...[...t.indexes.values()].map((i) => i.table)].map((n) => `DROP TABLE IF EXISTS ${qualified(t.keyspace, n)}`);
}

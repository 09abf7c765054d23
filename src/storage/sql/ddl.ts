import type { TableInfo } from '../schema.js';
import type { TableSchema } from '../types.js';
import type { Dialect } from './driver.js';
import { META_TABLE, q, SCHEMA_EPOCH_TABLE, type PhysicalNames } from './names.js';

/** The bookkeeping tables every SQL store has: table definitions, and the schema epoch's one row. */
export function metaTableDdl(dialect: Dialect): { sql: string; params: unknown[] }[] {
  const key = dialect.shortKeyText;
  return [
    {
      sql: `CREATE TABLE IF NOT EXISTS ${q(META_TABLE)} ("domain" ${key} NOT NULL, "name" ${key} NOT NULL, "schema" ${dialect.columnType('json')} NOT NULL, PRIMARY KEY ("domain", "name"))${dialect.tableOptions}`,
      params: [],
    },
    { sql: `CREATE TABLE IF NOT EXISTS ${q(SCHEMA_EPOCH_TABLE)} (id INTEGER NOT NULL PRIMARY KEY, epoch BIGINT NOT NULL)${dialect.tableOptions}`, params: [] },
    { sql: dialect.insertIfAbsent(SCHEMA_EPOCH_TABLE, ['id', 'epoch'], ['id']), params: [1, 0] },
  ];
}

export const readSchemaEpochSql = () => `SELECT epoch FROM ${q(SCHEMA_EPOCH_TABLE)} WHERE id = 1`;
export const bumpSchemaEpochSql = () => `UPDATE ${q(SCHEMA_EPOCH_TABLE)} SET epoch = epoch + 1 WHERE id = 1`;

function column(info: TableInfo, dialect: Dialect, name: string): string {
  return `${q(name)} ${dialect.columnType(info.schema.attributes[name]!)}`;
}

/** The key columns' definitions, in key order (hash, then range). */
function keyColumns(info: TableInfo, dialect: Dialect): Map<string, string> {
  const keys = [...info.hash, ...info.range];
  const types = dialect.keyColumnTypes(keys.map((k) => info.schema.attributes[k]!));
  return new Map(keys.map((k, i) => [k, `${q(k)} ${types[i]} NOT NULL`]));
}

function secondaryIndexDdl(info: TableInfo, names: PhysicalNames, dialect: Dialect): string[] {
  return Object.entries(info.schema.secondaryIndexes).map(([name, elements]) => {
    const cols = elements.filter((e) => e.type === 'hash' || e.type === 'range').map((e) => dialect.indexColumn(e.attribute, info.schema.attributes[e.attribute]!));
    return `CREATE INDEX IF NOT EXISTS ${q(names.index(name, elements))} ON ${q(names.main)} (${cols.join(', ')})`;
  });
}

export function createTableDdl(info: TableInfo, names: PhysicalNames, dialect: Dialect): string[] {
  const keys = keyColumns(info, dialect);
  // `_exp` sits right after the keys: every read checks it, and in SQLite a column stored after a
  // large blob can only be reached by walking the blob's overflow pages.
  const mainCols = [...keys.values(), `"_exp" ${dialect.int64}`, ...info.regular.map((c) => column(info, dialect, c))];
  const staticCols = [...info.hash.map((k) => keys.get(k)!), ...info.statics.map((c) => column(info, dialect, c))];
  return [
    `CREATE TABLE IF NOT EXISTS ${q(names.main)} (${mainCols.join(', ')}, PRIMARY KEY (${[...keys.keys()].map(q).join(', ')}))${dialect.tableOptions}`,
    `CREATE TABLE IF NOT EXISTS ${q(names.statics)} (${staticCols.join(', ')}, PRIMARY KEY (${info.hash.map(q).join(', ')}))${dialect.tableOptions}`,
    `CREATE INDEX IF NOT EXISTS ${q(names.expiry)} ON ${q(names.main)} ("_exp")${dialect.partialIndexes ? ' WHERE "_exp" IS NOT NULL' : ''}`,
    ...secondaryIndexDdl(info, names, dialect),
  ];
}

/** Statements that take a table from one compatible schema version to the next. */
export function migrateTableDdl(from: TableInfo, to: TableInfo, names: PhysicalNames, dialect: Dialect): string[] {
  const out: string[] = [];
  // Indexes go first: a column cannot be dropped while an index uses it.
  const indexNames = (s: TableSchema) => new Set(Object.entries(s.secondaryIndexes).map(([n, e]) => names.index(n, e)));
  const before = indexNames(from.schema);
  const after = indexNames(to.schema);
  for (const name of before) if (!after.has(name)) out.push(dialect.dropIndex(name, names.main));
  for (const c of from.regular.filter((c) => !to.regular.includes(c))) out.push(`ALTER TABLE ${q(names.main)} DROP COLUMN ${q(c)}`);
  for (const c of from.statics.filter((c) => !to.statics.includes(c))) out.push(`ALTER TABLE ${q(names.statics)} DROP COLUMN ${q(c)}`);
  for (const c of to.regular.filter((c) => !from.regular.includes(c))) out.push(`ALTER TABLE ${q(names.main)} ADD COLUMN ${column(to, dialect, c)}`);
  for (const c of to.statics.filter((c) => !from.statics.includes(c))) out.push(`ALTER TABLE ${q(names.statics)} ADD COLUMN ${column(to, dialect, c)}`);
  out.push(...secondaryIndexDdl(to, names, dialect));
  return out;
}

export function dropTableDdl(names: PhysicalNames): string[] {
  return [`DROP TABLE IF EXISTS ${q(names.main)}`, `DROP TABLE IF EXISTS ${q(names.statics)}`];
}

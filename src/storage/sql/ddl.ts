import type { TableInfo } from '../schema.js';
import type { TableSchema } from '../types.js';
import type { Dialect } from './driver.js';
import { META_TABLE, q, SCHEMA_EPOCH_TABLE, type PhysicalNames } from './names.js';

export function metaTableDdl(): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${q(META_TABLE)} (domain TEXT NOT NULL, name TEXT NOT NULL, schema TEXT NOT NULL, PRIMARY KEY (domain, name))`,
    `CREATE TABLE IF NOT EXISTS ${q(SCHEMA_EPOCH_TABLE)} (id INTEGER NOT NULL PRIMARY KEY, epoch BIGINT NOT NULL)`,
    `INSERT INTO ${q(SCHEMA_EPOCH_TABLE)} (id, epoch) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`,
  ];
}

export const readSchemaEpochSql = () => `SELECT epoch FROM ${q(SCHEMA_EPOCH_TABLE)} WHERE id = 1`;
export const bumpSchemaEpochSql = () => `UPDATE ${q(SCHEMA_EPOCH_TABLE)} SET epoch = epoch + 1 WHERE id = 1`;

function column(info: TableInfo, dialect: Dialect, name: string, key: boolean): string {
  return `${q(name)} ${dialect.columnType(info.schema.attributes[name]!)}${key ? ' NOT NULL' : ''}`;
}

function secondaryIndexDdl(info: TableInfo, names: PhysicalNames): string[] {
  return Object.entries(info.schema.secondaryIndexes).map(([name, elements]) => {
    const cols = elements.filter((e) => e.type === 'hash' || e.type === 'range').map((e) => q(e.attribute));
    return `CREATE INDEX IF NOT EXISTS ${q(names.index(name, elements))} ON ${q(names.main)} (${cols.join(', ')})`;
  });
}

export function createTableDdl(info: TableInfo, names: PhysicalNames, dialect: Dialect): string[] {
  const keys = [...info.hash, ...info.range];
  // `_exp` sits right after the keys: every read checks it, and in SQLite a column stored after a
  // large blob can only be reached by walking the blob's overflow pages.
  const mainCols = [
    ...keys.map((k) => column(info, dialect, k, true)),
    `"_exp" ${dialect.int64}`,
    ...info.regular.map((c) => column(info, dialect, c, false)),
  ];
  const staticCols = [...info.hash.map((k) => column(info, dialect, k, true)), ...info.statics.map((c) => column(info, dialect, c, false))];
  return [
    `CREATE TABLE IF NOT EXISTS ${q(names.main)} (${mainCols.join(', ')}, PRIMARY KEY (${keys.map(q).join(', ')}))`,
    `CREATE TABLE IF NOT EXISTS ${q(names.statics)} (${staticCols.join(', ')}, PRIMARY KEY (${info.hash.map(q).join(', ')}))`,
    `CREATE INDEX IF NOT EXISTS ${q(names.expiry)} ON ${q(names.main)} ("_exp") WHERE "_exp" IS NOT NULL`,
    ...secondaryIndexDdl(info, names),
  ];
}

/** Statements that take a table from one compatible schema version to the next. */
export function migrateTableDdl(from: TableInfo, to: TableInfo, names: PhysicalNames, dialect: Dialect): string[] {
  const out: string[] = [];
  // Indexes go first: a column cannot be dropped while an index uses it.
  const indexNames = (s: TableSchema) => new Set(Object.entries(s.secondaryIndexes).map(([n, e]) => names.index(n, e)));
  const before = indexNames(from.schema);
  const after = indexNames(to.schema);
  for (const name of before) if (!after.has(name)) out.push(`DROP INDEX IF EXISTS ${q(name)}`);
  for (const c of from.regular.filter((c) => !to.regular.includes(c))) out.push(`ALTER TABLE ${q(names.main)} DROP COLUMN ${q(c)}`);
  for (const c of from.statics.filter((c) => !to.statics.includes(c))) out.push(`ALTER TABLE ${q(names.statics)} DROP COLUMN ${q(c)}`);
  for (const c of to.regular.filter((c) => !from.regular.includes(c))) out.push(`ALTER TABLE ${q(names.main)} ADD COLUMN ${column(to, dialect, c, false)}`);
  for (const c of to.statics.filter((c) => !from.statics.includes(c))) out.push(`ALTER TABLE ${q(names.statics)} ADD COLUMN ${column(to, dialect, c, false)}`);
  out.push(...secondaryIndexDdl(to, names));
  return out;
}

export function dropTableDdl(names: PhysicalNames): string[] {
  return [`DROP TABLE IF EXISTS ${q(names.main)}`, `DROP TABLE IF EXISTS ${q(names.statics)}`];
}

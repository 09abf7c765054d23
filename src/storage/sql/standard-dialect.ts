import type { Dialect } from './driver.js';
import { q } from './names.js';

/** The spellings SQLite and PostgreSQL share (the SQL standard's, or their common extension of it). */
export const standardSpellings: Pick<Dialect, 'tableOptions' | 'partialIndexes' | 'recursiveSkipScan' | 'indexColumn' | 'dropIndex' | 'onConflictUpdate' | 'inserted' | 'insertIfAbsent' | 'upsertWhere'> = {
  tableOptions: '',
  partialIndexes: true,
  recursiveSkipScan: true,
  indexColumn: (name) => q(name),
  dropIndex: (index) => `DROP INDEX IF EXISTS ${q(index)}`,
  onConflictUpdate: (keys) => `ON CONFLICT (${keys.map(q).join(', ')}) DO UPDATE SET`,
  inserted: (column) => `excluded.${q(column)}`,
  upsertWhere: (_table, keys, sets, condition) => ({
    sql: `ON CONFLICT (${keys.map(q).join(', ')}) DO UPDATE SET ${sets.map(([c, v]) => `${q(c)} = ${v}`).join(', ')} WHERE ${condition}`,
    conditionUses: 1,
  }),
  insertIfAbsent: (table, columns, keys) =>
    `INSERT INTO ${q(table)} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT (${keys.map(q).join(', ')}) DO NOTHING`,
};

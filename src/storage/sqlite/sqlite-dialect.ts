import type { Dialect } from '../sql/driver.js';
import type { AttributeType } from '../types.js';
import { standardSpellings } from '../sql/standard-dialect.js';
import { q } from '../sql/names.js';

const TYPES: Record<string, string> = {
  blob: 'BLOB', string: 'TEXT', int: 'INTEGER', long: 'INTEGER', varint: 'INTEGER', decimal: 'TEXT', float: 'REAL', double: 'REAL',
  boolean: 'INTEGER', timeuuid: 'TEXT', uuid: 'TEXT', timestamp: 'INTEGER', json: 'TEXT',
};

const columnType = (type: AttributeType) => (type.startsWith('set<') ? 'TEXT' : TYPES[type]!);

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  nativeBoolean: false,
  // Decimals are stored as order-preserving text (see decimal.ts).
  nativeDecimal: false,
  int64: 'INTEGER',
  shortKeyText: 'TEXT',
  ...standardSpellings,
  columnType,
  keyColumnTypes: (types) => types.map(columnType),
  indexHint: (index) => ` INDEXED BY ${q(index)}`,
  // Another process held the write lock past busy_timeout.
  isUnavailable: (err) => ['SQLITE_BUSY', 'SQLITE_LOCKED'].some((code) => ((err as { code?: string } | null)?.code ?? '').startsWith(code)),
  isStaleSchema: (err) => err instanceof Error && (err as { code?: string }).code === 'SQLITE_ERROR' && /no such (table|column|index)|has no column named/.test(err.message),
};

import type { Dialect } from '../sql/driver.js';
import type { AttributeType } from '../types.js';

/** Text sorts bytewise (COLLATE "C") so key order and paging match SQLite's. */
const TYPES: Record<string, string> = {
  blob: 'BYTEA', string: 'TEXT COLLATE "C"', int: 'INTEGER', long: 'BIGINT', varint: 'BIGINT', decimal: 'NUMERIC', float: 'DOUBLE PRECISION',
  double: 'DOUBLE PRECISION', boolean: 'BOOLEAN', timeuuid: 'TEXT COLLATE "C"', uuid: 'TEXT COLLATE "C"', timestamp: 'BIGINT', json: 'TEXT',
};

export const postgresDialect: Dialect = {
  name: 'postgres',
  nativeBoolean: true,
  nativeDecimal: true,
  int64: 'BIGINT',
  columnType: (type: AttributeType) => (type.startsWith('set<') ? 'TEXT' : TYPES[type]!),
  // undefined_table, undefined_column
  isStaleSchema: (err) => ['42P01', '42703'].includes((err as { code?: string } | null)?.code ?? ''),
};

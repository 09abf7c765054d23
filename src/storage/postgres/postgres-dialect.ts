import type { Dialect } from '../sql/driver.js';
import type { AttributeType } from '../types.js';
import { standardSpellings } from '../sql/standard-dialect.js';

/** Text sorts bytewise (COLLATE "C") so key order and paging match SQLite's. */
const TYPES: Record<string, string> = {
  blob: 'BYTEA', string: 'TEXT COLLATE "C"', int: 'INTEGER', long: 'BIGINT', varint: 'BIGINT', decimal: 'NUMERIC', float: 'DOUBLE PRECISION',
  double: 'DOUBLE PRECISION', boolean: 'BOOLEAN', timeuuid: 'TEXT COLLATE "C"', uuid: 'TEXT COLLATE "C"', timestamp: 'BIGINT', json: 'TEXT',
};

/** Network failures, the client's own connection states, and the server's classes for "not now". */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED']);
// 08: connection exception, 53: insufficient resources, 57P0x: shutting down or starting, 40001/40P01: serialization failure, deadlock.
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3]|40001$|40P01$)/;

function isUnavailable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code));
}

const columnType = (type: AttributeType) => (type.startsWith('set<') ? 'TEXT' : TYPES[type]!);

/** The partition's transaction-level advisory lock, taken by a statement that joins it (its key is the parameter). */
const PARTITION_LOCK = '(SELECT pg_advisory_xact_lock(hashtextextended(?, 0))) AS partition_lock';

export const postgresDialect: Dialect = {
  name: 'postgres',
  nativeBoolean: true,
  nativeDecimal: true,
  int64: 'BIGINT',
  shortKeyText: 'TEXT',
  ...standardSpellings,
  columnType,
  keyColumnTypes: (types) => types.map(columnType),
  // Typed: a SELECT's parameters are not typed by the columns they go to, as VALUES' are.
  lockedRow: (types) => `SELECT ${types.map((t) => `?::${t}`).join(', ')} FROM ${PARTITION_LOCK}`,
  partitionLockSource: PARTITION_LOCK,
  isUnavailable,
  // undefined_table, undefined_column
  isStaleSchema: (err) => ['42P01', '42703'].includes((err as { code?: string } | null)?.code ?? ''),
};

import type { Dialect } from '../sql/driver.js';
import { standardSpellings } from '../sql/standard-dialect.js';
import { q } from '../sql/names.js';
import type { AttributeType } from '../types.js';

/**
 * Text compares by code point with no padding: under MariaDB's default collations `Foo` and `foo`
 * (or `a` and `a `) would be one key. Code point order is UTF-8's byte order, SQLite's and
 * PostgreSQL's (COLLATE "C") order, so keys sort and page the same on every engine.
 */
export const MARIADB_COLLATION = 'utf8mb4_nopad_bin';
/** MySQL 8 names the same comparison otherwise. */
export const MYSQL_COLLATION = 'utf8mb4_0900_bin';

/** InnoDB's limit on an index key, in bytes (DYNAMIC rows, the default since MariaDB 10.2 and MySQL 5.7). */
const INDEX_KEY_BYTES = 3072;
/** A secondary index covers long text and blobs by their first characters (bytes): rows are checked in full anyway. */
const INDEX_PREFIX = 255;
const UUID_TEXT = 'VARCHAR(36) CHARACTER SET ascii COLLATE ascii_bin';

const FIXED: Record<string, { type: string; bytes: number }> = {
  int: { type: 'INT', bytes: 4 }, long: { type: 'BIGINT', bytes: 8 }, varint: { type: 'BIGINT', bytes: 8 }, float: { type: 'DOUBLE', bytes: 8 },
  double: { type: 'DOUBLE', bytes: 8 }, boolean: { type: 'TINYINT', bytes: 1 }, timestamp: { type: 'BIGINT', bytes: 8 },
  timeuuid: { type: UUID_TEXT, bytes: 36 }, uuid: { type: UUID_TEXT, bytes: 36 },
};

/** Values of any length: the LONG types hold up to 4 GB (MEDIUM's 16 MB could be a large page's HTML). */
function columnType(type: AttributeType): string {
  if (type.startsWith('set<') || type === 'string' || type === 'json' || type === 'decimal') return 'LONGTEXT';
  if (type === 'blob') return 'LONGBLOB';
  return FIXED[type]!.type;
}

/**
 * A primary key's columns must fit one index key: fixed-size types take their size, and text and
 * blobs share what is left (strings at four bytes a character). A value longer than its column is
 * refused by the server (strict mode), answered as a 400.
 */
function keyColumnTypes(types: AttributeType[]): string[] {
  const variable = types.filter((t) => !FIXED[t]).length;
  const left = INDEX_KEY_BYTES - types.reduce((sum, t) => sum + (FIXED[t]?.bytes ?? 0), 0);
  const share = variable > 0 ? Math.floor(left / variable) : 0;
  return types.map((t) => {
    if (FIXED[t]) return FIXED[t].type;
    if (t === 'blob') return `VARBINARY(${share})`;
    return `VARCHAR(${Math.floor(share / 4)})`;
  });
}

// Server errors by number: lock wait timeout, deadlock, too many connections, shutting down,
// server gone away or lost, read-only, and the client's own network failures.
const UNAVAILABLE_ERRNOS = new Set([1205, 1213, 1040, 1053, 2002, 2003, 2006, 2013, 1927, 1290, 1836, 4031]);
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT', 'POOL_CLOSED', 'POOL_ENQUEUELIMIT', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN', 'LOCK_TIMEOUT',
]);

function isUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown; fatal?: unknown } | null;
  if (typeof e?.errno === 'number' && UNAVAILABLE_ERRNOS.has(e.errno)) return true;
  return (typeof e?.code === 'string' && UNAVAILABLE_CODES.has(e.code)) || e?.fatal === true;
}

/** MariaDB and MySQL 8, with ANSI_QUOTES set on every connection (identifiers in double quotes, as elsewhere). */
export function mariadbDialect(collation: string): Dialect {
  return {
    ...standardSpellings,
    name: 'mariadb',
    nativeBoolean: false,
    // Decimals are stored as order-preserving text (see decimal.ts): DECIMAL holds 65 digits at most.
    nativeDecimal: false,
    int64: 'BIGINT',
    shortKeyText: 'VARCHAR(255)',
    tableOptions: ` ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=utf8mb4 COLLATE=${collation}`,
    partialIndexes: false,
    // Measured: a page of 1,000 partitions of a 100,000-row table took 15 s by the recursion (each
    // step's correlated seek planned as an index scan from the start), 4 ms by DISTINCT.
    recursiveSkipScan: false,
    // Measured: a render found by its tid walked its page's partition along the primary key (228 µs
    // at the newest of 3,000 renders, 1,365 µs at the oldest) instead of seeking the tid's index.
    indexHint: (index) => ` FORCE INDEX (${q(index)})`,
    columnType,
    keyColumnTypes,
    indexColumn: (name, type) => (columnType(type).startsWith('LONG') ? `${q(name)}(${INDEX_PREFIX})` : q(name)),
    dropIndex: (index, table) => `DROP INDEX IF EXISTS ${q(index)} ON ${q(table)}`,
    // Each column keeps its value unless the condition holds over the row as it is: the
    // assignments run in order and later ones see earlier ones' values, so the caller names
    // last the columns the condition reads.
    insertsWithoutLock: true,
    countsChangedRows: true,
    lockingRead: ' FOR UPDATE',
    upsertWhere: (_table, _keys, sets, condition) => ({
      sql: `ON DUPLICATE KEY UPDATE ${sets.map(([c, v]) => `${q(c)} = IF(${condition}, ${v}, ${q(c)})`).join(', ')}`,
      conditionUses: sets.length,
    }),
    onConflictUpdate: () => 'ON DUPLICATE KEY UPDATE',
    inserted: (column) => `VALUES(${q(column)})`,
    insertIfAbsent: (table, columns) => `INSERT IGNORE INTO ${q(table)} (${columns.map(q).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    isUnavailable,
    // No such table, unknown column, or no such key (an index a read names).
    isStaleSchema: (err) => [1146, 1054, 1176].includes((err as { errno?: number } | null)?.errno ?? 0),
    // Data too long (a key longer than its column), out of range.
    isValueRefused: (err) => [1406, 1264].includes((err as { errno?: number } | null)?.errno ?? 0),
  };
}

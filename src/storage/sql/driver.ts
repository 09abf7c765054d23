import type { AttributeType } from '../types.js';
import type { ValueCodec } from '../values.js';

/** Engine-specific SQL details; everything else about SQL is shared. */
export interface Dialect extends ValueCodec {
  readonly name: 'sqlite' | 'postgres' | 'mariadb';
  /** A value column's type. */
  columnType(type: AttributeType): string;
  /**
   * The types of a primary key's columns, given in order: an engine whose index keys have a size
   * limit (MariaDB) shares it out among them; elsewhere each is its value type.
   */
  keyColumnTypes(types: AttributeType[]): string[];
  /** Type of the `_exp` column (milliseconds since the epoch). */
  readonly int64: string;
  /** Text of at most 255 characters that can be a key (the definitions table's domain and name). */
  readonly shortKeyText: string;
  /** Added after a CREATE TABLE's column list (engine, character set, collation). */
  readonly tableOptions: string;
  /** Whether an index may cover only the rows a WHERE clause picks. */
  readonly partialIndexes: boolean;
  /**
   * Whether a listing of partitions is best read as a recursive skip scan (one index seek per
   * partition): SQLite and PostgreSQL. MariaDB plans each seek of that recursion as a scan from the
   * start of the index, but stops its plain DISTINCT at the page's end (see dml.ts).
   */
  readonly recursiveSkipScan: boolean;
  /**
   * What follows a read's table to make it read a secondary index (its physical name), for an
   * engine whose planner may not choose it: SQLite, without statistics, walked a page's whole
   * history in its primary key's order rather than seek a render's tid in the index made for it
   * (9 µs at the newest of 2,500 renders, 103 µs at the oldest; by the index 10 to 19 µs).
   */
  readonly indexHint?: (index: string) => string;
  /** A column as an index lists it (engines that index long text by a prefix say how long). */
  indexColumn(name: string, type: AttributeType): string;
  dropIndex(index: string, table: string): string;
  /** What follows an INSERT's VALUES to update the row whose key it collides with: then `SET a = ...` assignments. */
  onConflictUpdate(keys: string[]): string;
  /** In those assignments, the value the INSERT tried to write to `column`. */
  inserted(column: string): string;
  /** An INSERT of one row that does nothing if its key is taken. */
  insertIfAbsent(table: string, columns: string[], keys: string[]): string;
  /**
   * For an engine that takes a partition's lock within a statement (PostgreSQL's transaction-level
   * advisory lock): an INSERT's row source, its values cast to `types`, that takes the lock of the
   * key given as its last parameter first.
   */
  lockedRow?(types: string[]): string;
  /**
   * The same lock for an UPDATE: a row source joined in its FROM that takes the lock of the key
   * given as its parameter before the row is written.
   */
  readonly partitionLockSource?: string;
  /**
   * Whether one INSERT needs no partition lock to be a conditional write of its own, because the
   * conditional writes that read their row first lock it as they read it (`lockingRead`) and
   * write a row they found absent as such an INSERT too (MariaDB's row locks do the serialising).
   */
  readonly insertsWithoutLock?: boolean;
  /** Whether a statement's affected rows are the rows it changed, not those it matched (MariaDB without FOUND_ROWS). */
  readonly countsChangedRows?: boolean;
  /** What makes a read of a row inside a transaction lock it until the transaction ends. */
  readonly lockingRead?: string;
  /**
   * The assignments of an upsert that updates a row only when `condition` (over the row as it is)
   * holds: `SET ... WHERE condition` where the engine has it, else each column kept unless it does.
   */
  upsertWhere(table: string, keys: string[], sets: [column: string, value: string][], condition: string): { sql: string; conditionUses: number };
  /** Whether an error says a table or column a statement named is not there (a definition changed elsewhere). */
  isStaleSchema(err: unknown): boolean;
  /** Whether an error says the engine cannot answer now (unreachable, busy, shutting down): worth retrying later. */
  isUnavailable(err: unknown): boolean;
  /** Whether an error says a value does not fit its column (an engine that bounds key lengths): the client's input. */
  isValueRefused?(err: unknown): boolean;
}

export type SqlRow = Record<string, unknown>;

export interface SqlExecutor {
  /** Runs a statement with `?` placeholders and returns its rows. */
  all(sql: string, params: readonly unknown[]): Promise<SqlRow[]>;
  /** Runs a query that finds one row at most (a point lookup). */
  one(sql: string, params: readonly unknown[]): Promise<SqlRow | undefined>;
  /** Runs a statement and returns the number of rows it changed. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
}

/** Reads answered before returning: an embedded engine (SQLite) needs no promise per statement. */
export interface ImmediateReader {
  allSync(sql: string, params: readonly unknown[]): SqlRow[];
  oneSync(sql: string, params: readonly unknown[]): SqlRow | undefined;
}

export interface SqlDriver extends SqlExecutor {
  readonly dialect: Dialect;
  /** The same reads as `all` and `one`, answered at once, on engines that can (left out elsewhere). */
  readonly immediate?: ImmediateReader;
  /**
   * Runs `fn` in one transaction. Transactions given the same `lockKey` (a partition) are
   * serialised, which is what makes conditional writes atomic per partition.
   */
  transaction<T>(lockKey: string | undefined, fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * One statement as a transaction of its own (atomic by itself), serialised with this driver's
   * transactions but in none of them; its affected rows. Left out where `run` already is that.
   */
  runAlone?(sql: string, params: readonly unknown[]): Promise<number>;
  /**
   * A number that changes whenever anything is committed to the database, by this process or
   * another, and costs next to nothing to ask; engines that have none leave it out.
   */
  dataVersion?(): number;
  close(): Promise<void>;
}

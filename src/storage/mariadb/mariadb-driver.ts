import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import type { Dialect, SqlDriver, SqlExecutor, SqlRow } from '../sql/driver.js';
import { mariadbDialect, MARIADB_COLLATION, MYSQL_COLLATION } from './mariadb-dialect.js';

type Queryable = Pick<mysql.PoolConnection, 'execute' | 'query'>;

/** How long a transaction waits for its partition's lock before the write is answered 503. */
const LOCK_WAIT_SECONDS = 10;
/** A transaction the server chose as a deadlock's victim is run again, up to this many times. */
const DEADLOCK_ATTEMPTS = 4;
const DEADLOCK = 1213;

/**
 * Per connection: identifiers in double quotes as in the shared SQL, strict mode (a value that
 * does not fit is refused, not cut), and each statement seeing what was committed before it (a
 * conditional write reads under its partition's lock, never from an older snapshot).
 */
const SESSION_SETUP = [
  "SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO'",
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
];

/** Parameters as the driver takes them: 64-bit integers as decimal text (exact), everything else as is. */
function params(values: readonly unknown[]): mysql.ExecuteValues[] {
  return values.map((v) => (typeof v === 'bigint' ? v.toString() : v)) as mysql.ExecuteValues[];
}

function executor(conn: Queryable): SqlExecutor {
  return {
    async all(sql, values) {
      const [rows] = await conn.execute(sql, params(values));
      return rows as SqlRow[];
    },
    async one(sql, values) {
      const [rows] = await conn.execute(sql, params(values));
      return (rows as SqlRow[])[0];
    },
    async run(sql, values) {
      const [result] = await conn.execute(sql, params(values));
      return (result as mysql.ResultSetHeader).affectedRows ?? 0;
    },
  };
}

/** The lock a partition's transactions share: named by a hash (names are at most 64 characters), per database. */
const lockName = (database: string, key: string) => `ws:${createHash('sha1').update(`${database}\u0000${key}`).digest('base64url')}`;

/**
 * MariaDB (or MySQL 8) through mysql2's pool. Conditional writes are made atomic per partition by
 * a named lock (GET_LOCK) held around their transaction, across every process sharing the database.
 */
export class MariadbDriver implements SqlDriver {
  private constructor(
    readonly dialect: Dialect,
    private readonly pool: mysql.Pool,
    private readonly database: string,
  ) {
    this.direct = executor(pool);
  }

  static async open(url: string, poolSize = 10): Promise<MariadbDriver> {
    const pool = mysql.createPool({
      uri: url,
      connectionLimit: poolSize,
      // BIGINT as exact text; values.ts converts by attribute type.
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      charset: 'utf8mb4',
      enableKeepAlive: true,
      connectTimeout: 10_000,
      // No stack captured at each call for its errors' traces: at a deep async stack that cost a
      // twentieth of a partition read; failures are told apart by their codes.
      trace: false,
      // Affected rows as the server counts changes: an upsert that leaves a row as it was is 0,
      // not 1, which is how a conditional insert learns that a live row was there (dml.ts).
      flags: ['-FOUND_ROWS'],
    });
    // Every new connection is set up before any statement of ours runs on it (commands run in order).
    pool.on('connection', (conn) => {
      for (const sql of SESSION_SETUP) conn.query(sql);
    });
    try {
      const [rows] = await pool.query('SELECT VERSION() AS v, DATABASE() AS db');
      const { v, db } = (rows as { v: string; db: string | null }[])[0]!;
      if (!db) throw new Error('storage.url must name a database (mysql://user:password@host/database)');
      return new MariadbDriver(mariadbDialect(/mariadb/i.test(v) ? MARIADB_COLLATION : MYSQL_COLLATION), pool, db);
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
  }

  /** Statements outside a transaction, straight on the pool. */
  private readonly direct: SqlExecutor;

  all(sql: string, values: readonly unknown[]): Promise<SqlRow[]> {
    return this.direct.all(sql, values);
  }

  one(sql: string, values: readonly unknown[]): Promise<SqlRow | undefined> {
    return this.direct.one(sql, values);
  }

  run(sql: string, values: readonly unknown[]): Promise<number> {
    return this.direct.run(sql, values);
  }

  async transaction<T>(lockKey: string | undefined, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(lockKey, fn);
      } catch (err) {
        // A deadlock's victim was rolled back whole: running it again is what the server asks.
        if ((err as { errno?: number }).errno !== DEADLOCK || attempt >= DEADLOCK_ATTEMPTS) throw err;
        await sleep(5 * attempt);
      }
    }
  }

  private async once<T>(lockKey: string | undefined, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const conn = await this.pool.getConnection();
    const lock = lockKey === undefined ? undefined : lockName(this.database, lockKey);
    let broken = false;
    try {
      if (lock !== undefined) {
        const [rows] = await conn.query('SELECT GET_LOCK(?, ?) AS got', [lock, LOCK_WAIT_SECONDS]);
        if ((rows as { got: number | null }[])[0]?.got !== 1) {
          throw Object.assign(new Error(`waited ${LOCK_WAIT_SECONDS} s for a partition's lock`), { code: 'LOCK_TIMEOUT' });
        }
      }
      await conn.query('START TRANSACTION');
      try {
        const value = await fn(executor(conn));
        await conn.query('COMMIT');
        return value;
      } catch (err) {
        await conn.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      }
    } catch (err) {
      if ((err as { fatal?: boolean }).fatal) broken = true;
      throw err;
    } finally {
      if (lock !== undefined && !broken) await conn.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => (broken = true));
      // A connection in an unknown state (its lock perhaps still held) is closed, which frees its locks.
      if (broken) conn.destroy();
      else conn.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

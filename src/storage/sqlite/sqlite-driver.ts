import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { ImmediateReader, SqlDriver, SqlExecutor, SqlRow } from '../sql/driver.js';
import { sqliteDialect } from './sqlite-dialect.js';

type Db = Database.Database;
type Stmt = Database.Statement<unknown[], SqlRow>;

/** Prepared statements are cached per connection: preparing costs more than a point read. */
class Connection implements SqlExecutor, ImmediateReader {
  private readonly statements = new Map<string, Stmt>();
  constructor(readonly db: Db) {}

  prepare(sql: string): Stmt {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], SqlRow>(sql);
      // 64-bit integers come back exact (as BigInt); values.ts turns them into what reads return.
      if (stmt.reader) stmt.safeIntegers(true);
      if (this.statements.size > 2000) this.statements.clear();
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  allSync(sql: string, params: readonly unknown[]): SqlRow[] {
    const stmt = this.prepare(sql);
    return stmt.reader ? stmt.all(...params) : (stmt.run(...params), []);
  }

  oneSync(sql: string, params: readonly unknown[]): SqlRow | undefined {
    return this.prepare(sql).get(...params);
  }

  runSync(sql: string, params: readonly unknown[]): number {
    return this.prepare(sql).run(...params).changes;
  }

  async all(sql: string, params: readonly unknown[]): Promise<SqlRow[]> {
    return this.allSync(sql, params);
  }

  async one(sql: string, params: readonly unknown[]): Promise<SqlRow | undefined> {
    return this.oneSync(sql, params);
  }

  async run(sql: string, params: readonly unknown[]): Promise<number> {
    return this.runSync(sql, params);
  }
}

/** `cacheKb`: the connection's page cache (pages of the write-ahead log are read into it; the file is mapped). */
function open(file: string, cacheKb: number): Db {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  // Reads of large values cost a syscall per page without these: map the file, cache more pages.
  db.pragma('mmap_size = 268435456');
  db.pragma(`cache_size = -${cacheKb}`);
  return db;
}

/**
 * The reader's cache serves reads of recently written values; the writer needs little beyond a
 * transaction's own pages. Measured: with 16 MB the writer's cache only added to memory (sustained
 * small writes grew the process by 15 MB more), with no change in 50 KB conditional writes per second.
 */
export const READER_CACHE_KB = 16384;
export const WRITER_CACHE_KB = 2048;

/**
 * SQLite through better-sqlite3 (WAL). Reads use their own connection, so they never see a write
 * transaction that is still open; writes are serialised on one connection (SQLite has one writer
 * anyway), and BEGIN IMMEDIATE keeps them atomic across processes too.
 */
export class SqliteDriver implements SqlDriver {
  readonly dialect = sqliteDialect;
  private readonly reader: Connection;
  private readonly writer: Connection;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly version: Database.Statement<[], number>;
  readonly immediate: ImmediateReader;

  constructor(file: string) {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.writer = new Connection(open(file, WRITER_CACHE_KB));
    this.reader = new Connection(open(file, READER_CACHE_KB));
    this.version = this.reader.db.prepare<[], number>('PRAGMA data_version').pluck();
    this.immediate = this.reader;
  }

  /** The data version asked in the current run of JavaScript (see `dataVersion`), if any. */
  private versionThisRun: number | undefined;
  private readonly forgetVersion = () => {
    this.versionThisRun = undefined;
  };

  /**
   * The reader's data version: it moves on every commit made by any other connection, which
   * includes this driver's writer and every other process on the file (about 3.5 µs to ask).
   *
   * Asked once per run of JavaScript between two inputs (until the microtasks queued in it have
   * run): no request arrives during a run, so every request answered in it came before the version
   * was read, and a commit another process makes meanwhile is concurrent with all of them. This
   * process's own commits forget it at once (`transaction`): a read after a write sees the write.
   * Answers sent again in one batch (http/write-batch.ts) thus cost one question, not one each.
   */
  dataVersion(): number {
    if (this.versionThisRun === undefined) {
      this.versionThisRun = this.version.get()!;
      queueMicrotask(this.forgetVersion);
    }
    return this.versionThisRun;
  }

  all(sql: string, params: readonly unknown[]): Promise<SqlRow[]> {
    return this.reader.all(sql, params);
  }

  one(sql: string, params: readonly unknown[]): Promise<SqlRow | undefined> {
    return this.reader.one(sql, params);
  }

  /** Autocommit statements outside transactions go through the write queue too. */
  run(sql: string, params: readonly unknown[]): Promise<number> {
    return this.transaction(undefined, (tx) => tx.run(sql, params));
  }

  /**
   * One statement in SQLite's autocommit (atomic: it takes the write lock, waiting as BEGIN
   * IMMEDIATE does, and commits), in the write queue so that it never joins a transaction under way.
   */
  runAlone(sql: string, params: readonly unknown[]): Promise<number> {
    const run = () => {
      try {
        return this.writer.runSync(sql, params);
      } finally {
        this.versionThisRun = undefined;
      }
    };
    // Nothing in the queue: run now, without waiting a turn of the queue's promise for nothing.
    if (this.queued === 0) {
      try {
        return Promise.resolve(run());
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.enqueue(run);
  }

  /** Writes queued or under way (the queue's promise tells neither). */
  private queued = 0;

  /** `work` after every write queued before it; counted as queued until it has settled. */
  private enqueue<T>(work: () => T | Promise<T>): Promise<T> {
    this.queued++;
    const settled = () => {
      this.queued--;
    };
    const result = this.queue.then(() => {
      let value: T | Promise<T>;
      try {
        value = work();
      } catch (err) {
        settled();
        throw err;
      }
      if (value instanceof Promise) return value.finally(settled);
      settled();
      return value;
    });
    this.queue = result.catch(() => undefined);
    return result;
  }

  transaction<T>(_lockKey: string | undefined, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.enqueue(async () => {
      this.writer.runSync('BEGIN IMMEDIATE', []);
      try {
        const value = await fn(this.writer);
        this.writer.runSync('COMMIT', []);
        return value;
      } catch (err) {
        if (this.writer.db.inTransaction) this.writer.runSync('ROLLBACK', []);
        throw err;
      } finally {
        this.versionThisRun = undefined;
      }
    });
  }

  async close(): Promise<void> {
    await this.queue;
    this.reader.db.close();
    this.writer.db.close();
  }
}

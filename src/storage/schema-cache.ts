import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from './errors.js';

/** How long a process may go on using table definitions without asking whether they changed. */
export const SCHEMA_RECHECK_MS = 1000;

export interface SchemaCacheOptions {
  /** The shared schema epoch: whatever it returns changes on every create, migrate or drop, by any process. */
  readEpoch: () => Promise<string>;
  /**
   * For engines that can tell cheaply whether anything at all was committed (SQLite's data version):
   * the epoch is then read only after a commit, and a change made elsewhere is seen at once.
   * Elsewhere the epoch is read at most once per `recheckMs`.
   */
  dataVersion?: () => number;
  recheckMs?: number;
}

/**
 * The table definitions one process keeps, and how it learns that another process changed one:
 * a table dropped, recreated or migrated by another worker or service instance would otherwise go
 * on being read and written with the old columns (an error, or worse, a row read without the
 * attributes added since).
 */
export class SchemaCache<T> {
  private readonly entries = new Map<string, T>();
  private epoch: string | undefined;
  /** Bumped whenever entries are dropped: a definition loaded before then is not kept. */
  private generation = 0;
  private checkedVersion: number | undefined;
  private checkedAt = -Infinity;
  private checking: Promise<void> | undefined;

  constructor(private readonly options: SchemaCacheOptions) {}

  /**
   * The definition under `key`, loaded with `load` when not kept (or no longer current).
   * `confirmedLater`: the caller checks the epoch itself, in the snapshot of its work (a write's
   * transaction, a read's own statement: see `confirm`), so none is asked here.
   */
  async get(key: string, load: () => Promise<T>, options: { confirmedLater?: boolean } = {}): Promise<T> {
    // Awaited only when a check is due: most reads find the definitions checked moments ago.
    if (!options.confirmedLater && this.due()) await this.fresh();
    const kept = this.entries.get(key);
    if (kept !== undefined) return kept;
    const generation = this.generation;
    const value = await load();
    if (generation === this.generation) this.entries.set(key, value);
    return value;
  }

  /** The epoch the kept definitions were loaded under, if one is known. */
  currentEpoch(): string | undefined {
    return this.epoch;
  }

  /** The definition kept under `key`, if any, for a caller that confirms the epoch itself (as `confirmedLater`). */
  peek(key: string): T | undefined {
    return this.entries.get(key);
  }

  /** A definition this process has just written. */
  set(key: string, value: T): void {
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets every definition, and asks for the epoch again before the next use. */
  invalidate(): void {
    this.entries.clear();
    this.generation++;
    this.checkedVersion = undefined;
    this.checkedAt = -Infinity;
  }

  /**
   * Checks the epoch read inside a write transaction (where no other process can move it) against
   * the one the definitions were loaded under. When it moved (or was never seen), forgets them and
   * throws, for `retryStale` to run the write again with definitions read anew.
   */
  confirm(epoch: string): void {
    if (epoch === this.epoch) return;
    this.invalidate();
    this.epoch = epoch;
    throw definitionsChanged();
  }

  /** Whether the epoch is to be asked before a definition kept is used (`get` does so). */
  due(): boolean {
    const ask = this.options.dataVersion;
    if (ask) return ask() !== this.checkedVersion;
    return Date.now() - this.checkedAt >= (this.options.recheckMs ?? SCHEMA_RECHECK_MS);
  }

  private async fresh(): Promise<void> {
    const ask = this.options.dataVersion;
    if (ask) {
      const version = ask();
      // Reads of such engines are quick and exact: no sharing of a check begun before a commit.
      if (version !== this.checkedVersion) await this.check(version);
      return;
    }
    if (Date.now() - this.checkedAt < (this.options.recheckMs ?? SCHEMA_RECHECK_MS)) return;
    this.checking ??= this.check(undefined).finally(() => (this.checking = undefined));
    await this.checking;
  }

  private async check(version: number | undefined): Promise<void> {
    const at = Date.now();
    const epoch = await this.options.readEpoch();
    if (epoch !== this.epoch) {
      if (this.epoch !== undefined) {
        this.entries.clear();
        this.generation++;
      }
      this.epoch = epoch;
    }
    this.checkedVersion = version;
    this.checkedAt = at;
  }

  /**
   * Runs `operation`; if the engine says a table or column it named is not there, or `confirm`
   * found the definitions changed (elsewhere, since the last check), forgets every definition and
   * runs it again: at most twice, since one change elsewhere can show both ways in a row (a read
   * meets a dropped column, then, planned anew, confirms under an epoch it had not seen yet).
   */
  async retryStale<R>(operation: () => Promise<R>, isStale: (err: unknown) => boolean): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (err) {
        // Definitions that keep moving (a process creating or migrating tables one after another,
        // as at start-up) are waited out a little longer, with a pause between tries; the
        // operation was undone each time, so trying it again is safe.
        const changing = isDefinitionsChanged(err);
        if (attempt > (changing ? MAX_CHANGING_RETRIES : MAX_RETRIES)) throw err;
        if (changing) {
          this.invalidate();
          if (attempt > MAX_RETRIES) await sleep(20 * attempt);
        } else if (isStale(err)) this.invalidate();
        // Refused by definitions that may be out of date (a column another process has just added
        // or retyped): asked again now, not after `recheckMs`, so the client gets no false 400.
        else if (!(isRefused(err) && (await this.changedElsewhere()))) throw err;
      }
    }
  }

  /**
   * Reads the epoch now: whether another process changed a definition since it was last read.
   * Refused operations arriving together share one read (a burst of bad writes costs one).
   */
  private async changedElsewhere(): Promise<boolean> {
    const before = this.epoch;
    if (this.options.dataVersion) {
      // Exact and free: the epoch is read only if anything was committed since the last check.
      await this.fresh();
    } else {
      this.checking ??= this.check(undefined).finally(() => (this.checking = undefined));
      await this.checking;
    }
    return this.epoch !== before;
  }
}

const isRefused = (err: unknown) => err instanceof StorageError && err.kind === 'invalid';

const MAX_RETRIES = 2;
/** Tries for an operation whose definitions changed under it again and again. */
const MAX_CHANGING_RETRIES = 6;

/** Definitions that changed under an operation again and again: rare enough to ask the client to retry. */
const definitionsChanged = () => new StorageError('unavailable', 'definitions-changed', 'Table definitions changed during the operation; retry it.');
const isDefinitionsChanged = (err: unknown) => err instanceof StorageError && err.code === 'definitions-changed';

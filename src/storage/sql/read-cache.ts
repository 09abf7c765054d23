import { LRUCache } from 'lru-cache';
import { SecondSight } from '../../util/bounded-map.js';
import { markValid } from '../answer-validity.js';
import type { QueryResult } from '../types.js';

/** What one cached answer stays true for: no commit since `version`, and before `until` (ms) if set. */
interface Entry {
  result: QueryResult;
  version: number;
  until: number | undefined;
  /** Admitted by the doorkeeper of large answers (see `LARGE_SEEN`). */
  large: boolean;
  /** The rows' rough bytes (`approxBytes`), measured once when the answer was read. */
  bytes: number;
}

/** What an answer holds, measured once as it is read: its rough bytes, and whether a row carries a blob. */
export interface AnswerSize {
  bytes: number;
  large: boolean;
}

/**
 * What an entry holds besides its key and rows: the cache's own bookkeeping, the entry and the
 * answer objects. Measured: a small answer (an empty point read) took about 500 bytes of heap where
 * its key and rows counted 330, so 16 MB of such answers held 24 MB.
 */
const ENTRY_OVERHEAD_BYTES = 200;

/** Entries bigger than this (query and answer) are not kept: they would push many small ones out. */
const MAX_ENTRY_BYTES = 1024 * 1024;
/**
 * Answers that carry a blob (a render's four parts, a bucket's object) or are larger than this are
 * "large": remembered by a doorkeeper of their own (see `LARGE_SEEN`). Kept at once, a scan over
 * more renders than the render cache holds put a second copy of each here, which only pushed others
 * out and doubled what the garbage collector walked (reads by revision over 5,000 renders ran 12%
 * slower); never kept, a hot bucket value was read and decompressed anew for every request (a
 * third of the throughput).
 */
const LARGE_ANSWER_BYTES = 16 * 1024;

/**
 * Queries of large answers remembered once read: a second read among the last this many large ones
 * keeps the answer (the doorkeeper of TinyLFU). A scan's reads come back further apart than this.
 */
const LARGE_SEEN = 1024;
/**
 * The same for small answers (a page's state, a revision's row), over more queries. A query read
 * once is not kept either: under reads spread wider than any cache (old revisions, `?ts=`) each
 * answer kept at once was measured, frozen and entered for nothing, and lived long enough to be
 * promoted and collected in the old generation: a tenth of such a read's time. A key read again
 * among the last 16,384 is kept, as is one that was kept until a commit ended it (`get`).
 */
const SMALL_SEEN = 16 * 1024;

/** Rough bytes held by a value: blobs and strings by length, a little for every container. */
function approxBytes(value: unknown): number {
  if (value === null || value === undefined) return 8;
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (value instanceof Uint8Array) return 64 + value.byteLength;
  if (typeof value !== 'object') return 16;
  let bytes = 32;
  if (Array.isArray(value)) for (const v of value) bytes += approxBytes(v);
  else for (const k in value) bytes += 16 + 2 * k.length + approxBytes((value as Record<string, unknown>)[k]);
  return bytes;
}

/**
 * An answer's size in one walk of its rows, made once per read: the doorkeeper (`admits`) and the
 * cache's count of its memory (`set`) both take it.
 */
export function sizeOfAnswer(items: readonly Record<string, unknown>[]): AnswerSize {
  let bytes = 32;
  let blob = false;
  for (const row of items) {
    bytes += 32;
    for (const k in row) {
      const v = row[k];
      if (v instanceof Uint8Array) blob = true;
      bytes += 16 + 2 * k.length + approxBytes(v);
    }
  }
  return { bytes, large: blob || bytes > LARGE_ANSWER_BYTES };
}

/** Rows handed to every later reader of the same answer cannot be changed by one of them. */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

/**
 * Query answers kept while the database provably has not changed: the engine's data version
 * (SQLite's `PRAGMA data_version`, which moves on every commit by any connection or process) is
 * compared on every read, so a cached answer is exactly what the query would return now. Rows that
 * expire end an answer's life at the earliest expiry still ahead in the table.
 */
export class ReadCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly largeSeen = new SecondSight(LARGE_SEEN);
  private readonly smallSeen = new SecondSight(SMALL_SEEN);

  /** `maxBytes`: what the answers and the queries naming them may hold together, roughly. */
  constructor(maxBytes: number) {
    this.entries = new LRUCache<string, Entry>({ maxSize: maxBytes, maxEntrySize: Math.min(MAX_ENTRY_BYTES, maxBytes), sizeCalculation: (e, key) => ENTRY_OVERHEAD_BYTES + approxBytes(key) + e.bytes });
  }

  get(key: string, version: number, now: number): QueryResult | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.version === version && (entry.until === undefined || now < entry.until)) return entry.result;
    this.entries.delete(key);
    // Kept until now, so read often: the answer read next is kept at once.
    (entry.large ? this.largeSeen : this.smallSeen).note(key);
    return undefined;
  }

  /** Whether an answer is kept for `key` (valid or not: `get` tells). */
  holds(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Whether an answer read now for `key` could be kept: its query came once among recent ones (of
   * either size). When not, `admits` will refuse it, so nothing need be asked before the read to
   * keep it (the data version it would be kept under).
   */
  mayKeep(key: string): boolean {
    return this.smallSeen.wouldAdmit(key) || this.largeSeen.wouldAdmit(key);
  }

  /**
   * Whether an answer just read is to be kept (`set`): the second time its query comes among
   * recent ones of its size. Asked before anything is spent on keeping it.
   */
  admits(key: string, size: AnswerSize): boolean {
    return size.large ? this.largeSeen.admits(key) : this.smallSeen.admits(key);
  }

  /**
   * Keeps an answer read at `version`; `until` is when the first of the table's live rows expires.
   * `stillAt(version)` says whether the store is still at that version: a kept answer is marked
   * valid while it is (see answer-validity.ts).
   */
  set(key: string, result: QueryResult, version: number, until: number | undefined, stillAt: (version: number) => boolean, size = sizeOfAnswer(result.items)): void {
    // The answer as a whole too: frozen, its JSON is made once (see http/serialize.ts).
    deepFreeze(result.items);
    Object.freeze(result);
    markValid(result, { until: until ?? Infinity, valid: () => stillAt(version) });
    this.entries.set(key, { result, version, until, large: size.large, bytes: size.bytes });
  }
}

import { LRUCache } from 'lru-cache';
import type { QueryResult } from '../types.js';

/** What one cached answer stays true for: no commit since `version`, and before `until` (ms) if set. */
interface Entry {
  result: QueryResult;
  version: number;
  until: number | undefined;
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
 * Answers whose values are larger than this are read anew each time. Such values are blobs (a
 * render's four parts, a bucket's object): the layers that read them hot keep them already (the
 * render cache), and a second copy here doubled what the garbage collector had to walk when many
 * were read: a read by revision over 5,000 stored renders ran 12% faster without it.
 */
const MAX_ANSWER_BYTES = 16 * 1024;

/** Rough bytes held by a value: blobs and strings by length, a little for every container. */
function approxBytes(value: unknown): number {
  if (value === null || value === undefined) return 8;
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (value instanceof Uint8Array) return 64 + value.byteLength;
  if (typeof value !== 'object') return 16;
  let bytes = 32;
  if (Array.isArray(value)) for (const v of value) bytes += approxBytes(v);
  else for (const [k, v] of Object.entries(value)) bytes += 16 + 2 * k.length + approxBytes(v);
  return bytes;
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

  /** `maxBytes`: what the answers and the queries naming them may hold together, roughly. */
  constructor(maxBytes: number) {
    this.entries = new LRUCache<string, Entry>({ maxSize: maxBytes, maxEntrySize: Math.min(MAX_ENTRY_BYTES, maxBytes), sizeCalculation: (e, key) => ENTRY_OVERHEAD_BYTES + approxBytes(key) + approxBytes(e.result.items) });
  }

  get(key: string, version: number, now: number): QueryResult | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.version === version && (entry.until === undefined || now < entry.until)) return entry.result;
    this.entries.delete(key);
    return undefined;
  }

  /** Keeps an answer read at `version`; `until` is when the first of the table's live rows expires. */
  set(key: string, result: QueryResult, version: number, until: number | undefined): void {
    if (approxBytes(result.items) > MAX_ANSWER_BYTES) return;
    // The answer as a whole too: frozen, its JSON is made once (see http/serialize.ts).
    deepFreeze(result.items);
    Object.freeze(result);
    this.entries.set(key, { result, version, until });
  }
}

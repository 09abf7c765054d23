import { TableClient } from '../../table-access/table-client.js';
import type { RequestContext } from '../../router/types.js';

/**
 * Unfinished transactions, partitioned by the minute they were stored: the sweep reads these small
 * partitions, never the transactions table (which holds every finished one until its TTL, and on
 * Cassandra their tombstones). An entry is a pointer; the transaction's own row is the truth, so an
 * entry left behind (a crash between two writes, a tombstone resurrected after gc_grace) is only
 * read once more and removed.
 */
const PENDING_SCHEMA = {
  version: 1,
  attributes: { bucket: 'int', tid: 'timeuuid', owner: 'string', stored: 'timestamp' },
  index: [{ attribute: 'bucket', type: 'hash' }, { attribute: 'tid', type: 'range', order: 'asc' }],
  // Entries live seconds and are deleted; a resurrected one is harmless (see above): tombstones
  // need not be kept long. TTL'd, time-ordered data: compacted by time window.
  options: { gc_grace_seconds: 600, updates: { pattern: 'timeseries' } },
};

const BUCKET_MS = 60_000;
/**
 * How long after its minute a bucket may still gain entries: a put in flight, or a process whose
 * clock is behind. Older buckets only lose entries, so one found empty is not read again.
 */
const OPEN_MS = 2 * 60_000;

export const bucketOf = (ms: number) => Math.floor(ms / BUCKET_MS);

export interface PendingEntry {
  bucket: number;
  tid: string;
  owner: string;
  /** When the entry was written (ms). */
  stored: number;
}

export class PendingIndex {
  private readonly table: TableClient;
  /** Closed buckets found empty: they stay empty. */
  private readonly emptyClosed = new Set<number>();

  constructor(domain: string, private readonly lifetimeMs: number) {
    this.table = new TableClient(domain, 'transactions_pending');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, PENDING_SCHEMA);
  }

  /** Records `tid` as unfinished, in this minute's bucket (or the one given): that bucket is returned for `remove`. */
  async add(ctx: RequestContext, tid: string, owner: string, ttlSeconds: number, bucket?: number): Promise<number> {
    const now = Date.now();
    const into = bucket ?? bucketOf(now);
    await this.table.put(ctx, { attributes: { bucket: into, tid, owner, stored: now, _ttl: ttlSeconds } });
    return into;
  }

  async remove(ctx: RequestContext, bucket: number, tid: string): Promise<void> {
    await this.table.delete(ctx, { bucket, tid });
  }

  /**
   * Every entry stored within the lifetime, oldest bucket first. The buckets read are the open ones
   * and those that held entries when last read: after its first sweep a process reads a handful of
   * partitions however many transactions were ever stored.
   */
  async *entries(ctx: RequestContext): AsyncGenerator<PendingEntry> {
    const now = Date.now();
    const first = bucketOf(now - this.lifetimeMs - OPEN_MS);
    const last = bucketOf(now + OPEN_MS);
    for (const b of this.emptyClosed) if (b < first) this.emptyClosed.delete(b);
    for (let bucket = first; bucket <= last; bucket++) {
      if (this.emptyClosed.has(bucket)) continue;
      const closed = (bucket + 1) * BUCKET_MS + OPEN_MS < now;
      let seen = 0;
      let next: string | undefined;
      do {
        const page = await this.table.query(ctx, { attributes: { bucket }, limit: 500, next });
        next = page.next;
        for (const row of page.items) {
          seen++;
          yield { bucket, tid: row.tid as string, owner: row.owner as string, stored: Date.parse(row.stored as string) };
        }
      } while (next);
      if (closed && seen === 0) this.emptyClosed.add(bucket);
    }
  }
}

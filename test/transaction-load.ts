import { v1 as uuidv1 } from 'uuid';
import { bucketOf } from '../src/modules/transactions/pending-index.js';
import type { Transaction } from '../src/modules/transactions/executor.js';
import type { TableStorage } from '../src/storage/table-storage.js';

/** Runs `job(i)` for i < n, `concurrency` at a time. */
async function inParallel(n: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(n, concurrency) }, async () => {
    while (next < n) await job(next++);
  }));
}

/**
 * `n` finished transactions as a running service leaves them, spread over the last `spreadMs`:
 * the row done with its TTL, its pending entry gone (on Cassandra a tombstone, which a delete
 * alone leaves as the entry's write and delete would; on SQL nothing at all). With `rows` below
 * `n`, only that many (evenly spread) keep their row: every pending entry's tombstone, which a
 * sweep reads past, is still written, at a fraction of the rows' cost.
 */
export async function storeFinished(
  storage: TableStorage, domain: string, n: number, { spreadMs = 50 * 60_000, lifetimeS = 3600, concurrency = 64, rows = n } = {},
): Promise<void> {
  const now = Date.now();
  await inParallel(n, concurrency, async (i) => {
    const at = now - Math.floor((spreadMs * i) / n);
    const tid = uuidv1({ msecs: at, nsecs: i % 10_000 });
    const ttl = Math.max(1, lifetimeS - Math.floor((now - at) / 1000));
    const bucket = bucketOf(at);
    if ((i * rows) % n < rows) await storage.put(domain, {
      table: 'transactions',
      attributes: { tid, owner: 'finished', state: 'done', request: { method: 'PUT', uri: `/${domain}/x` }, result: { status: 201, headers: {}, then: [] }, created: at, bucket, _ttl: ttl },
    });
    if (storage.backend === 'cassandra') await storage.delete(domain, { table: 'transactions_pending', attributes: { bucket, tid } });
  });
}

/** `requests.length` unfinished transactions of a process that died `ageMs` ago (no heartbeat): their tids. */
export async function storeAbandoned(storage: TableStorage, domain: string, requests: Transaction[], ageMs = 30_000): Promise<string[]> {
  const at = Date.now() - ageMs;
  const owner = `dead-${uuidv1()}`;
  return Promise.all(requests.map(async (request, i) => {
    const tid = uuidv1({ msecs: at, nsecs: i });
    const bucket = bucketOf(at);
    await storage.put(domain, { table: 'transactions_pending', attributes: { bucket, tid, owner, stored: at, _ttl: 3000 } });
    await storage.put(domain, { table: 'transactions', attributes: { tid, owner, state: 'pending', request, created: at, bucket, _ttl: 3000 } });
    return tid;
  }));
}

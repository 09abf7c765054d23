import type { RequestContext } from '../router/types.js';
import { TableClient } from './table-client.js';

/** The names of a lease table's key and holder attributes (existing tables keep their own). */
export interface LeaseColumns {
  key: string;
  holder: string;
}


/**
 * Leases in one table: a row per leased thing whose holder attribute is set with a conditional
 * write (only while it is empty or its row has expired) and a TTL, renewed by its holder with a
 * write conditional on still holding it. Exactly one holder at a time, across processes sharing
 * the storage; a holder that dies loses the lease once its TTL runs out.
 */
export class LeaseTable {
  readonly table: TableClient;

  constructor(domain: string, table: string, private readonly columns: LeaseColumns = { key: 'key', holder: 'holder' }) {
    this.table = new TableClient(domain, table);
  }

  /** Takes `key` for `holder` if nobody holds it; false if someone does. `extra` is stored alongside. */
  async acquire(ctx: RequestContext, key: string, holder: string, ttlSeconds: number, extra: Record<string, unknown> = {}): Promise<boolean> {
    return this.write(ctx, { ...extra, [this.columns.key]: key, [this.columns.holder]: holder, _ttl: ttlSeconds }, null);
  }

  /** Extends `holder`'s lease on `key`; false if it was lost (expired and taken, or released). */
  async renew(ctx: RequestContext, key: string, holder: string, ttlSeconds: number): Promise<boolean> {
    return this.write(ctx, { [this.columns.key]: key, [this.columns.holder]: holder, _ttl: ttlSeconds }, holder);
  }

  /** Gives `key` up if `holder` still holds it (a later holder's lease stays). Idempotent. */
  async release(ctx: RequestContext, key: string, holder: string, clear: Record<string, unknown> = {}): Promise<void> {
    await this.write(ctx, { ...clear, [this.columns.key]: key, [this.columns.holder]: null, _ttl: 60 }, holder);
  }

  /** Who holds `key` now, if anyone. */
  async holder(ctx: RequestContext, key: string): Promise<string | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { [this.columns.key]: key } })).items;
    return (row?.[this.columns.holder] as string | null | undefined) ?? undefined;
  }

  private write(ctx: RequestContext, attributes: Record<string, unknown>, expected: string | null): Promise<boolean> {
    return this.table.putIf(ctx, { attributes, if: { [this.columns.holder]: { eq: expected } } });
  }
}

/**
 * Runs `renew` three times per lease until stopped; `lost` is called once if a renewal says the
 * lease is gone. A renewal that fails for another reason (storage briefly down) is retried at the
 * next tick: the lease is only lost once someone else could have taken it.
 */
export function keepRenewed(leaseMs: number, renew: () => Promise<boolean>, onError: (err: unknown) => void, lost: () => void = () => {}): () => void {
  let stopped = false;
  const timer = setInterval(() => {
    renew().then(
      (held) => {
        if (!held && !stopped) {
          stopped = true;
          clearInterval(timer);
          lost();
        }
      },
      onError,
    );
  }, Math.max(100, leaseMs / 3));
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

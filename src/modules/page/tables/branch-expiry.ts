import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';

/**
 * The branches by the day they expire (the design's "secondary range key to find old branches"):
 * the expiry sweep reads the few partitions of past days, never the branches. An entry is a
 * pointer with the lists the branch is in (for the sweep to clear), moved when an update moves
 * the branch's expiry to another day (written anew, the old one deleted); the branch is the truth.
 */
const EXPIRY_SCHEMA = {
  version: 1,
  attributes: { day: 'int', branch: 'timeuuid', expires: 'timestamp', lists: 'json' },
  index: [{ attribute: 'day', type: 'hash' }, { attribute: 'branch', type: 'range', order: 'asc' }],
  options: { gc_grace_seconds: 86400, updates: { pattern: 'timeseries' } },
};

const DAY_MS = 86_400_000;
export const dayOf = (ms: number) => Math.floor(ms / DAY_MS);
/** How long an entry outlives its day: a sweep that was down that long still finds it. */
export const KEPT_DAYS = 8;

export interface ExpiryEntry {
  day: number;
  branch: string;
  expires: number;
  lists: string[];
}

export class BranchExpiry {
  private readonly table: TableClient;

  constructor(domain: string) {
    this.table = new TableClient(domain, 'page_branch_expiry');
  }

  create(ctx: RequestContext): Promise<number> {
    return this.table.create(ctx, EXPIRY_SCHEMA);
  }

  /** The branch, in `lists`, expires at `expires`; `previous` is when it would have before (its entry goes). */
  async record(ctx: RequestContext, branch: string, expires: number, lists: string[], previous?: number): Promise<void> {
    const day = dayOf(expires);
    const ttl = Math.ceil((expires - Date.now()) / 1000) + KEPT_DAYS * 86400;
    await this.table.put(ctx, { attributes: { day, branch, expires, lists, _ttl: Math.max(1, ttl) } });
    if (previous !== undefined && dayOf(previous) !== day) await this.remove(ctx, dayOf(previous), branch);
  }

  remove(ctx: RequestContext, day: number, branch: string): Promise<void> {
    return this.table.delete(ctx, { day, branch });
  }

  /** The entries of one day, a page at a time. */
  async *day(ctx: RequestContext, day: number): AsyncGenerator<ExpiryEntry> {
    let next: string | undefined;
    do {
      const page = await this.table.query(ctx, { attributes: { day }, limit: 500, next });
      next = page.next;
      for (const row of page.items) yield { day, branch: row.branch as string, expires: Date.parse(row.expires as string), lists: (row.lists as string[] | null) ?? [] };
    } while (next);
  }
}

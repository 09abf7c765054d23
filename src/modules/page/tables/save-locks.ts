import { LeaseTable } from '../../../table-access/lease.js';
import type { RequestContext } from '../../../router/types.js';

/**
 * How long a save may hold its page: longer than the wiki's edit timeout, so a live save never
 * loses it; a process that dies mid-save frees the page once it expires.
 */
const SAVE_LOCK_SECONDS = 90;

const SAVE_LOCKS_SCHEMA = {
  version: 1,
  attributes: { title: 'string', lock: 'timeuuid', base: 'varint' },
  index: [{ attribute: 'title', type: 'hash' }],
};

/**
 * One save at a time per page, across processes: a row per page whose `lock` is taken with a
 * conditional write (only while it is empty or expired) and a TTL, so of N saves racing on one
 * base exactly one reaches the wiki.
 */
export class SaveLocks {
  private readonly leases: LeaseTable;

  constructor(domain: string) {
    this.leases = new LeaseTable(domain, 'page_save_locks', { key: 'title', holder: 'lock' });
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.leases.table.create(ctx, SAVE_LOCKS_SCHEMA);
  }

  /** Takes the page for the save `lock`, or false if another save holds it. */
  acquire(ctx: RequestContext, title: string, lock: string, base: number | null): Promise<boolean> {
    return this.leases.acquire(ctx, title, lock, SAVE_LOCK_SECONDS, { base });
  }

  /** Frees the page if `lock` still holds it (conditional, so a later save's lock stays). Idempotent. */
  release(ctx: RequestContext, title: string, lock: string): Promise<void> {
    return this.leases.release(ctx, title, lock, { base: null });
  }
}

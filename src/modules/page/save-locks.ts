import { HttpError } from '../../errors.js';
import { TableClient } from '../../internal/table-client.js';
import type { RequestContext } from '../../router/types.js';

/**
 * How long a save may hold its page: longer than the wiki's edit timeout, so a live save never
 * loses it; a process that dies mid-save frees the page once it expires.
 */
export const SAVE_LOCK_SECONDS = 90;

export const SAVE_LOCKS_SCHEMA = {
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
  readonly table: TableClient;

  constructor(domain: string) {
    this.table = new TableClient(domain, 'page_save_locks');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, SAVE_LOCKS_SCHEMA);
  }

  /** Takes the page for the save `lock`, or false if another save holds it. */
  async acquire(ctx: RequestContext, title: string, lock: string, base: number | null): Promise<boolean> {
    try {
      await this.table.put(ctx, { attributes: { title, lock, base, _ttl: SAVE_LOCK_SECONDS }, if: { lock: { eq: null } } });
      return true;
    } catch (e) {
      if (e instanceof HttpError && e.status === 412) return false;
      throw e;
    }
  }

  /** Frees the page if `lock` still holds it (conditional, so a later save's lock stays). Idempotent. */
  async release(ctx: RequestContext, title: string, lock: string): Promise<void> {
    try {
      await this.table.put(ctx, { attributes: { title, lock: null, base: null, _ttl: 60 }, if: { lock: { eq: lock } } });
    } catch (e) {
      if (!(e instanceof HttpError && e.status === 412)) throw e;
    }
  }
}

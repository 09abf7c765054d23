import { LeaseTable } from '../../../table-access/lease.js';
import { TableClient } from '../../../table-access/table-client.js';
import type { RequestContext } from '../../../router/types.js';

const PAGE_FOLLOWER_SCHEMA = {
  version: 1,
  attributes: { key: 'string', holder: 'string', cursor: 'json' },
  index: [{ attribute: 'key', type: 'hash' }],
};

const PAGE_DEPENDENTS_SCHEMA = {
  version: 1,
  attributes: { queue: 'string', title: 'string', cont: 'json', queued: 'timestamp' },
  index: [{ attribute: 'queue', type: 'hash' }, { attribute: 'title', type: 'range', order: 'asc' }],
};

/**
 * Where following stopped: the newest change time applied, and the changes of the last moments
 * already applied (the wiki may make a change visible after a later one, so following re-reads a
 * short window and skips what it has seen).
 */
export interface Cursor {
  ts: string;
  seen: [rcid: number, at: number][];
  /**
   * When following every page began (wiki time): every change since is applied (see
   * ListingCoverage). Absent while only stored pages are followed: creations are not stored then.
   */
  since?: string;
}

const LEASE_KEY = 'lease';
const CURSOR_KEY = 'cursor';
const DEPENDENTS = 'templates';

/**
 * A wiki's follower state in table storage: the lease (one follower per wiki across processes),
 * the cursor, fenced by the lease holder so a deposed follower cannot move it back, and the queue
 * of templates whose dependents are being rendered again.
 */
export class FollowerState {
  private readonly leases: LeaseTable;
  private readonly table: TableClient;
  private readonly dependents: TableClient;

  constructor(domain: string) {
    this.leases = new LeaseTable(domain, 'page_follower');
    this.table = this.leases.table;
    this.dependents = new TableClient(domain, 'page_dependents');
  }

  async create(ctx: RequestContext): Promise<void> {
    await Promise.all([this.table.create(ctx, PAGE_FOLLOWER_SCHEMA), this.dependents.create(ctx, PAGE_DEPENDENTS_SCHEMA)]);
  }

  /** Takes the lease and then the cursor's fence: from here on only `holder` moves the cursor. */
  async lead(ctx: RequestContext, holder: string, ttlSeconds: number): Promise<boolean> {
    if (!(await this.leases.acquire(ctx, LEASE_KEY, holder, ttlSeconds))) return false;
    await this.table.put(ctx, { attributes: { key: CURSOR_KEY, holder } });
    return true;
  }

  /**
   * Sets the cursor's fence to `holder` without a lease of this wiki's own: for a farm's wikis,
   * whose follower leads a lease of the whole group (farm-polls.ts).
   */
  async fence(ctx: RequestContext, holder: string): Promise<void> {
    await this.table.put(ctx, { attributes: { key: CURSOR_KEY, holder } });
  }

  renew(ctx: RequestContext, holder: string, ttlSeconds: number): Promise<boolean> {
    return this.leases.renew(ctx, LEASE_KEY, holder, ttlSeconds);
  }

  release(ctx: RequestContext, holder: string): Promise<void> {
    return this.leases.release(ctx, LEASE_KEY, holder);
  }

  async cursor(ctx: RequestContext): Promise<Cursor | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { key: CURSOR_KEY } })).items;
    return (row?.cursor as Cursor | null | undefined) ?? undefined;
  }

  /** Moves the cursor if `holder` still leads; false if another follower took over. */
  async advance(ctx: RequestContext, holder: string, cursor: Cursor): Promise<boolean> {
    return this.table.putIf(ctx, { attributes: { key: CURSOR_KEY, holder, cursor }, if: { holder: { eq: holder } } });
  }

  /** Queues a template's dependents; a template changed again while queued starts over. */
  async queueDependents(ctx: RequestContext, title: string): Promise<void> {
    await this.dependents.put(ctx, { attributes: { queue: DEPENDENTS, title, cont: null, queued: Date.now() } });
  }

  /** The oldest-queued template still to go, with where its listing stopped. */
  async nextDependents(ctx: RequestContext): Promise<{ title: string; cont: Record<string, string> | null; queued: string } | undefined> {
    const { items } = await this.dependents.query(ctx, { attributes: { queue: DEPENDENTS }, limit: 100 });
    const jobs = (items as unknown as { title: string; cont: Record<string, string> | null; queued: string | null }[]).filter(
      (job): job is { title: string; cont: Record<string, string> | null; queued: string } => job.queued !== null,
    );
    return jobs.sort((a, b) => Date.parse(a.queued) - Date.parse(b.queued))[0];
  }

  /** Records progress through a template's dependents, unless it was queued again meanwhile. */
  async progressDependents(ctx: RequestContext, title: string, queued: string, cont: Record<string, string> | null): Promise<void> {
    // Done: emptied and left to expire, conditionally, so a change queued meanwhile is not dropped.
    const attributes = cont ? { queue: DEPENDENTS, title, cont } : { queue: DEPENDENTS, title, cont: null, queued: null, _ttl: 1 };
    await this.dependents.putIf(ctx, { attributes, if: { queued: { eq: queued } } });
  }
}

import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';
import type { Access, BranchHead, BranchState } from './page-branches.js';

/**
 * Where branches are found: one partition per page (its open branches), per owner (theirs, in
 * every state) and per user they are shared with. Each entry is a copy of the branch's
 * metadata, written after the branch when its lists change and at least once a day of updates
 * (its `updated` is true to the day), the branch itself being the truth. The expiry sweep removes
 * the entries of an expired branch; their own TTL, a few days longer, is the backstop.
 */
const LISTS_SCHEMA = {
  version: 1,
  attributes: { list: 'string', branch: 'timeuuid', page: 'string', owner: 'string', state: 'string', updated: 'timestamp', shares: 'json' },
  index: [{ attribute: 'list', type: 'hash' }, { attribute: 'branch', type: 'range', order: 'desc' }],
  options: { updates: { pattern: 'random-update' } },
};

export interface ListedBranch {
  branch: string;
  page: string;
  owner: string | null;
  state: BranchState;
  updated: string;
  shares: Record<string, Access>;
}

const PAGE = (title: string) => `page:${title}`;
const OWNER = (user: string) => `owner:${user}`;
const SHARED = (user: string) => `shared:${user}`;

/** The lists a branch belongs to. */
export function listsOf(head: Pick<BranchHead, 'state' | 'page' | 'owner' | 'shares'>): string[] {
  const lists = head.state === 'open' ? [PAGE(head.page)] : [];
  if (head.owner !== null) lists.push(OWNER(head.owner), ...Object.keys(head.shares).map(SHARED));
  return lists;
}

/** How long an entry outlives its branch's expiry, if no sweep removes it. */
const BACKSTOP_SECONDS = 8 * 86400;

/** The most entries one list answers: a page or a user with more branches than this is paged by nobody. */
const MAX_LISTED = 1000;

export class BranchLists {
  private readonly table: TableClient;

  constructor(domain: string, private readonly ttlSeconds: number) {
    this.table = new TableClient(domain, 'page_branch_lists');
  }

  create(ctx: RequestContext): Promise<number> {
    return this.table.create(ctx, LISTS_SCHEMA);
  }

  /** Writes the branch into its lists, and out of those it left (`before`: its metadata before the change). */
  async record(ctx: RequestContext, head: BranchHead, before?: BranchHead): Promise<void> {
    const now = listsOf(head);
    const ttl = Math.max(1, Math.ceil((Date.parse(head.updated) + (this.ttlSeconds + BACKSTOP_SECONDS) * 1000 - Date.now()) / 1000));
    const entry = { branch: head.branch, page: head.page, owner: head.owner, state: head.state, updated: head.updated, shares: head.shares, _ttl: ttl };
    await Promise.all(now.map((list) => this.table.put(ctx, { attributes: { list, ...entry } })));
    if (before) await this.forget(ctx, listsOf(before).filter((l) => !now.includes(l)), head.branch);
  }

  /** Takes the branch out of `lists` (it expired). */
  async forget(ctx: RequestContext, lists: string[], branch: string): Promise<void> {
    await Promise.all(lists.map((list) => this.table.delete(ctx, { list, branch })));
  }

  private async read(ctx: RequestContext, list: string, next?: string): Promise<{ items: ListedBranch[]; next?: string }> {
    const page = await this.table.query(ctx, { attributes: { list }, limit: MAX_LISTED, ...(next ? { next } : {}) });
    // An entry is true to the day: one whose branch expired a day ago or more waits for the sweep.
    const live = Date.now() - (this.ttlSeconds + 86400) * 1000;
    const items = page.items.filter((row) => Date.parse(row.updated as string) > live).map((row) => ({
      branch: row.branch as string, page: row.page as string, owner: (row.owner as string | null) ?? null, state: row.state as BranchState,
      updated: row.updated as string, shares: (row.shares as Record<string, Access> | null) ?? {},
    }));
    return { items, ...(page.next ? { next: page.next } : {}) };
  }

  /** Every open branch of the page, anyone's, a page of entries at a time (a move takes them all along). */
  async *allOfPage(ctx: RequestContext, title: string): AsyncGenerator<ListedBranch[]> {
    let next: string | undefined;
    do {
      const read = await this.read(ctx, PAGE(title), next);
      yield read.items;
      next = read.next;
    } while (next);
  }

  /** A user's own branches, and those shared with them. */
  async ofUser(ctx: RequestContext, user: string): Promise<{ own: ListedBranch[]; shared: ListedBranch[] }> {
    const [own, shared] = await Promise.all([this.read(ctx, OWNER(user)), this.read(ctx, SHARED(user))]);
    return { own: own.items, shared: shared.items };
  }
}

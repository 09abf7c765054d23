import type { RequestContext } from '../../../router/types.js';
import { validityOf, type AnswerValidity } from '../../../storage/answer-validity.js';
import { TableClient } from '../../../table-access/table-client.js';
import { tidTime } from '../../../util/tid.js';

/**
 * Drafts of pages beside their published history: one partition per branch (its id, a timeuuid,
 * names it whatever page it belongs to, so a page move changes one static column, not every
 * version), one row per version, newest first. `latest_tid` is the CAS point: a version is
 * written only over the one its writer read, so of concurrent updates exactly one wins, and
 * branches never block each other or the page.
 */
const BRANCHES_SCHEMA = {
  version: 1,
  attributes: {
    branch: 'timeuuid', tid: 'timeuuid',
    page: 'string', owner: 'string', state: 'string', latest_tid: 'timeuuid', created: 'timestamp', updated: 'timestamp',
    shares: 'json', merged_rev: 'varint', merged_tid: 'timeuuid',
    base_revid: 'varint', base_tid: 'timeuuid', wikitext: 'string', html: 'string', html_type: 'string', data_mw: 'json', author: 'string', comment: 'string',
  },
  index: [
    { attribute: 'branch', type: 'hash' },
    ...['page', 'owner', 'state', 'latest_tid', 'created', 'updated', 'shares', 'merged_rev', 'merged_tid'].map((attribute) => ({ attribute, type: 'static' })),
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
  options: { updates: { pattern: 'random-update' } },
};

export type BranchState = 'open' | 'merged' | 'abandoned';
export type Access = 'read' | 'write';

/** A branch as its newest version row holds it (statics joined). */
export interface BranchHead {
  branch: string;
  page: string;
  /** The wiki user who made it; null: made anonymously (reachable only by its id). */
  owner: string | null;
  state: BranchState;
  latest_tid: string;
  created: string;
  updated: string;
  shares: Record<string, Access>;
  merged_rev: number | null;
  merged_tid: string | null;
  /** The revision its latest version is based on. */
  base_revid: number | null;
}

/** One version of a branch. */
export interface BranchVersion {
  tid: string;
  base_revid: number | null;
  /** The stored render the version's HTML was edited from. */
  base_tid: string | null;
  wikitext: string | null;
  html: string | null;
  /** The HTML's type (its profile names the version), when known. */
  html_type: string | null;
  /** The HTML's data-mw, when it travels apart from the HTML (999.x). */
  data_mw: unknown;
  author: string | null;
  comment: string | null;
}

const VERSION_COLUMNS = ['tid', 'base_revid', 'base_tid', 'wikitext', 'html', 'html_type', 'data_mw', 'author', 'comment'];
const META_COLUMNS = ['branch', 'tid', 'page', 'owner', 'state', 'latest_tid', 'created', 'updated', 'shares', 'merged_rev', 'merged_tid', 'base_revid'];

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

function headOf(row: Record<string, unknown>): BranchHead {
  return {
    branch: row.branch as string, page: row.page as string, owner: (row.owner as string | null) ?? null, state: row.state as BranchState,
    latest_tid: row.latest_tid as string, created: row.created as string, updated: row.updated as string,
    shares: (row.shares as Record<string, Access> | null) ?? {}, merged_rev: num(row.merged_rev), merged_tid: (row.merged_tid as string | null) ?? null,
    base_revid: num(row.base_revid),
  };
}

function versionOf(row: Record<string, unknown>): BranchVersion {
  return {
    tid: row.tid as string, base_revid: num(row.base_revid), base_tid: (row.base_tid as string | null) ?? null,
    wikitext: (row.wikitext as string | null) ?? null, html: (row.html as string | null) ?? null, html_type: (row.html_type as string | null) ?? null, data_mw: row.data_mw ?? null,
    author: (row.author as string | null) ?? null, comment: (row.comment as string | null) ?? null,
  };
}

/** What a new version holds. */
export type VersionContent = Omit<BranchVersion, 'tid'>;

export class BranchTable {
  private readonly table: TableClient;

  /** Every row lives `ttlSeconds` from its write: a branch not updated that long is gone (TTL, on every backend). */
  constructor(domain: string, private readonly ttlSeconds: number) {
    this.table = new TableClient(domain, 'page_branches');
  }

  create(ctx: RequestContext): Promise<number> {
    return this.table.create(ctx, BRANCHES_SCHEMA);
  }

  /** The branch's metadata with its latest version's base, in one read; undefined if there is none (never made, or expired). */
  async head(ctx: RequestContext, branch: string): Promise<BranchHead | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { branch }, limit: 1, proj: META_COLUMNS })).items;
    // A partition whose versions expired keeps no branch, whatever statics are left of it.
    if (!row?.tid) return undefined;
    const head = headOf(row);
    // Versions are written newest-timed (tidAfter), so the newest row is the latest version.
    if (row.tid !== head.latest_tid) head.base_revid = (await this.version(ctx, branch, head.latest_tid))?.base_revid ?? null;
    return head;
  }

  /** The branch's metadata and its latest version, in one read. */
  /**
   * The branch with its latest version, in one read where the newest row is that version; with
   * how long the answer holds, where the engine knows (see storage/answer-validity.ts): what is
   * read after it holds at least as long.
   */
  async headWithLatest(ctx: RequestContext, branch: string): Promise<{ head: BranchHead; latest: BranchVersion; validity?: AnswerValidity } | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { branch }, limit: 1, proj: [...META_COLUMNS, ...VERSION_COLUMNS.slice(2)] })).items;
    if (!row?.tid) return undefined;
    const head = headOf(row);
    const validity = validityOf(row);
    if (row.tid === head.latest_tid) return { head, latest: versionOf(row), validity };
    const latest = await this.version(ctx, branch, head.latest_tid);
    if (!latest) return undefined;
    return { head: { ...head, base_revid: latest.base_revid }, latest, validity };
  }

  async version(ctx: RequestContext, branch: string, tid: string): Promise<BranchVersion | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { branch, tid }, proj: VERSION_COLUMNS })).items;
    return row ? versionOf(row) : undefined;
  }

  /** Versions, newest first, a page at a time. */
  async versions(ctx: RequestContext, branch: string, limit: number, next?: string): Promise<{ items: BranchVersion[]; next?: string }> {
    const page = await this.table.query(ctx, { attributes: { branch }, limit, next, proj: VERSION_COLUMNS });
    return { items: page.items.map(versionOf), next: page.next };
  }

  /** A new branch with its first version; false if the id is taken (never, for a fresh timeuuid). */
  start(ctx: RequestContext, head: Omit<BranchHead, 'latest_tid' | 'merged_rev' | 'merged_tid' | 'state' | 'base_revid'>, tid: string, content: VersionContent): Promise<boolean> {
    return this.table.putIf(ctx, {
      attributes: { ...head, state: 'open', latest_tid: tid, tid, ...content, _ttl: this.ttlSeconds },
      if: 'not exists',
    });
  }

  /**
   * A version written over `over` (the CAS): false if another version came first, or the branch
   * is no longer open. The branch's statics are written with it, and live on from now.
   */
  update(ctx: RequestContext, branch: string, over: string, tid: string, content: VersionContent, updated: string): Promise<boolean> {
    return this.table.putIf(ctx, {
      attributes: { branch, tid, latest_tid: tid, updated, ...content, _ttl: this.ttlSeconds },
      if: { latest_tid: { eq: over }, state: { eq: 'open' } },
    });
  }

  /**
   * Changes of the branch's metadata alone (state, shares, page), conditional on its latest
   * version (`over`) and on its state (`whileState`) when given. They live as long as its
   * versions: no longer than the last update plus the TTL.
   */
  setMeta(
    ctx: RequestContext, head: BranchHead, changes: Partial<Pick<BranchHead, 'state' | 'shares' | 'page' | 'merged_rev' | 'merged_tid'>>,
    { over, whileState }: { over?: string; whileState?: BranchState } = {},
  ): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil((Date.parse(head.updated) + this.ttlSeconds * 1000 - Date.now()) / 1000));
    const write = { attributes: { branch: head.branch, ...changes, _ttl: ttl } };
    const conditions = { ...(over === undefined ? {} : { latest_tid: { eq: over } }), ...(whileState === undefined ? {} : { state: { eq: whileState } }) };
    if (Object.keys(conditions).length === 0) return this.table.put(ctx, write).then(() => true);
    return this.table.putIf(ctx, { ...write, if: conditions });
  }

  /** A version's HTML made from its wikitext, kept with it (as long as the version lives). */
  async keepHtml(ctx: RequestContext, branch: string, version: BranchVersion, html: string, type: string): Promise<void> {
    const ttl = Math.max(1, Math.ceil((tidTime(version.tid) + this.ttlSeconds * 1000 - Date.now()) / 1000));
    await this.table.put(ctx, { attributes: { branch, tid: version.tid, html, html_type: type, _ttl: ttl } });
  }

  /** Removes what is left of an expired branch (engines without native TTL keep its statics). */
  remove(ctx: RequestContext, branch: string): Promise<void> {
    return this.table.delete(ctx, { branch });
  }
}

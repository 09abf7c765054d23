import type { RequestContext } from '../../../router/types.js';
import type { Row } from '../../../storage/types.js';
import type { ApiPage, ApiRevision } from '../../../upstream/action-api.js';
import { TableClient } from '../../../table-access/table-client.js';
import { HttpError } from '../../../util/errors.js';
import type { TitleCache } from '../model/title-cache.js';
import type { RevisionRow } from '../model/revision.js';
import type { ChangeLog } from './change-log.js';

/** One revision of a page as stored, with the page's static state joined to it. */
export const PAGE_REVISIONS_SCHEMA = {
  version: 5,
  attributes: {
    title: 'string', rev: 'varint', tid: 'timeuuid', page_id: 'varint', timestamp: 'timestamp', user_id: 'varint', user_text: 'string',
    comment: 'string', minor: 'boolean', size: 'varint', sha1: 'string', content_model: 'string',
    text_hidden: 'boolean', user_hidden: 'boolean', comment_hidden: 'boolean', seen: 'timestamp', parent_id: 'varint', tags: 'json',
    latest_rev: 'varint', latest_tid: 'timeuuid', deleted: 'timestamp', checked: 'timestamp', first_seen: 'timestamp',
    moved_to: 'string', moved_page: 'varint', noticed: 'timestamp',
  },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'latest_rev', type: 'static' },
    { attribute: 'latest_tid', type: 'static' },
    { attribute: 'deleted', type: 'static' },
    { attribute: 'checked', type: 'static' },
    { attribute: 'first_seen', type: 'static' },
    { attribute: 'moved_to', type: 'static' },
    { attribute: 'moved_page', type: 'static' },
    { attribute: 'noticed', type: 'static' },
    { attribute: 'rev', type: 'range', order: 'desc' },
  ],
  secondaryIndexes: {
    by_rev: [{ attribute: 'rev', type: 'hash' }, { attribute: 'title', type: 'proj' }],
    // The revision current at a time (`?ts=`) in one indexed read, however long the page's history.
    by_time: [{ attribute: 'title', type: 'hash' }, { attribute: 'timestamp', type: 'range', order: 'desc' }, { attribute: 'rev', type: 'range', order: 'desc' }],
  },
};

/**
 * Whether the wiki told of a change to the page (`markUnchecked`) since `askedAt`: an answer the
 * wiki gave to a question asked before may not show that change, so the page stays unchecked.
 * Times of the service's processes compared, so within their clocks' skew.
 */
const noticedSince = (state: RevisionRow | undefined, askedAt: number | undefined) =>
  askedAt !== undefined && !!state?.noticed && Date.parse(state.noticed) >= askedAt;

function fromApi(title: string, page: ApiPage, r: ApiRevision): Record<string, unknown> {
  return {
    title,
    rev: r.revid,
    page_id: page.pageid ?? null,
    timestamp: r.timestamp,
    user_id: r.userhidden ? null : (r.userid ?? null),
    user_text: r.userhidden ? null : (r.user ?? null),
    comment: r.commenthidden ? null : (r.comment ?? null),
    minor: r.minor ?? false,
    size: r.size ?? null,
    sha1: r.sha1hidden ? null : (r.sha1 ?? null),
    content_model: r.slots?.main?.contentmodel ?? null,
    // Without rvprop=content the API marks hidden text only by hiding the sha1.
    text_hidden: (r.slots?.main?.texthidden || r.sha1hidden) ?? false,
    user_hidden: r.userhidden ?? false,
    comment_hidden: r.commenthidden ?? false,
    seen: new Date().toISOString(),
    parent_id: r.parentid ?? null,
    tags: r.tags ?? [],
  };
}

/** The columns of a revision's row that the wiki's description of it sets (all of `fromApi`'s but when it was seen, the time it was made and its tags, compared apart). */
const DESCRIBED = ['page_id', 'user_id', 'user_text', 'comment', 'minor', 'size', 'sha1', 'content_model', 'text_hidden', 'user_hidden', 'comment_hidden', 'parent_id'] as const;

/** Whether the wiki describes a stored revision as its row already has it. */
export function describedAsStored(stored: RevisionRow, page: ApiPage, r: ApiRevision): boolean {
  const described = fromApi(stored.title, page, r);
  for (const column of DESCRIBED) if ((stored[column] ?? null) !== (described[column] ?? null)) return false;
  // A timestamp is stored in its own form (milliseconds shown).
  if (Date.parse(stored.timestamp ?? '') !== Date.parse(String(described.timestamp))) return false;
  const tags = (t: unknown) => JSON.stringify([...((t as string[] | null) ?? [])].sort());
  return tags(stored.tags) === tags(described.tags);
}

/**
 * A revision the wiki just named as its page's latest, as its row will read once stored (before
 * it is): enough to render it while its metadata is being written.
 */
export function latestFromApi(title: string, page: ApiPage, r: ApiRevision): RevisionRow {
  return {
    ...(fromApi(title, page, r) as Omit<RevisionRow, 'tid' | 'latest_rev' | 'latest_tid' | 'deleted' | 'checked' | 'first_seen' | 'moved_to' | 'moved_page'>),
    tid: null, latest_rev: r.revid, latest_tid: null, deleted: null, checked: null, first_seen: null, moved_to: null, moved_page: null,
  };
}

/** The latest revision's first render is its edit's event; a later one of the same revision a re-render. */
function renderChange(before: RevisionRow | undefined, rev: number): 'edit' | 'rerender' {
  return before?.latest_rev === rev && before.latest_tid ? 'rerender' : 'edit';
}

/** The MediaWiki revision table: revisions as they are first seen, per page, newest first. */
export class PageRevisions {
  readonly table: TableClient;

  /** `cache` is this domain's page-state cache (see PageCaches). */
  constructor(domain: string, private readonly cache: TitleCache<RevisionRow | undefined>, readonly changes: ChangeLog) {
    this.table = new TableClient(domain, 'page_revisions');
  }

  private async cached(title: string, sub: string, read: () => Promise<RevisionRow | undefined>): Promise<RevisionRow | undefined> {
    const hit = this.cache.get(title, sub);
    if (hit) return hit;
    const gen = this.cache.generation(title);
    const row = await read();
    if (row) this.cache.set(title, sub, row, gen);
    return row;
  }

  /** Every write names the page, so cached rows of the page are dropped. */
  private async write(ctx: RequestContext, title: string, attributes: Record<string, unknown>): Promise<void> {
    this.cache.invalidate(title);
    await this.table.put(ctx, { attributes });
    this.cache.invalidate(title);
  }

  async create(ctx: RequestContext): Promise<void> {
    await Promise.all([this.table.create(ctx, PAGE_REVISIONS_SCHEMA), this.changes.create(ctx)]);
  }

  newest(ctx: RequestContext, title: string): Promise<RevisionRow | undefined> {
    return this.cached(title, 'newest', async () => (await this.table.query(ctx, { attributes: { title }, limit: 1 })).items[0] as unknown as RevisionRow | undefined);
  }

  get(ctx: RequestContext, title: string, rev: number): Promise<RevisionRow | undefined> {
    return this.cached(title, String(rev), async () => (await this.table.query(ctx, { attributes: { title, rev } })).items[0] as unknown as RevisionRow | undefined);
  }

  /** The pages a revision id is stored under (more than one after a move). */
  async titlesOf(ctx: RequestContext, rev: number): Promise<string[]> {
    return (await this.table.query(ctx, { index: 'by_rev', attributes: { rev }, proj: ['title'], limit: 10 })).items.map((r) => r.title as string);
  }

  async range(ctx: RequestContext, title: string, lowRev: number, highRev: number): Promise<RevisionRow[]> {
    const { items } = await this.table.query(ctx, { attributes: { title, rev: { between: [lowRev, highRev] } } });
    return items as unknown as RevisionRow[];
  }

  /** Stores revisions as the wiki describes them (metadata only: render pointers stay). */
  async saveFromApi(ctx: RequestContext, title: string, page: ApiPage, revisions: ApiRevision[]): Promise<void> {
    for (const r of revisions) await this.write(ctx, title, fromApi(title, page, r));
  }

  /**
   * Records what the wiki says is the page's latest revision, and when it said so. `askedAt`: when
   * the wiki was asked; a notice of a change since leaves the page unchecked (see `noticedSince`).
   */
  async markLatest(ctx: RequestContext, title: string, latestRev: number, latestTid: string | null, current: RevisionRow | undefined, askedAt?: number): Promise<void> {
    const now = new Date().toISOString();
    // A render of the revision stored since the caller looked is kept, never pointed away from.
    const written = await this.pointLatest(ctx, title, (before) => ({
      title, latest_rev: latestRev, latest_tid: latestTid ?? (before?.latest_rev === latestRev ? before.latest_tid : null),
      checked: noticedSince(before, askedAt) ? null : now, deleted: null, first_seen: before?.first_seen ?? current?.first_seen ?? now,
    }));
    if (written === 'unchanged' || written === undefined) return;
    const { before, state } = written;
    // A revision rendered before (an undeletion, a revert) is recorded now; a new one once rendered (setRenderTid).
    const tid = state.latest_tid as string | null;
    if (before?.deleted) await this.changes.record(ctx, { kind: 'undelete', title, rev: latestRev, ...(tid ? { tid } : {}) });
    else if (tid) await this.changes.record(ctx, { kind: renderChange(before, latestRev), title, rev: latestRev, tid });
  }

  /**
   * The wiki named the stored latest revision again, and described it as stored: the revision's
   * row as the wiki describes it and the page's check time, in one write (the full path rewrites
   * the row and then the page's state, reading it between). The row is written whole, not only
   * when it was seen: the caller compared it with a row it may hold from before another process's
   * write, and its hidden flags must be the wiki's. Undefined, and nothing written, if the state
   * stored names another revision (or a deletion, or a move) by now: the caller writes in full.
   */
  async markStillLatest(ctx: RequestContext, title: string, page: ApiPage, r: ApiRevision, askedAt?: number): Promise<RevisionRow | undefined> {
    const [before] = (await this.table.query(ctx, { attributes: { title }, limit: 1 })).items as unknown as RevisionRow[];
    if (!before || before.rev !== r.revid || before.latest_rev !== r.revid || before.deleted || before.moved_to) return undefined;
    const row = fromApi(title, page, r);
    const checked = noticedSince(before, askedAt) ? null : (row.seen as string);
    await this.write(ctx, title, { ...row, checked });
    return { ...before, ...row, checked } as RevisionRow;
  }

  /**
   * Writes the page's state `make` gives from the state stored, and answers that state and what
   * it replaced, or 'unchanged' when its latest render pointer stays (and it undeletes nothing;
   * then it is written as it is). A change of the pointer is a conditional write over what was
   * read, so of writers racing to make the same change (a render stored while a notice refreshes
   * the page) one alone is answered, and one alone records it. `make` answers undefined when the
   * page has moved past what the caller would write: nothing is written.
   */
  private async pointLatest(
    ctx: RequestContext, title: string, make: (before: RevisionRow | undefined) => Record<string, unknown> | undefined,
  ): Promise<{ before: RevisionRow | undefined; state: Record<string, unknown> } | 'unchanged' | undefined> {
    for (let attempt = 1; ; attempt++) {
      const [before] = (await this.table.query(ctx, { attributes: { title }, limit: 1 })).items as unknown as RevisionRow[];
      const state = make(before);
      if (!state) return undefined;
      const undeletes = 'deleted' in state && Boolean(before?.deleted);
      if ((before?.latest_tid ?? null) === state.latest_tid && !undeletes) {
        await this.write(ctx, title, state);
        return 'unchanged';
      }
      this.cache.invalidate(title);
      let written: boolean;
      try {
        written = await this.table.putIf(ctx, { attributes: state, if: { latest_tid: { eq: before?.latest_tid ?? null }, deleted: { eq: before?.deleted ?? null } } });
      } finally {
        this.cache.invalidate(title);
      }
      if (written) return { before, state };
      if (attempt === 5) throw new HttpError(503, 'page-state-contended', `The state of ${title} kept changing while it was written.`, { headers: { 'retry-after': '1' } });
    }
  }

  /**
   * Records a revision saved through the service as the page's latest, row and page state in one
   * write, if the latest revision stored is still `from` (null: none); false if it moved.
   */
  async recordSaved(ctx: RequestContext, title: string, from: number | null, row: Record<string, unknown>): Promise<boolean> {
    const now = new Date().toISOString();
    // The latest render is the saved revision's, or none until it is stored (setRenderTid).
    const statics = { latest_rev: row.rev, latest_tid: row.tid ?? null, checked: now, deleted: null, ...(from === null ? { first_seen: now } : {}) };
    this.cache.invalidate(title);
    let saved: boolean;
    try {
      saved = await this.table.putIf(ctx, { attributes: { ...row, title, ...statics }, if: { latest_rev: { eq: from } } });
    } finally {
      this.cache.invalidate(title);
    }
    if (saved && row.tid) await this.changes.record(ctx, { kind: 'edit', title, rev: Number(row.rev), tid: row.tid as string });
    return saved;
  }

  /** Records that the wiki told of a change to the page: its stored state is asked of the wiki before it is served again. */
  async markUnchecked(ctx: RequestContext, title: string): Promise<void> {
    await this.write(ctx, title, { title, checked: null, noticed: new Date().toISOString() });
  }

  /** Stores one revision's row as given (page state untouched). */
  async saveRow(ctx: RequestContext, title: string, row: Record<string, unknown>): Promise<void> {
    await this.write(ctx, title, { ...row, title });
  }

  /** The page's latest revision id as stored now (not from the page-state cache). */
  async storedLatest(ctx: RequestContext, title: string): Promise<number | null> {
    const [row] = (await this.table.query(ctx, { attributes: { title }, limit: 1 })).items as unknown as RevisionRow[];
    return row?.latest_rev ?? null;
  }

  /** Records that the page `pageId`, stored under `from`, is now at `to`. */
  async markMoved(ctx: RequestContext, from: string, to: string, pageId: number): Promise<void> {
    await this.write(ctx, from, { title: from, moved_to: to, moved_page: pageId });
    await this.changes.record(ctx, { kind: 'move', title: from, to });
  }

  /** A revision the wiki no longer shows though its page is there: kept, but never served again. */
  async markGone(ctx: RequestContext, title: string, rev: number): Promise<void> {
    await this.write(ctx, title, { title, rev, text_hidden: true, seen: new Date().toISOString() });
  }

  async clearMoved(ctx: RequestContext, title: string): Promise<void> {
    await this.write(ctx, title, { title, moved_to: null, moved_page: null });
  }

  /** Records the page deleted; `askedAt` as for `markLatest`. */
  async tombstone(ctx: RequestContext, title: string, askedAt?: number): Promise<void> {
    const now = new Date().toISOString();
    // Read from storage, not the page-state cache: another process may have taken the notice.
    const before = askedAt === undefined ? undefined : ((await this.table.query(ctx, { attributes: { title }, limit: 1 })).items[0] as unknown as RevisionRow | undefined);
    await this.write(ctx, title, { title, deleted: now, checked: noticedSince(before, askedAt) ? null : now });
    await this.changes.record(ctx, { kind: 'delete', title });
  }

  /**
   * Stores the render pointer of a revision and, if it is the page's latest (`isLatest`, as the
   * caller read it), the page's: never back to an older revision the page has moved past.
   */
  async setRenderTid(ctx: RequestContext, title: string, rev: number, tid: string, isLatest: boolean): Promise<void> {
    const row = { title, rev, tid };
    if (!isLatest) return this.write(ctx, title, row);
    const written = await this.pointLatest(ctx, title, (before) => ((before?.latest_rev ?? 0) > rev ? undefined : { ...row, latest_rev: rev, latest_tid: tid }));
    if (written === undefined) return this.write(ctx, title, row);
    if (written !== 'unchanged') await this.changes.record(ctx, { kind: renderChange(written.before, rev), title, rev, tid });
  }

  /** Pages with stored revisions, each once, with their static state. */
  list(ctx: RequestContext, paging: { limit?: number; next?: string }): Promise<{ items: Row[]; next?: string }> {
    return this.table.query(ctx, { distinct: true, ...paging });
  }

  /** The titles of pages with stored revisions, each once, in the table's order. */
  async titles(ctx: RequestContext, paging: { limit?: number; next?: string }): Promise<{ titles: string[]; next?: string }> {
    // The title alone: a partition's static state is a dozen columns more to decode.
    const page = await this.table.query(ctx, { distinct: true, proj: ['title'], ...paging });
    return { titles: page.items.map((row) => row.title as string), next: page.next };
  }

  /**
   * The newest stored revision of a page made at or before `at` (revision time), if any: by time,
   * then by id among revisions of the same second, as the wiki orders a page's history.
   */
  async currentAt(ctx: RequestContext, title: string, at: number, { keep = true } = {}): Promise<RevisionRow | undefined> {
    // The index answers whole rows (each engine reads the row it names): one read, not the
    // revision's id and then its row. Kept as `get` keeps it, for the reads of the same revision
    // after; `keep: false` for a reader going through every page once (a snapshot).
    const gen = this.cache.generation(title);
    const row = (await this.table.query(ctx, { index: 'by_time', attributes: { title, timestamp: { le: at } }, limit: 1 })).items[0] as unknown as RevisionRow | undefined;
    if (row && keep) this.cache.set(title, String(row.rev), row, gen);
    return row;
  }

  /**
   * The revision current at `at`, where what is stored proves it, else undefined (the wiki must be
   * asked): the newest stored revision of the page made by then, when the next one is stored too
   * (its parent, made after `at`) or when it is the latest revision and was still the latest when
   * the wiki was last asked, at or after `at`. Only revisions of the page now at the title count: a
   * page deleted and made again keeps the rows of the old one in the same partition.
   */
  async provenCurrentAt(ctx: RequestContext, title: string, at: number): Promise<RevisionRow | undefined> {
    // The row carries its page's state (static columns): the page's latest revision, or none.
    const row = await this.currentAt(ctx, title, at);
    if (!row || row.latest_rev === null) return undefined;
    // The page's latest revision is of the page now at the title: no other row need be read.
    if (row.rev === row.latest_rev) return row.checked !== null && Date.parse(row.checked) >= at ? row : undefined;
    // Of the next revision, only what proves it: not its page's state, nor its other columns.
    const { items } = await this.table.query(ctx, { attributes: { title, rev: { gt: row.rev } }, order: { rev: 'asc' }, proj: ['rev', 'parent_id', 'page_id', 'timestamp'], limit: 1 });
    const next = items[0] as Pick<RevisionRow, 'rev' | 'parent_id' | 'page_id' | 'timestamp'> | undefined;
    const provesIt = next && next.parent_id === row.rev && next.page_id === row.page_id && next.timestamp !== null && Date.parse(next.timestamp) > at;
    if (!provesIt) return undefined;
    // A page deleted and made again keeps the old page's rows in its partition: the row must be of
    // the page now at the title, which the next revision shows when it is the latest, else the
    // newest row (kept per page) does.
    if (next.rev === row.latest_rev) return row;
    const newest = await this.newest(ctx, title);
    return newest?.page_id === row.page_id ? row : undefined;
  }
}

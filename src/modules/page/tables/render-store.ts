import type { RequestContext } from '../../../router/types.js';
import type { Row } from '../../../storage/types.js';
import { TableClient } from '../../../table-access/table-client.js';
import { SecondSight } from '../../../util/bounded-map.js';
import { exposed, partOf, PROPS, type Prop, type Render, type StoredPart } from '../model/render.js';

const COLUMN: Record<Prop, string> = { html: 'html', 'data-parsoid': 'data_parsoid', 'data-mw': 'data_mw', wikitext: 'wikitext' };

const RENDERS_SCHEMA = {
  version: 2,
  attributes: { title: 'string', rev: 'varint', tid: 'timeuuid', html: 'blob', data_parsoid: 'blob', data_mw: 'blob', wikitext: 'blob', meta: 'json' },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'rev', type: 'range', order: 'desc' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
  // A page re-rendered or edited many times keeps its newest renders; older ones live a day more.
  revisionRetentionPolicy: { type: 'latest', count: 16, grace_ttl: 86400 },
  // A render by tid alone (`/page/{title}/html/{tid}`) in one indexed read, however long its
  // page's history: rows are keyed by revision first, and the tid does not tell the revision.
  secondaryIndexes: {
    by_tid: [{ attribute: 'tid', type: 'hash' }, { attribute: 'title', type: 'range' }, { attribute: 'rev', type: 'proj' }],
  },
};

function toRender(row: Row | undefined): Render | undefined {
  if (!row) return undefined;
  const meta = row.meta as { types: Record<Prop, string>; digest: string; redirect?: string };
  const parts = Object.fromEntries(PROPS.map((p) => [p, row[COLUMN[p]] as Buffer])) as Record<Prop, Buffer>;
  return { title: row.title as string, rev: row.rev as number, tid: row.tid as string, parts, types: meta.types, digest: meta.digest, redirect: meta.redirect };
}

/** Renders read by tid remembered once read (see `RenderStore.seen`): some 150 MB of renders' worth. */
const RENDERS_SEEN = 8192;

/** Renders kept in memory by tid (the page caches hold them): what the store asks before storage. */
export interface RenderMemory {
  render(domain: string, tid: string): Render | undefined;
  rememberRender(domain: string, render: Render): void;
  /** Counts a use of a render, found in memory (`hit`) or read from storage. */
  noteRenderUse(domain: string, tid: string, hit: boolean): void;
  /** Whether a render read from storage now would be kept (room, or used more than what it would push out). */
  wouldKeepRender(domain: string, tid: string): boolean;
  /** A render read from storage, kept if `wouldKeepRender`. */
  offerRender(domain: string, render: Render): void;
}

/**
 * Render storage (the `parsoid` table) with an in-memory cache: renders never change once
 * stored, so a cached render needs no storage read.
 */
export class RenderStore {
  private readonly tables = new Map<string, TableClient>();
  /** Renders whose tid was handed out with their page bundle while their wikitext is fetched. */
  private readonly incomplete = new Map<string, Promise<Render>>();
  /**
   * Renders read from storage by tid are kept in memory the second time they are read among the
   * last `RENDERS_SEEN`, and, once the cache is full, only if read more often lately than the render
   * they would push out (`RenderMemory.wouldKeepRender`): under reads of old revisions, each kept at
   * once pushed a hotter one out and lived long enough to be collected with the old generation (a
   * major collection every quarter second, the reads' p99).
   */
  private readonly seen = new SecondSight(RENDERS_SEEN);

  constructor(private readonly caches: RenderMemory) {}

  table(domain: string): TableClient {
    let t = this.tables.get(domain);
    if (!t) this.tables.set(domain, (t = new TableClient(domain, 'parsoid')));
    return t;
  }

  async create(ctx: RequestContext, domain: string): Promise<void> {
    await this.table(domain).create(ctx, RENDERS_SCHEMA);
  }

  remember(domain: string, render: Render | undefined): Render | undefined {
    if (render) this.caches.rememberRender(domain, render);
    return render;
  }

  /** A render whose tid is known before the render is whole: a read by that tid waits for it. */
  completing(domain: string, tid: string, render: Promise<Render>): void {
    const key = `${domain}\u0000${tid}`;
    this.incomplete.set(key, render);
    const done = () => {
      if (this.incomplete.get(key) === render) this.incomplete.delete(key);
    };
    render.then(done, done);
  }

  /** `keep: false` for a reader going through every page once (a snapshot): what it reads is not kept in memory. */
  async byTid(ctx: RequestContext, domain: string, title: string, tid: string, rev?: number, { keep = true } = {}): Promise<Render | undefined> {
    // Only a render still being completed is waited for: a plain miss goes on to storage at once.
    const completing = this.incomplete.get(`${domain}\u0000${tid}`);
    const cached = this.caches.render(domain, tid) ?? (completing && (await completing.catch(() => undefined)));
    const hit = cached?.title === title && cached.tid === tid;
    if (keep) this.caches.noteRenderUse(domain, tid, hit);
    if (hit) return cached;
    // Without its revision, found through the tid's index, which answers the whole row (each engine
    // reads the row it names): one read, not the revision's number first and then its row.
    const query = rev === undefined ? { index: 'by_tid', attributes: { tid, title }, limit: 1 } : { attributes: { title, rev, tid }, limit: 1 };
    const stored = toRender((await this.table(domain).query(ctx, query)).items[0]);
    // A render copied to a page's new title keeps its tid: the one remembered may be the other copy.
    if (cached || !keep || !stored || !this.seen.admits(`${domain}\u0000${tid}`)) return stored;
    this.caches.offerRender(domain, stored);
    return stored;
  }

  /**
   * One property of a render, read alone with the render's head (its column and `meta`), for a read
   * that sends it as stored; a render in memory answers it. Undefined where the whole render is to be
   * read instead (`byTid`): none stored, one still being completed, or this read the one that keeps
   * the render in memory (its second among the last `RENDERS_SEEN`), which must keep it whole: a
   * render kept in memory is every reader's, whatever property it reads.
   */
  async part(ctx: RequestContext, domain: string, title: string, rev: number | undefined, tid: string, prop: Prop): Promise<StoredPart | undefined> {
    const key = `${domain}\u0000${tid}`;
    const cached = this.caches.render(domain, tid);
    if (cached?.title === title) {
      this.caches.noteRenderUse(domain, tid, true);
      return { prop, render: cached, body: partOf(cached, prop), type: cached.types[prop] };
    }
    // Where the whole render is read instead, `byTid` counts the use.
    if (this.incomplete.has(key) || (!cached && this.seen.wouldAdmit(key) && this.caches.wouldKeepRender(domain, tid))) return undefined;
    this.caches.noteRenderUse(domain, tid, false);
    const column = COLUMN[prop];
    const proj = ['title', 'rev', 'tid', column, 'meta'];
    const query = rev === undefined ? { index: 'by_tid', attributes: { tid, title }, proj, limit: 1 } : { attributes: { title, rev, tid }, proj, limit: 1 };
    const [row] = (await this.table(domain).query(ctx, query)).items;
    if (!row) return undefined;
    // Counted as `byTid` counts a read: the next read of this render keeps it.
    if (!cached) this.seen.note(key);
    const meta = row.meta as { types: Record<Prop, string>; redirect?: string };
    const render = { title: row.title as string, rev: row.rev as number, tid: row.tid as string, ...(meta.redirect ? { redirect: meta.redirect } : {}) };
    return { prop, render, body: exposed(prop, meta.types[prop], row[column] as Buffer), type: meta.types[prop], oneOff: true };
  }

  /** The newest stored render of a revision. */
  async newestOf(ctx: RequestContext, domain: string, title: string, rev: number): Promise<Render | undefined> {
    return this.remember(domain, toRender((await this.table(domain).query(ctx, { attributes: { title, rev }, limit: 1 })).items[0]));
  }

  async save(ctx: RequestContext, domain: string, render: Render): Promise<void> {
    const attributes: Record<string, unknown> = {
      title: render.title,
      rev: render.rev,
      tid: render.tid,
      meta: { types: render.types, digest: render.digest, ...(render.redirect ? { redirect: render.redirect } : {}) },
    };
    for (const p of PROPS) attributes[COLUMN[p]] = render.parts[p];
    await this.table(domain).put(ctx, { attributes, if: 'not exists' });
    this.remember(domain, render);
  }

  /** Stored renders of a page, newest first. */
  async list(ctx: RequestContext, domain: string, title: string, paging: { limit?: number; next?: string }): Promise<{ items: Row[]; next?: string }> {
    return this.table(domain).query(ctx, { attributes: { title }, proj: ['rev', 'tid'], ...paging });
  }
}

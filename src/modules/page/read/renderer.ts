import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { BoundedMap } from '../../../util/bounded-map.js';
import { compress } from '../../../http/encoding.js';
import { HttpError, forbidden, notFound } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import { newTid } from '../../../util/tid.js';
import { compressedOnRead } from '../model/compressed-on-read.js';
import type { CachePurger } from '../../../upstream/cache-purger.js';
import { requestMark, requestsWritten } from '../../../upstream/fetch.js';
import type { PageBundle, Part } from '../../../upstream/parsoid.js';
import { wikitextIn, type KnownWikitext } from '../../../upstream/revision-text.js';
import { isUnavailable } from '../../../upstream/wiki.js';
import { RevisionMoved } from '../model/page-moves.js';
import { latestPurge } from '../model/purge-urls.js';
import { PROPS, type BundleProp, type BundleRender, type Prop, type PropRender, type Render, type StoredPart } from '../model/render.js';
import type { RevisionRow } from '../model/revision.js';
import { RenderLeases } from '../tables/render-leases.js';
import type { RenderStore } from '../tables/render-store.js';
import { fromCore, redirectTarget, UNAVAILABLE } from './core-render.js';
import { EarlyFetches } from './early-fetches.js';
import type { KnownRevisions, RenderAhead } from './known-revisions.js';
import type { SingleFlight } from '../model/single-flight.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';

/**
 * Resolves after the answers finished in this turn of the event loop are written. An immediate
 * writes them (http/write-batch.ts); a storage write waiting on an immediate queued before theirs
 * went first and held them up, since SQLite writes a render's parts synchronously. The second
 * wait is queued after their write.
 */
async function afterAnswersOfThisTurn(): Promise<void> {
  await nextTurn();
  await nextTurn();
}

/** The parts of a render that Parsoid's page bundle gives. */
const BUNDLE_PROPS = PROPS.filter((p): p is BundleProp => p !== 'wikitext');

/** What Parsoid gave for a revision: its page bundle, and its wikitext (perhaps still on its way). */
interface Fetched {
  bundle: PageBundle;
  wikitext: Promise<Part>;
}

/**
 * A render in the making: its page bundle's parts as soon as Parsoid gave them (what most readers
 * need), the whole render once its wikitext is there too, and `stored` once that is stored.
 */
interface Rendering {
  bundle: BundleRender;
  render: Promise<Render>;
  stored: Promise<void>;
}

/** A render already made, as a `Rendering`. */
const finished = (render: Render): Rendering => ({ bundle: render, render: Promise.resolve(render), stored: Promise.resolve() });

/**
 * Told of each fresh render of a page's latest revision as it is stored, with its parts as they
 * came (not yet compressed); part of storing it. Its tables are created with the read side's.
 */
export interface LatestRenderStored {
  create(ctx: RequestContext, domain: string): Promise<void>;
  made(ctx: RequestContext, domain: string, render: Render, plain: { html: Buffer; dataMw: Buffer; wikitext: Buffer }, row: RevisionRow): Promise<void>;
  /** At the process's end, after the renders being stored are. */
  close?(): Promise<void>;
}

/** Key of one render in progress (coalesced, then tracked until stored). */
const renderKey = (domain: string, title: string, rev: number, force: boolean) => `render\u0000${domain}\u0000${title}\u0000${rev}\u0000${force}`;

/**
 * Renders of revisions: from storage, or made by the wiki's Parsoid on a miss, once however many
 * clients (and processes, through render leases) wait for it, answered from memory while stored.
 */
export class Renderer implements RenderAhead {
  /** Renders being stored after their clients were answered, by render key; shutdown waits for them. */
  private readonly storing = new Map<string, Promise<void>>();
  private readonly leaseTables = new BoundedMap<string, RenderLeases>(1024);
  private readonly early = new EarlyFetches<Fetched>();

  constructor(
    private readonly wikis: WikiDirectory,
    private readonly revisions: KnownRevisions,
    private readonly renders: RenderStore,
    private readonly flights: SingleFlight,
    private readonly log: Logger,
    private readonly purger: CachePurger,
    private readonly latestStored?: LatestRenderStored,
  ) {}


  renderLeases(domain: string): RenderLeases {
    return this.leaseTables.remember(domain, () => new RenderLeases(domain, this.log));
  }

  /** Resolves once the render of a revision being made now (if any) is stored. */
  async whenStored(domain: string, title: string, rev: number): Promise<void> {
    await this.storing.get(renderKey(domain, title, rev, false));
  }

  /** Resolves once every render already handed to clients is stored. */
  async drain(): Promise<void> {
    while (this.storing.size > 0) await Promise.all([...this.storing.values()]);
  }

  /**
   * Starts rendering a revision the wiki just named as latest, and resolves once its requests to
   * Parsoid are on the wire: the state writes that follow (a millisecond or more on SQLite) would
   * otherwise hold them up, though nothing needs the state before Parsoid answers. On SQLite the
   * render has begun them by the next turn.
   */
  async startEarly(ctx: RequestContext, domain: string, row: RevisionRow, wikitext?: Part): Promise<void> {
    const mark = requestMark();
    this.render(ctx, domain, row, false, wikitext && Promise.resolve(wikitext)).catch((err) => this.log.debug({ err, domain, title: row.title }, 'an early render failed; the read renders again'));
    await nextTurn();
    await requestsWritten(mark);
  }

  /**
   * Renders a revision unless a render is stored, and resolves once it is stored. `wikitext`: the
   * revision's, where the caller has it from the wiki already (Parsoid is not asked for it).
   */
  async renderAndStore(ctx: RequestContext, domain: string, row: RevisionRow, wikitext?: Part): Promise<void> {
    if (row.text_hidden) return;
    await this.render(ctx, domain, row, false, wikitext && Promise.resolve(wikitext));
    await this.storing.get(renderKey(domain, row.title, row.rev, false));
  }

  /**
   * Renders a stored page's latest revision again (a template it uses changed); a render with the
   * same content keeps its tid. Returns whether the page's answers changed (and were purged);
   * undefined if the page has no stored render to refresh.
   */
  async rerenderLatest(ctx: RequestContext, domain: string, title: string): Promise<boolean | undefined> {
    const newest = await this.revisions.table(domain).newest(ctx, title);
    if (!newest?.latest_tid || newest.deleted || newest.moved_to) return undefined;
    const row = await this.revisions.table(domain).get(ctx, title, newest.latest_rev!);
    if (!row || row.text_hidden) return undefined;
    const render = await this.render(ctx, domain, row, true);
    if (render.tid === newest.latest_tid) return false;
    await this.storing.get(renderKey(domain, title, row.rev, true));
    this.purger.purgeLater(latestPurge(domain, title));
    return true;
  }

  /**
   * Makes sure a revision stored a moment ago (a save) has its exact metadata and a stored render:
   * both are asked of the wiki at once (the wikitext with the metadata, as the wiki stored it
   * after its pre-save transform); resolves once they are stored. Idempotent.
   */
  async finishSaved(ctx: RequestContext, domain: string, title: string, rev: number): Promise<Render> {
    const revs = this.revisions.table(domain);
    const row = await revs.get(ctx, title, rev);
    if (!row) throw notFound(`Revision ${rev} of ${title} is not stored.`, 'revision-not-found');
    // The metadata question asks for the wikitext too: one request to the wiki fewer beside the page bundle.
    const metadata = row.sha1 === null ? this.wikis.of(domain).api.revision(rev, { withText: true }) : undefined;
    const [, page] = await Promise.all([this.render(ctx, domain, row, false, metadata && wikitextIn(metadata, rev)), metadata]);
    await this.storing.get(renderKey(domain, title, rev, false));
    if (page?.revisions?.length) await revs.saveFromApi(ctx, title, page, page.revisions);
    // Storing a render reports failures only to the log: whether it landed is read back.
    const stored = await this.renders.newestOf(ctx, domain, title, rev);
    if (!stored) throw new HttpError(503, 'render-not-stored', `The render of revision ${rev} could not be stored yet.`, { headers: { 'retry-after': '5' } });
    const now = await revs.get(ctx, title, rev);
    if (!now?.tid) await revs.setRenderTid(ctx, title, rev, stored.tid, now?.latest_rev === rev);
    return stored;
  }

  /** A stored render by tid; refused as the revision would be (hidden: 403, page deleted: 404). */
  async renderByTid(ctx: RequestContext, domain: string, title: string, tid: string): Promise<Render> {
    const render = await this.renders.byTid(ctx, domain, title, tid);
    if (!render) throw notFound(`No render ${tid} of ${title}.`, 'render-not-found');
    await this.servableByTid(ctx, domain, title, render.rev, async () => render);
    return render;
  }

  /**
   * One property of a stored render by tid, read alone (see RenderStore.part), refused as
   * `renderByTid` refuses; undefined where the whole render is to be read (`renderByTid`).
   */
  async partByTid(ctx: RequestContext, domain: string, title: string, tid: string, prop: Prop): Promise<StoredPart | undefined> {
    const part = await this.renders.part(ctx, domain, title, undefined, tid, prop);
    if (part) await this.servableByTid(ctx, domain, title, part.render.rev, () => this.renders.byTid(ctx, domain, title, tid));
    return part;
  }

  /**
   * Whether a render of revision `rev` found by its tid may be served: refused as the revision
   * would be (hidden: 403, page deleted: 404). A revision whose page moved throws `RevisionMoved`,
   * its render (`whole`) first copied under the new title, so the redirect to the same URL under
   * that title finds it (a move copies only the revision's newest render).
   */
  private async servableByTid(ctx: RequestContext, domain: string, title: string, rev: number, whole: () => Promise<Render | undefined>): Promise<void> {
    const stored = await this.revisions.table(domain).get(ctx, title, rev);
    let row: RevisionRow | undefined;
    try {
      row = stored && (await this.revisions.checkedWithWiki(ctx, domain, stored));
    } catch (e) {
      if (e instanceof RevisionMoved) {
        const render = await whole();
        if (render) {
          await this.renders.save(ctx, domain, { ...render, title: e.title }).catch((err) => {
            if (!(err instanceof HttpError && err.status === 412)) throw err;
          });
        }
      }
      throw e;
    }
    if (row?.text_hidden) throw forbidden(`The text of revision ${rev} is hidden.`, 'revision-hidden');
  }

  /**
   * One property of a revision's stored render, read alone (see RenderStore.part), by the render
   * its row points to; refused as `renderFor` refuses (hidden: 403). Undefined where `renderFor`
   * reads or makes the whole render.
   */
  async storedPart(ctx: RequestContext, domain: string, row: RevisionRow, prop: Prop): Promise<StoredPart | undefined> {
    if (row.text_hidden) throw forbidden(`The text of revision ${row.rev} is hidden.`, 'revision-hidden');
    return row.tid ? this.renders.part(ctx, domain, row.title, row.rev, row.tid, prop) : undefined;
  }

  /**
   * The newest render of a revision; rendered now (once for all waiting callers) on a miss.
   * `wikitext`: the revision's wikitext where the wiki's Action API is giving it anyway.
   */
  async render(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean, wikitext?: KnownWikitext): Promise<Render> {
    try {
      return await (await this.rendering(ctx, domain, row, force, wikitext, true)).render;
    } catch (e) {
      return this.storedInstead(ctx, domain, row, force, e);
    }
  }

  /**
   * The newest render's page bundle: on a miss, the reader is answered as soon as Parsoid gave it,
   * and the wikitext is asked for only then (at the same time, the two requests share the wiki's
   * cores and the page bundle comes later); the render is stored once it is whole.
   */
  async renderBundle(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean): Promise<BundleRender> {
    try {
      return (await this.rendering(ctx, domain, row, force, undefined, false)).bundle;
    } catch (e) {
      return this.storedInstead(ctx, domain, row, force, e);
    }
  }

  /** The render a property is read from: its page bundle's, or (wikitext) the whole render. */
  async renderFor(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean, prop: Prop): Promise<PropRender> {
    if (prop === 'wikitext') return { prop, render: await this.render(ctx, domain, row, force) };
    return { prop, render: await this.renderBundle(ctx, domain, row, force) };
  }

  /** The revision's stored render, by the tid its row points to or else its newest. */
  private async stored(ctx: RequestContext, domain: string, row: RevisionRow): Promise<Render | undefined> {
    return (row.tid ? await this.renders.byTid(ctx, domain, row.title, row.tid, row.rev) : undefined) ?? (await this.renders.newestOf(ctx, domain, row.title, row.rev));
  }

  /** A forced re-render the wiki cannot answer falls back to what is stored; any other failure stands. */
  private async storedInstead(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean, e: unknown): Promise<Render> {
    const render = force && isUnavailable(e) ? await this.stored(ctx, domain, row) : undefined;
    if (!render) throw e;
    return render;
  }

  /** A stored render, or one being made (`wikitextAtOnce`: its first reader needs the wikitext too). */
  private async rendering(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean, wikitext: KnownWikitext | undefined, wikitextAtOnce: boolean): Promise<Rendering> {
    if (row.text_hidden) throw forbidden(`The text of revision ${row.rev} is hidden.`, 'revision-hidden');
    if (!force) {
      const render = await this.stored(ctx, domain, row);
      if (render) return finished(render);
    }
    // A render another process made while this one waited: the newest, forced or not. Not for a
    // forced render: the one it waited for may have begun before what the force is for (a template
    // edited, a client's no-cache), so it waits its turn and renders anew.
    const madeElsewhere = async () => {
      if (force) return undefined;
      const render = await this.renders.newestOf(ctx, domain, row.title, row.rev);
      return render && finished(render);
    };
    return this.renderOnce(renderKey(domain, row.title, row.rev, force), () =>
      this.renderLeases(domain).once(ctx, String(row.rev), () => this.renderNow(ctx, domain, row, force, wikitext, wikitextAtOnce), madeElsewhere),
    );
  }

  /**
   * Coalesces renders, answering waiters as soon as the render (or its page bundle) exists; the key
   * stays taken until it is stored, so requests arriving meanwhile join it instead of rendering again.
   */
  private renderOnce(key: string, make: () => Promise<Rendering>): Promise<Rendering> {
    return this.flights.runUntil(key, async () => {
      const made = await make();
      const tracked: Promise<void> = made.stored
        .catch((err) => this.log.error({ err, title: made.bundle.title, rev: made.bundle.rev }, 'storing a render failed'))
        .finally(() => {
          if (this.storing.get(key) === tracked) this.storing.delete(key);
        });
      this.storing.set(key, tracked);
      return { value: made, settled: tracked };
    });
  }

  /**
   * What Parsoid makes of a revision: its page bundle, and its wikitext from the Action API where
   * that is giving it anyway (one request fewer to a wiki whose cores the page bundle needs), else
   * from Parsoid: beside the bundle when `wikitextAtOnce`, after it otherwise.
   */
  private fetchParts(domain: string, title: string, rev: number, known: KnownWikitext | undefined, wikitextAtOnce: boolean): Promise<Fetched> {
    const wiki = this.wikis.of(domain);
    return wiki.withMode(async (mode) => {
      if (mode !== 'v3') {
        const { bundle, wikitext } = fromCore(await wiki.parsoid.core(rev));
        return { bundle, wikitext: Promise.resolve(wikitext) };
      }
      const fromParsoid = () => wiki.parsoid.wikitext(title, rev);
      let wikitext = known ? known.then((k) => k ?? fromParsoid(), fromParsoid) : wikitextAtOnce ? fromParsoid() : undefined;
      // Its readers see it fail; a page bundle failing first leaves it unread, which is no error.
      wikitext?.catch(() => {});
      const bundle = await wiki.parsoid.pagebundle(title, rev);
      if (!wikitext) (wikitext = fromParsoid()).catch(() => {});
      return { bundle, wikitext };
    });
  }

  /**
   * Starts asking Parsoid for a revision the caller renders next while its metadata is asked of
   * the wiki (a cold miss by revision id): the render claims the answer if the revision turns out
   * to be this page's and visible.
   */
  fetchEarly(domain: string, title: string, rev: number, wikitext?: KnownWikitext): void {
    this.early.start(domain, title, rev, () => this.fetchParts(domain, title, rev, wikitext, true));
  }

  private async renderNow(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean, known: KnownWikitext | undefined, wikitextAtOnce: boolean): Promise<Rendering> {
    let fetched: Fetched;
    try {
      // Asked for beside the revision's metadata when the caller was about to render it; a forced
      // render asks anew, and waits for the whole render (it may keep the stored one and its tid).
      const early = force ? undefined : this.early.claim(domain, row.title, row.rev);
      fetched = await (early ?? this.fetchParts(domain, row.title, row.rev, force ? undefined : known, wikitextAtOnce || force));
    } catch (e) {
      if (e instanceof HttpError && e.problemType === 'urn:problem:revision-hidden') {
        // Hidden or deleted since it was stored: learn which, and remember it.
        const fresh = await this.revisions.revision(ctx, domain, row.title, row.rev, true);
        if (fresh.text_hidden) throw forbidden(`The text of revision ${row.rev} is hidden.`, 'revision-hidden');
      }
      throw e;
    }
    const { bundle } = fetched;
    const raw: Record<BundleProp, Part> = { html: bundle.html, 'data-parsoid': bundle.dataParsoid ?? UNAVAILABLE, 'data-mw': bundle.dataMw };
    // Compressed when read: what the first readers do not read is compressed after their answers.
    const zipped = compressedOnRead(Object.fromEntries(BUNDLE_PROPS.map((p) => [p, raw[p].body])) as Record<BundleProp, Buffer>);
    const made: BundleRender = {
      title: row.title,
      rev: row.rev,
      tid: newTid(),
      parts: zipped.parts,
      types: Object.fromEntries(BUNDLE_PROPS.map((p) => [p, raw[p].contentType])) as Record<BundleProp, string>,
      redirect: redirectTarget(bundle.html.body.toString('utf8')),
      plain: { html: raw.html.body, dataMw: raw['data-mw'].body },
    };
    // Made whole (its parts compressed, hashed, its wikitext compressed) once the page bundle's readers were answered.
    const whole = afterAnswersOfThisTurn().then(async () => {
      await zipped.settle();
      return this.completed(ctx, domain, row, force, made, raw, fetched.wikitext);
    });
    const render = whole.then((w) => w.render);
    // Its bundle's readers need not wait for it; a failure is reported through `stored`.
    render.catch(() => {});
    // Waiting clients are answered from memory while it is stored: the render first, then the
    // pointers to it, so a crash in between leaves only an unused render. Storing starts once the
    // answer has gone out (see `afterAnswersOfThisTurn`).
    const stored = whole.then(async ({ render, fresh, wikitext }) => {
      if (!fresh) return;
      await afterAnswersOfThisTurn();
      await this.renders.save(ctx, domain, render);
      await this.revisions.stateWritten(domain, row.title);
      const latest = row.latest_rev === row.rev;
      await this.revisions.table(domain).setRenderTid(ctx, row.title, row.rev, render.tid, latest);
      if (latest) await this.latestStored?.made(ctx, domain, render, { html: raw.html.body, dataMw: raw['data-mw'].body, wikitext }, row);
    });
    // Its failure is reported where it is handed over (`renderOnce`); one never handed over (a
    // forced render that failed) is the thrown error's.
    stored.catch(() => {});
    // A forced re-render that changed nothing keeps the stored render and its tid: its readers wait to know.
    if (force) return { bundle: await render, render, stored };
    // Its tid is handed out with the page bundle: a read by tid meanwhile waits for the whole.
    this.renders.completing(domain, made.tid, render);
    return { bundle: made, render, stored };
  }

  /** The whole render once its wikitext has come (or, re-rendered unchanged, the stored one). */
  private async completed(ctx: RequestContext, domain: string, row: RevisionRow, force: boolean, made: BundleRender, raw: Record<BundleProp, Part>, wikitext: Promise<Part>): Promise<{ render: Render; fresh: boolean; wikitext: Buffer }> {
    const parts: Record<Prop, Part> = { ...raw, wikitext: await wikitext };
    const hash = createHash('sha256');
    for (const p of PROPS) hash.update(parts[p].contentType).update('\u0000').update(parts[p].body).update('\u0000');
    const digest = hash.digest('hex');
    const previous = force ? await this.renders.newestOf(ctx, domain, row.title, row.rev) : undefined;
    if (previous?.digest === digest) return { render: previous, fresh: false, wikitext: parts.wikitext.body };
    // Kept in memory (the render cache) as storage has it: compressed, the plain parts left behind.
    const { plain: _plain, ...stored } = made;
    const render: Render = {
      ...stored,
      parts: { ...made.parts, wikitext: await compress(parts.wikitext.body, 'gzip') },
      types: { ...made.types, wikitext: parts.wikitext.contentType },
      digest,
    };
    this.renders.remember(domain, render);
    return { render, fresh: true, wikitext: parts.wikitext.body };
  }
}

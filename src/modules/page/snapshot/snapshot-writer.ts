import fs from 'node:fs';
import path from 'node:path';
import { gunzip, storedGzip } from '../../../util/compression.js';
import { concurrencyLimit } from '../../../util/concurrency-limit.js';
import { HttpError } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import { movedAway, PageMoved, RevisionMoved } from '../model/page-moves.js';
import { deletionsThen, withDeletions } from './deletions-then.js';
import { titlesThen, withTitlesThen, type Listed } from './titles-then.js';
import type { Render } from '../model/render.js';
import type { RevisionRow } from '../model/revision.js';
import type { PageService } from '../read/page-service.js';
import { SnapshotBodies, type PackedBody } from '../tables/snapshot-bodies.js';
import { goneRecord, wikiFacts, type WikiFacts } from '../model/wiki-facts.js';
import { BODY_FORMAT, recordHead, type BodyParts, type RecordMeta } from './record-format.js';
import { inThread, type RecordFormatter } from './record-formatter.js';
import { SnapshotArchive, type ArchiveFile } from './snapshot-archive.js';
import { chunkMetaFile, chunkMetas, writeManifest, type ChunkMeta, type Outcome } from './snapshot-manifest.js';

export type { Outcome } from './snapshot-manifest.js';

/** What a snapshot reads pages from: the revisions known, their renders (made on a miss), the wiki. */
export type SnapshotSources = Pick<PageService, 'renderer' | 'renders' | 'revisions' | 'wiki' | 'facts'>;

export interface SnapshotOptions {
  /** The moment the snapshot shows (ms). */
  at: number;
  /** Only pages changed since this moment (ms), with those deleted since listed: an incremental snapshot. */
  since?: number;
  namespaces: number[];
  /** Only titles that start with this (underscores for spaces). */
  prefix?: string;
  out: string;
  pagesPerChunk: number;
  concurrency: number;
  progress?: (outcome: Outcome) => void;
  /**
   * From what is stored alone, the wiki asked nothing: the pages stored here, each as storage
   * knows it at `at` (kept current by following the wiki's changes). Pages never stored are not
   * written. Otherwise the wiki lists its pages and renders those the store lacks.
   */
  storageOnly?: boolean;
  /** Checked between chunks: true stops (the next run with the same options goes on). */
  stopped?: () => boolean;
  /**
   * Only these titles, instead of every page: a batch's, the pages its day's changes named (their
   * namespace and prefix checked as the others are).
   */
  titles?: string[];
  /**
   * A page gone or hidden at the moment is written as a line without text saying so (Enterprise's
   * `delete` or `visibility-change` event, as a batch carries its day's changes), not left out.
   */
  goneLines?: boolean;
}

export interface SnapshotReport {
  complete: boolean;
  resumed: boolean;
  manifest?: Record<string, unknown>;
  /** Pages whose body was made from their render by this run, and those read as stored (made as the render was stored, or by an earlier run). */
  bodies: { made: number; stored: number };
}

/** A namespace's archive as the manifest lists it. */
type NamespaceArchive = ArchiveFile & { pages: number };

/** A page found at the moment, to be written: its revision row as stored, and its record's other fields. */
interface Found {
  outcome: 'written';
  row: RevisionRow;
  meta: RecordMeta;
}

/**
 * A wiki as it was at one moment, in Wikimedia Enterprise's HTML snapshot layout: per namespace a
 * `{wiki}_namespace_{ns}.tar.gz` of NDJSON chunks (one page a line), and `manifest.json` (the
 * moment, counts, checksums). Each page is the revision current at that moment, from storage,
 * rendered through the wiki first where the store lacks it; hidden text is never written.
 *
 * Resumable and deterministic: the titles of each namespace are listed once and kept in the work
 * folder; each chunk is written into its archive in place (snapshot-archive.ts) and, once written
 * whole, its metadata kept beside the titles; a later run goes on after the last chunk so kept,
 * with fixed times, so a run stopped and resumed writes the same bytes as one that was not.
 * Memory holds a few pages at a time.
 *
 * Fast from storage: a page's record is a few fields read at the moment, then its body (the 2.x
 * HTML and the wikitext, escaped into JSON, deflated: nearly all of its bytes and of the work), the
 * last field. A render's body is made once and stored (tables/snapshot-bodies.ts): as a page's
 * latest render is stored (bodies-on-render.ts), else by the first snapshot that writes it; a
 * snapshot copies it compressed as it is, each page two gzip members, where making it took
 * milliseconds of CPU a long page.
 */
export class SnapshotWriter {
  private readonly bodies: SnapshotBodies;
  private readonly bodyCounts = { made: 0, stored: 0 };

  /** `formatter`: where each page's body is made (worker threads for a whole wiki; see `workerFormatter`). */
  constructor(private readonly service: SnapshotSources, private readonly domain: string, private readonly formatter: RecordFormatter = inThread) {
    this.bodies = new SnapshotBodies(domain, BODY_FORMAT);
  }

  async run(ctx: RequestContext, options: SnapshotOptions): Promise<SnapshotReport> {
    const work = path.join(options.out, '.work');
    fs.mkdirSync(work, { recursive: true });
    const resumed = this.pinOptions(work, options);
    await this.bodies.create(ctx);
    const facts = wikiFacts(await this.service.wiki(this.domain).siteInfo());
    const files: NamespaceArchive[] = [];
    for (const ns of options.namespaces) {
      const file = await this.namespaceArchive(ctx, work, facts, ns, options);
      if (!file) return { complete: false, resumed, bodies: this.bodyCounts };
      files.push(file);
    }
    return { complete: true, resumed, manifest: writeManifest(work, this.domain, facts, options, files), bodies: this.bodyCounts };
  }

  /**
   * One namespace's archive, chunk by chunk, going on after the chunks an earlier run wrote;
   * undefined if the run was stopped first.
   */
  private async namespaceArchive(ctx: RequestContext, work: string, facts: WikiFacts, ns: number, options: SnapshotOptions): Promise<NamespaceArchive | undefined> {
    const file = path.join(options.out, `${facts.id}_namespace_${ns}.tar.gz`);
    // A namespace finished by an earlier run (its archive still there) is not made again.
    const done = path.join(work, `archive-${ns}.json`);
    if (fs.existsSync(done) && fs.existsSync(file)) return JSON.parse(fs.readFileSync(done, 'utf8')) as NamespaceArchive;
    const titles = await this.titlesOf(ctx, work, ns, options);
    const chunks = Math.ceil(titles.length / options.pagesPerChunk);
    const open = (resumeAt?: number) => SnapshotArchive.open(file, (i) => `${facts.id}_namespace_${ns}_${i}.ndjson`, new Date(Math.floor(options.at / 1000) * 1000), resumeAt);
    let written = chunkMetas(work, ns);
    let archive = await open(written.at(-1)?.archiveEnd);
    if (!archive) {
      // The partial archive is gone: its chunks are made again.
      for (let c = 0; c < written.length; c++) fs.rmSync(chunkMetaFile(work, ns, c), { force: true });
      written = [];
      archive = (await open())!;
    }
    try {
      for (let c = written.length; c < chunks; c++) {
        if (options.stopped?.()) return undefined;
        await archive.begin(c);
        const meta = await this.writeChunk(ctx, facts, titles.slice(c * options.pagesPerChunk, (c + 1) * options.pagesPerChunk), archive, options);
        meta.archiveEnd = await archive.end(meta.bytes);
        const metaFile = chunkMetaFile(work, ns, c);
        fs.writeFileSync(`${metaFile}.tmp`, JSON.stringify(meta));
        fs.renameSync(`${metaFile}.tmp`, metaFile);
      }
      const finished = { ...(await archive.finish()), pages: chunkMetas(work, ns).reduce((n, meta) => n + (meta.counts.written ?? 0), 0) };
      fs.writeFileSync(done, JSON.stringify(finished));
      return finished;
    } finally {
      // Stopped or failed: the partial archive stays for the next run (finished: already closed).
      await archive.close();
    }
  }

  /** The options of the snapshot under way in `work`: a run with others there is refused. True if one was under way. */
  private pinOptions(work: string, options: SnapshotOptions): boolean {
    const file = path.join(work, 'options.json');
    const pinned = JSON.stringify({
      domain: this.domain, at: options.at, since: options.since ?? null, namespaces: options.namespaces, prefix: options.prefix ?? null,
      pagesPerChunk: options.pagesPerChunk, storageOnly: options.storageOnly ?? false, goneLines: options.goneLines ?? false,
    });
    if (!fs.existsSync(file)) {
      fs.writeFileSync(file, pinned);
      return false;
    }
    if (fs.readFileSync(file, 'utf8') !== pinned) {
      throw new HttpError(409, 'snapshot-in-progress', `${options.out} holds an unfinished snapshot with other options (${fs.readFileSync(file, 'utf8')}): finish it with the same options, or write to another folder.`);
    }
    return true;
  }

  /**
   * Every title of a namespace the snapshot looks at, sorted: the wiki's pages now, each with its
   * latest revision, and the pages stored here (among them pages deleted since, which existed
   * then); only the stored ones with `storageOnly`. Listed once per snapshot (one line each).
   */
  private async titlesOf(ctx: RequestContext, work: string, ns: number, options: Pick<SnapshotOptions, 'at' | 'prefix' | 'storageOnly' | 'titles'>): Promise<Listed[]> {
    const file = path.join(work, `titles-${ns}.ndjson`);
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Listed);
    const { prefix } = options;
    const wiki = this.service.wiki(this.domain);
    const listed = new Map<string, Listed>();
    if (!options.storageOnly && !options.titles) {
      // allpages takes a prefix without its namespace, spaces for underscores.
      const localPart = async (text: string) => {
        const described = await wiki.describe(text);
        return described.ns === 0 ? described.text : described.text.slice(described.text.indexOf(':') + 1);
      };
      let cont: Record<string, string> | undefined;
      do {
        const page = await wiki.api.listLatest({ gapnamespace: String(ns), gaplimit: 'max', ...(prefix ? { gapprefix: await localPart(prefix) } : {}) }, cont);
        for (const { title, latest } of page.pages) {
          const key = title.replace(/ /g, '_');
          listed.set(key, { title: key, ...(latest ? { latest } : {}) });
        }
        cont = page.cont;
      } while (cont);
    }
    const inScope = (title: string) => !prefix || title.startsWith(prefix);
    // A title without a colon is the main namespace's: no namespace is named without one.
    const nsOf = async (title: string) => (title.includes(':') ? (await wiki.describe(title)).ns : 0);
    if (options.titles) {
      for (const title of options.titles) if (!listed.has(title) && inScope(title) && (await nsOf(title)) === ns) listed.set(title, { title });
    } else {
      let next: string | undefined;
      do {
        const page = await this.service.revisions.table(this.domain).titles(ctx, { limit: 1000, next });
        for (const title of page.titles) {
          if (!listed.has(title) && inScope(title) && (await nsOf(title)) === ns) listed.set(title, { title });
        }
        next = page.next;
      } while (next);
    }
    const moved = options.storageOnly || options.titles
      ? [...listed.values()]
      : withDeletions(withTitlesThen([...listed.values()], await titlesThen(wiki.api, options.at)), await deletionsThen(wiki.api, options.at, ns), inScope);
    const sorted = moved.sort((x, y) => (x.title < y.title ? -1 : x.title > y.title ? 1 : 0));
    fs.writeFileSync(`${file}.tmp`, sorted.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    fs.renameSync(`${file}.tmp`, file);
    return sorted;
  }

  /**
   * One chunk's pages, read `concurrency` at a time and written to its archive entry in title
   * order as each is done: memory holds those few pages, not the chunk (a chunk of long articles
   * is hundreds of MB). Each page's line goes in as gzip members (see `packed`); the metadata
   * answered counts the NDJSON's length.
   */
  private async writeChunk(ctx: RequestContext, facts: WikiFacts, titles: Listed[], archive: SnapshotArchive, options: SnapshotOptions): Promise<ChunkMeta> {
    const meta: ChunkMeta = { bytes: 0, archiveEnd: 0, counts: {}, deleted: [], lacking: [], failed: [] };
    const read = async (entry: Listed) => {
      const own: Pick<ChunkMeta, 'deleted'> = { deleted: [] };
      try {
        return { ...(await this.packed(ctx, facts, entry, options, own)), deleted: own.deleted };
      } catch (e) {
        return { outcome: 'failed' as const, deleted: [], failure: e instanceof Error ? e.message.slice(0, 300) : String(e) };
      }
    };
    // `concurrency` pages read at once; a window of a few times as many begun, so that one slow
    // page holds back the writing, not the reading.
    const limit = concurrencyLimit(options.concurrency);
    const reading: ReturnType<typeof read>[] = [];
    let next = 0;
    for (const entry of titles) {
      while (reading.length < options.concurrency * 4 && next < titles.length) {
        const listed = titles[next++]!;
        reading.push(limit(() => read(listed)));
      }
      const page: Awaited<ReturnType<typeof read>> & { line?: { data: Uint8Array[]; bytes: number }; failure?: string } = await reading.shift()!;
      meta.counts[page.outcome] = (meta.counts[page.outcome] ?? 0) + 1;
      meta.deleted.push(...page.deleted);
      if (page.failure !== undefined) meta.failed.push({ title: entry.title, reason: page.failure });
      if (page.outcome === 'lacking') meta.lacking!.push(entry.title);
      if (page.line !== undefined) {
        meta.bytes += page.line.bytes;
        for (const part of page.line.data) await archive.write(part);
      }
      options.progress?.(page.outcome);
    }
    return meta;
  }

  /**
   * The revision current at `at`, or undefined if the page had none then (not yet created, or
   * moved away). A page deleted since is gone from the wiki's view: the revision stored here that
   * was current then stands for it, unless its text was hidden. With `storageOnly`, storage's
   * word alone: the newest revision stored by then, unless the page was deleted by then.
   */
  private async revisionAt(ctx: RequestContext, title: string, at: number, storageOnly: boolean): Promise<RevisionRow | undefined> {
    const revs = this.service.revisions.table(this.domain);
    if (storageOnly) {
      const row = await revs.currentAt(ctx, title, at, { keep: false });
      const gone = row?.deleted && Date.parse(row.deleted) <= at;
      return row && !gone && !movedAway(row) ? row : undefined;
    }
    try {
      return await this.service.revisions.revisionAt(ctx, this.domain, title, at);
    } catch (e) {
      if (!(e instanceof PageMoved || e instanceof RevisionMoved || (e instanceof HttpError && e.status === 404))) throw e;
      const state = await revs.newest(ctx, title);
      if (!state?.deleted || Date.parse(state.deleted) <= at) return undefined;
      const stored = await revs.currentAt(ctx, title, at, { keep: false });
      return stored && !stored.text_hidden ? stored : undefined;
    }
  }

  /**
   * The revision current at `at` of a listed page: the latest revision the listing named, when
   * it was made by then (the page has not changed since), read from storage without asking the
   * wiki; otherwise (changed since, not stored, not listed) as `revisionAt` finds it.
   */
  private async listedAt(ctx: RequestContext, entry: Listed, at: number, storageOnly: boolean): Promise<RevisionRow | 'hidden' | undefined> {
    const latest = entry.latest;
    if (latest && Date.parse(latest.timestamp) <= at) {
      // Hidden now, if not then: hidden text is never written.
      if (latest.hidden) return 'hidden';
      const stored = await this.service.revisions.table(this.domain).get(ctx, entry.title, latest.rev);
      if (stored && !stored.text_hidden && !stored.deleted && !movedAway(stored)) return stored;
    }
    return this.revisionAt(ctx, entry.title, at, storageOnly);
  }

  /**
   * What a page is at `options.at` (with `since`: whether it changed): to be written (its revision
   * then and its record's fields), or what became of it.
   */
  private async found(ctx: RequestContext, facts: WikiFacts, entry: Listed, options: Pick<SnapshotOptions, 'at' | 'since' | 'storageOnly'>, meta: Pick<ChunkMeta, 'deleted'>): Promise<Found | { outcome: Exclude<Outcome, 'written'> }> {
    const { title, latest } = entry;
    const storageOnly = options.storageOnly ?? false;
    // A title its page left after the moment: that page's line, read under its title now, stands for it.
    if (entry.movedAway) return { outcome: 'absent' };
    // Unchanged since `since` by the listing's word (still visible, not deleted at the moment): nothing to read.
    if (options.since !== undefined && latest && !latest.hidden && entry.deletedThen === undefined && Date.parse(latest.timestamp) <= options.since) return { outcome: 'unchanged' };
    const row = await this.listedAt(ctx, entry, options.at, storageOnly);
    const before = options.since === undefined ? undefined : await this.revisionAt(ctx, title, options.since, storageOnly);
    // A page a mirror holds from `since` that is gone or hidden now: listed for it to drop.
    const gone = (outcome: 'absent' | 'hidden') => {
      if (before && !before.text_hidden) meta.deleted.push(title);
      return { outcome };
    };
    // Neither listed nor stored, deleted since: whether and how it was there then is not known here.
    if (!row && entry.deletedSince) return { outcome: 'lacking' };
    // Deleted then, restored since: a revision from before the deletion was not there then.
    const deletedThen = entry.deletedThen !== undefined && row && row !== 'hidden' && Date.parse(row.timestamp ?? '') < Date.parse(entry.deletedThen);
    if (!row || deletedThen) return gone('absent');
    if (row === 'hidden' || row.text_hidden) return gone('hidden');
    if (options.since !== undefined && before?.rev === row.rev) return { outcome: 'unchanged' };
    const wiki = this.service.wiki(this.domain);
    const described = await wiki.describe(title);
    const named = entry.titleThen === undefined ? { row, text: described.text } : { row: { ...row, title: entry.titleThen }, text: (await wiki.describe(entry.titleThen)).text };
    // What the wiki says of the page (asked with other pages' in batches; from storage alone, as stored).
    const page = await this.service.facts.of(ctx, this.domain, row, { ask: !storageOnly });
    return { outcome: 'written', row, meta: { ...named, ns: described.ns, facts, eventTime: new Date(options.at).toISOString(), ...(page ? { page } : {}) } };
  }

  /** The render a page's line is made of: stored, or (unless `storageOnly`) made by the wiki now; 'hidden' if the wiki says so. */
  private async renderOf(ctx: RequestContext, row: RevisionRow, storageOnly: boolean): Promise<Render | 'hidden'> {
    let render;
    try {
      render = storageOnly ? await this.service.renders.byTid(ctx, this.domain, row.title, row.tid ?? '', row.rev, { keep: false }) : await this.service.renderer.render(ctx, this.domain, row, false);
    } catch (e) {
      if (e instanceof HttpError && e.status === 403) return 'hidden';
      throw e;
    }
    if (!render) throw new HttpError(404, 'render-not-stored', `No render of revision ${row.rev} is stored.`);
    return render;
  }

  /**
   * The body of a render not found with a body: made as it was stored if the wiki rendered it just
   * now as the page's latest (bodies-on-render.ts), else made here from its parts and stored.
   */
  private async bodyOf(ctx: RequestContext, render: Render, storageOnly: boolean): Promise<PackedBody> {
    if (!storageOnly) {
      await this.service.renderer.whenStored(this.domain, render.title, render.rev);
      const stored = await this.bodies.get(ctx, render.title, render.rev, render.tid);
      if (stored) {
        this.bodyCounts.stored++;
        return stored;
      }
    }
    const body = await this.formatter.pack(partsOf(render));
    this.bodyCounts.made++;
    // Kept for the next snapshot; a failure to keep it costs that snapshot the making, not this one its page.
    await this.bodies.put(ctx, render.title, render.rev, render.tid, body).catch(() => undefined);
    return body;
  }

  /**
   * One page's line at `options.at` (with `since`: only if it changed), or what became of it: its
   * body inflated as stored, else made from its render.
   */
  async page(ctx: RequestContext, facts: WikiFacts, entry: Listed, options: Pick<SnapshotOptions, 'at' | 'since' | 'storageOnly'>, meta: Pick<ChunkMeta, 'deleted'> = { deleted: [] }): Promise<{ outcome: Outcome; line?: string }> {
    const found = await this.found(ctx, facts, entry, options, meta);
    if (found.outcome !== 'written') return found;
    const { row } = found;
    const body = row.tid ? await this.bodies.get(ctx, row.title, row.rev, row.tid) : undefined;
    if (body) return { outcome: 'written', line: recordHead(found.meta, body.wikitextBytes, body.render) + (await gunzip(body.gz)).toString('utf8') };
    const render = await this.renderOf(ctx, found.row, options.storageOnly ?? false);
    if (render === 'hidden') return { outcome: 'hidden' };
    return { outcome: 'written', line: await this.formatter.format({ ...found.meta, ...partsOf(render) }) };
  }

  /**
   * One page's line as a chunk holds it: two gzip members, the record's JSON up to its body (its
   * last field) and the rest (as stored, or made from the render and stored); `bytes` uncompressed.
   * On-demand sends the same members (enterprise/enterprise-reads.ts).
   */
  async packed(ctx: RequestContext, facts: WikiFacts, entry: Listed, options: Pick<SnapshotOptions, 'at' | 'since' | 'storageOnly' | 'goneLines'>, meta: Pick<ChunkMeta, 'deleted'>): Promise<{ outcome: Outcome; line?: { data: Uint8Array[]; bytes: number } }> {
    const found = await this.found(ctx, facts, entry, options, meta);
    if (found.outcome === 'absent' || found.outcome === 'hidden') return options.goneLines ? { ...found, line: await this.goneLine(facts, entry.title, found.outcome, options.at) } : found;
    if (found.outcome !== 'written') return found;
    const { row, meta: fields } = found;
    let body: PackedBody | undefined = row.tid ? await this.bodies.get(ctx, row.title, row.rev, row.tid) : undefined;
    if (body) this.bodyCounts.stored++;
    else {
      const render = await this.renderOf(ctx, row, options.storageOnly ?? false);
      if (render === 'hidden') return { outcome: 'hidden' };
      body = await this.bodyOf(ctx, render, options.storageOnly ?? false);
    }
    // The fields read at the moment, a few hundred bytes, stored as they are: deflating them would cost more time than it saves room.
    const head = Buffer.from(recordHead(fields, body.wikitextBytes, body.render));
    return { outcome: 'written', line: { data: [storedGzip(head), body.gz], bytes: head.length + body.bytes } };
  }

  /** A page gone (`absent`) or hidden at `at`, as a line without text (`goneLines`). */
  private async goneLine(facts: WikiFacts, title: string, outcome: 'absent' | 'hidden', at: number): Promise<{ data: Uint8Array[]; bytes: number }> {
    const described = await this.service.wiki(this.domain).describe(title);
    const event = { type: outcome === 'absent' ? 'delete' : 'visibility-change', date_created: new Date(at).toISOString() };
    const line = Buffer.from(`${JSON.stringify(goneRecord(described.text, described.ns, facts, event))}\n`);
    return { data: [storedGzip(line)], bytes: line.length };
  }
}

/** The parts of a render a body is made of. */
const partsOf = (render: Render): BodyParts => ({ html: render.parts.html, dataMw: render.parts['data-mw'], wikitext: render.parts.wikitext });

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import PQueue from 'p-queue';
import tar from 'tar-stream';
import { HttpError } from '../../../errors.js';
import type { RequestContext } from '../../../router/types.js';
import { gunzip } from '../../../compression.js';
import type { Html2Cache } from '../model/html-versions.js';
import { PageMoved, RevisionMoved } from '../model/page-moves.js';
import type { RevisionRow } from '../model/revision.js';
import type { PageService } from '../read/page-service.js';
import { enterpriseRecord, wikiFacts, type WikiFacts } from './enterprise.js';

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
  /** Checked between chunks: true stops (the next run with the same options goes on). */
  stopped?: () => boolean;
}

/** What became of one title: written, did not exist at the time, hidden, unchanged since `since`, or failed. */
export type Outcome = 'written' | 'absent' | 'hidden' | 'unchanged' | 'failed';

interface ChunkMeta {
  counts: Partial<Record<Outcome, number>>;
  deleted: string[];
  failed: { title: string; reason: string }[];
}

export interface SnapshotReport {
  complete: boolean;
  resumed: boolean;
  manifest?: Record<string, unknown>;
}

const VERSION = '0.1.0';

const sha256 = (file: string) => new Promise<string>((resolve, reject) => {
  const hash = createHash('sha256');
  fs.createReadStream(file).on('data', (d) => hash.update(d)).on('end', () => resolve(hash.digest('hex'))).on('error', reject);
});

/**
 * A wiki as it was at one moment, in Wikimedia Enterprise's HTML snapshot layout: per namespace a
 * `{wiki}_namespace_{ns}.tar.gz` of NDJSON chunks (one page a line), and `manifest.json` (the
 * moment, counts, checksums). Each page is the revision current at that moment, from storage,
 * rendered through the wiki first where the store lacks it; hidden text is never written.
 *
 * Resumable and deterministic: the titles of each namespace are listed once and kept in the work
 * folder, each chunk is written whole (a temporary file renamed) and skipped when a later run
 * finds it, and the archives are made from the chunks with fixed times, so a run stopped and
 * resumed writes the same bytes as one that was not. Memory holds one chunk of pages at a time.
 */
export class SnapshotWriter {
  constructor(private readonly service: PageService, private readonly html2: Html2Cache, private readonly domain: string) {}

  async run(ctx: RequestContext, options: SnapshotOptions): Promise<SnapshotReport> {
    const work = path.join(options.out, '.work');
    fs.mkdirSync(work, { recursive: true });
    const resumed = this.pinOptions(work, options);
    const facts = wikiFacts(await this.service.wiki(this.domain).siteInfo());
    for (const ns of options.namespaces) {
      const titles = await this.titlesOf(ctx, work, ns, options.prefix);
      const chunks = Math.ceil(titles.length / options.pagesPerChunk);
      for (let c = 0; c < chunks; c++) {
        if (options.stopped?.()) return { complete: false, resumed };
        const file = path.join(work, `chunk-${ns}-${c}.ndjson`);
        if (fs.existsSync(file)) continue;
        await this.writeChunk(ctx, facts, titles.slice(c * options.pagesPerChunk, (c + 1) * options.pagesPerChunk), file, options);
      }
    }
    return { complete: true, resumed, manifest: await this.pack(work, facts, options) };
  }

  /** The options of the snapshot under way in `work`: a run with others there is refused. True if one was under way. */
  private pinOptions(work: string, options: SnapshotOptions): boolean {
    const file = path.join(work, 'options.json');
    const pinned = JSON.stringify({ domain: this.domain, at: options.at, since: options.since ?? null, namespaces: options.namespaces, prefix: options.prefix ?? null, pagesPerChunk: options.pagesPerChunk });
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
   * Every title of a namespace the snapshot looks at, sorted: the wiki's pages now and the pages
   * stored here (among them pages deleted since, which existed then). Listed once per snapshot.
   */
  private async titlesOf(ctx: RequestContext, work: string, ns: number, prefix: string | undefined): Promise<string[]> {
    const file = path.join(work, `titles-${ns}.txt`);
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const wiki = this.service.wiki(this.domain);
    // allpages takes a prefix without its namespace, spaces for underscores.
    const localPart = async (text: string) => {
      const described = await wiki.describe(text);
      return described.ns === 0 ? described.text : described.text.slice(described.text.indexOf(':') + 1);
    };
    const titles = new Set<string>();
    let cont: Record<string, string> | undefined;
    do {
      const listed = await wiki.api.listPages('allpages', { gapnamespace: String(ns), gaplimit: 'max', ...(prefix ? { gapprefix: await localPart(prefix) } : {}) }, cont);
      for (const page of listed.pages) titles.add(page.title.replace(/ /g, '_'));
      cont = listed.cont;
    } while (cont);
    let next: string | undefined;
    do {
      const page = await this.service.revisions.table(this.domain).list(ctx, { limit: 1000, next });
      for (const row of page.items) {
        const title = row.title as string;
        if (!titles.has(title) && (!prefix || title.startsWith(prefix)) && (await wiki.describe(title)).ns === ns) titles.add(title);
      }
      next = page.next;
    } while (next);
    const sorted = [...titles].sort();
    fs.writeFileSync(`${file}.tmp`, sorted.join('\n') + '\n');
    fs.renameSync(`${file}.tmp`, file);
    return sorted;
  }

  private async writeChunk(ctx: RequestContext, facts: WikiFacts, titles: string[], file: string, options: SnapshotOptions): Promise<void> {
    const queue = new PQueue({ concurrency: options.concurrency });
    const meta: ChunkMeta = { counts: {}, deleted: [], failed: [] };
    const lines = await Promise.all(titles.map((title) => queue.add(async () => {
      let outcome: Outcome;
      let line: string | undefined;
      try {
        ({ outcome, line } = await this.page(ctx, facts, title, options, meta));
      } catch (e) {
        outcome = 'failed';
        meta.failed.push({ title, reason: e instanceof Error ? e.message.slice(0, 300) : String(e) });
      }
      meta.counts[outcome] = (meta.counts[outcome] ?? 0) + 1;
      options.progress?.(outcome);
      return line;
    })));
    fs.writeFileSync(`${file}.meta.json`, JSON.stringify(meta));
    fs.writeFileSync(`${file}.tmp`, lines.filter((l) => l !== undefined).join(''));
    fs.renameSync(`${file}.tmp`, file);
  }

  /**
   * The revision current at `at`, or undefined if the page had none then (not yet created, or
   * moved away). A page deleted since is gone from the wiki's view: the revision stored here that
   * was current then stands for it, unless its text was hidden.
   */
  private async revisionAt(ctx: RequestContext, title: string, at: number): Promise<RevisionRow | undefined> {
    try {
      return await this.service.revisions.revisionAt(ctx, this.domain, title, at);
    } catch (e) {
      if (!(e instanceof PageMoved || e instanceof RevisionMoved || (e instanceof HttpError && e.status === 404))) throw e;
      const revs = this.service.revisions.table(this.domain);
      const state = await revs.newest(ctx, title);
      if (!state?.deleted || Date.parse(state.deleted) <= at) return undefined;
      const stored = await revs.currentAt(ctx, title, at);
      return stored && !stored.text_hidden ? stored : undefined;
    }
  }

  /** One page's line at `options.at` (with `since`: only if it changed), or what became of it. */
  async page(ctx: RequestContext, facts: WikiFacts, title: string, options: Pick<SnapshotOptions, 'at' | 'since'>, meta: Pick<ChunkMeta, 'deleted'> = { deleted: [] }): Promise<{ outcome: Outcome; line?: string }> {
    const row = await this.revisionAt(ctx, title, options.at);
    const before = options.since === undefined ? undefined : await this.revisionAt(ctx, title, options.since);
    if (!row) {
      if (before) meta.deleted.push(title);
      return { outcome: 'absent' };
    }
    if (row.text_hidden) return { outcome: 'hidden' };
    if (options.since !== undefined && before?.rev === row.rev) return { outcome: 'unchanged' };
    let render;
    try {
      render = await this.service.renderer.render(ctx, this.domain, row, false);
    } catch (e) {
      if (e instanceof HttpError && e.status === 403) return { outcome: 'hidden' };
      throw e;
    }
    const [html, wikitext, described] = await Promise.all([
      this.html2.of(this.domain, render).then(gunzip), gunzip(render.parts.wikitext), this.service.wiki(this.domain).describe(title),
    ]);
    const record = enterpriseRecord(row, described.text, described.ns, facts, html.toString('utf8'), wikitext.toString('utf8'), new Date(options.at).toISOString());
    return { outcome: 'written', line: `${JSON.stringify(record)}\n` };
  }

  /** The archives and the manifest, made from the chunks (the same chunks give the same bytes). */
  private async pack(work: string, facts: WikiFacts, options: SnapshotOptions): Promise<Record<string, unknown>> {
    const files: { name: string; bytes: number; sha256: string; pages: number }[] = [];
    const counts: Partial<Record<Outcome, number>> = {};
    const deleted: string[] = [];
    const failed: ChunkMeta['failed'] = [];
    const mtime = new Date(Math.floor(options.at / 1000) * 1000);
    for (const ns of options.namespaces) {
      const chunks = fs.readdirSync(work).filter((f) => new RegExp(`^chunk-${ns}-\\d+\\.ndjson$`).test(f)).sort((a, b) => Number(a.split('-')[2]!.split('.')[0]) - Number(b.split('-')[2]!.split('.')[0]));
      const name = `${facts.id}_namespace_${ns}.tar.gz`;
      const archive = path.join(options.out, name);
      const pack = tar.pack();
      const written = pipeline(pack, createGzip(), fs.createWriteStream(`${archive}.tmp`));
      let pages = 0;
      for (const [i, chunk] of chunks.entries()) {
        const body = fs.readFileSync(path.join(work, chunk));
        const meta = JSON.parse(fs.readFileSync(path.join(work, `${chunk}.meta.json`), 'utf8')) as ChunkMeta;
        for (const [k, n] of Object.entries(meta.counts)) counts[k as Outcome] = (counts[k as Outcome] ?? 0) + n;
        deleted.push(...meta.deleted);
        failed.push(...meta.failed);
        pages += meta.counts.written ?? 0;
        await new Promise<void>((resolve, reject) => pack.entry({ name: `${facts.id}_namespace_${ns}_${i}.ndjson`, size: body.length, mtime, mode: 0o644, uid: 0, gid: 0 }, body, (err) => (err ? reject(err) : resolve())));
      }
      pack.finalize();
      await written;
      fs.renameSync(`${archive}.tmp`, archive);
      files.push({ name, bytes: fs.statSync(archive).size, sha256: await sha256(archive), pages });
    }
    const manifest = {
      domain: this.domain, wiki: facts.id, date_modified: new Date(options.at).toISOString(),
      ...(options.since !== undefined ? { since: new Date(options.since).toISOString(), deleted } : {}),
      namespaces: options.namespaces, counts, failed, files,
      generator: { name: 'wikistore', version: VERSION },
    };
    fs.writeFileSync(path.join(options.out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    return manifest;
  }
}

import { LRUCache } from 'lru-cache';
import { HttpError } from '../../../util/errors.js';
import type { Reuse } from '../../../router/types.js';
import type { Wiki } from '../../../upstream/wiki.js';
import type { Render, RenderHead } from '../model/render.js';
import type { RevisionRow } from '../model/revision.js';
import { TitleCache } from '../model/title-cache.js';
import { FrequencySketch } from '../../../util/frequency-sketch.js';

export interface PageCacheOptions {
  /** How long a page's stored state may be served from memory (other processes' writes). */
  rowTtlMs: number;
  /** Bytes of renders kept (they are immutable by tid). */
  renderBytes: number;
  /** How long the wiki's "no such page / revision" is remembered (0: not at all). */
  missTtlMs: number;
  /** Bytes of normalised titles kept (keys are client text). */
  titleBytes?: number;
  /**
   * Whether a wiki shares the render cache with many others (one of a farm's): it may then hold
   * one eighth of it at most, so one wiki's burst of cold reads cannot evict every other wiki's
   * hot pages.
   */
  capped?: (domain: string) => boolean;
  /** Told of each render sought (hit or not) and each offered to the cache (kept or not): the metrics. */
  counts?: RenderCacheCounts;
}

/** What the render cache reports of itself. */
export interface RenderCacheCounts {
  sought(hit: boolean): void;
  offered(kept: boolean): void;
}

/** The part of the render cache one wiki of a farm may hold. */
export const FARM_WIKI_RENDER_SHARE = 1 / 8;

/**
 * How long an answer made from a page's state may be sent again without asking the module, at most
 * (see http/answer-memo.ts): this process's writes to the page end it at once, and others' are
 * seen after `rowTtlMs` and this. Short, so the checks a read is due (the wiki asked again once
 * the latest revision's check is old) are put off by no more.
 */
const REUSE_MS = 1000;

/** Makes the `Reuse` of an answer from a page's state as it was before it was read (see `reuseOfPage`). */
export type PageReuse = (stillValid: () => boolean, onReuse: () => void) => Reuse;

/**
 * The `Reuse` of an answer made from a page's stored content: none while the wiki is not answering
 * (the answer then says so), and only until it is found not answering or `alsoValid` fails.
 */
export function contentReuse(make: PageReuse, wiki: Wiki, onReuse: () => void, alsoValid: () => boolean = () => true): Reuse | undefined {
  return wiki.circuit.isOpen ? undefined : make(() => !wiki.circuit.isOpen && alsoValid(), onReuse);
}

/**
 * Renders whose recent uses are counted (the frequency sketch's width): as many as the renders a
 * read keeps on second sight are remembered among (render-store.ts), several times what 32 MB holds.
 */
const RENDER_USES_WIDTH = 8192;

const sizeOfRender = (r: Render) => Math.max(1, r.parts.html.length + r.parts['data-parsoid'].length + r.parts['data-mw'].length + r.parts.wikitext.length);

/**
 * Everything the page module keeps in memory, and the rules that keep it right:
 * - page state (revision rows) per domain and title: dropped as a whole by any write of this
 *   process to the page, and a read that raced a write is not kept; others' writes are seen after
 *   `rowTtlMs`;
 * - renders by tid: immutable, so never invalidated, only evicted by size;
 * - response headers per render: built once, live as long as the render object;
 * - the wiki's misses: remembered `missTtlMs`, forgotten as soon as the page is seen to exist;
 * - normalised titles: pure given the wiki's rules, bounded in bytes.
 */
export class PageCaches {
  private readonly rows = new Map<string, TitleCache<RevisionRow | undefined>>();
  private readonly renders: LRUCache<string, Render>;
  /** Recent uses of renders by tid, kept or not: what a render read from storage is admitted by (`wouldKeepRender`). */
  private readonly renderUses = new FrequencySketch(RENDER_USES_WIDTH, 10 * RENDER_USES_WIDTH);
  /** Of each capped wiki: its renders' keys, oldest kept first, and their bytes. */
  private readonly shares = new Map<string, { keys: Set<string>; bytes: number }>();
  private readonly headers = new WeakMap<RenderHead, Map<string, Readonly<Record<string, string>>>>();
  private readonly misses: LRUCache<string, HttpError> | undefined;
  private readonly titles: LRUCache<string, string>;

  constructor(private readonly options: PageCacheOptions) {
    this.renders = new LRUCache({
      maxSize: Math.max(1, options.renderBytes),
      sizeCalculation: sizeOfRender,
      dispose: (render, key) => this.released(key, render),
    });
    if (options.missTtlMs > 0) {
      this.misses = new LRUCache({ ttl: options.missTtlMs, maxSize: 4 * 1024 * 1024, sizeCalculation: (_e, key) => 2 * key.length + 256 });
    }
    this.titles = new LRUCache({ maxSize: options.titleBytes ?? 4 * 1024 * 1024, sizeCalculation: (value, key) => 2 * (key.length + value.length) + 64 });
  }

  /** The page-state cache of one domain. */
  rowsOf(domain: string): TitleCache<RevisionRow | undefined> {
    let cache = this.rows.get(domain);
    if (!cache) this.rows.set(domain, (cache = new TitleCache(this.options.rowTtlMs)));
    return cache;
  }

  /**
   * Taken before a page's state is read: the `Reuse` of an answer made from what is read next,
   * valid while the page is not written by this process (`stillValid` adds the handler's own
   * conditions) and for a second at most.
   */
  reuseOfPage(domain: string, title: string): PageReuse {
    const rows = this.rowsOf(domain);
    const gen = rows.generation(title);
    const until = Date.now() + Math.min(REUSE_MS, this.options.rowTtlMs);
    return (stillValid, onReuse) => ({ until, valid: () => rows.unchangedSince(title, gen) && stillValid(), onReuse });
  }

  render(domain: string, tid: string): Render | undefined {
    return this.renders.get(`${domain}\u0000${tid}`);
  }

  /** Counts a use of the render `tid`, found in memory (`hit`) or read from storage. */
  noteRenderUse(domain: string, tid: string, hit: boolean): void {
    this.renderUses.increment(`${domain}\u0000${tid}`);
    this.options.counts?.sought(hit);
  }

  /** A render read from storage, offered to the cache: kept if `wouldKeepRender`. */
  offerRender(domain: string, render: Render): void {
    const kept = this.wouldKeepRender(domain, render.tid);
    if (kept) this.rememberRender(domain, render);
    this.options.counts?.offered(kept);
  }

  /**
   * Whether a render read from storage is worth keeping: while the cache has room, yes; once it is
   * full, only if the render was used more often lately than the one it would push out (TinyLFU's
   * admission). Reads spread over more renders than the cache holds then keep the renders it has,
   * where each read pushed out one that would be read again, to be pushed out itself unread.
   */
  wouldKeepRender(domain: string, tid: string): boolean {
    const { size, calculatedSize, maxSize } = this.renders;
    if (size === 0 || calculatedSize + calculatedSize / size <= maxSize) return true;
    const victim = this.renders.rkeys().next().value;
    return victim === undefined || this.renderUses.frequency(`${domain}\u0000${tid}`) > this.renderUses.frequency(victim);
  }

  rememberRender(domain: string, render: Render): void {
    const key = `${domain}\u0000${render.tid}`;
    this.renders.set(key, render);
    if (!this.options.capped?.(domain) || !this.renders.has(key)) return;
    let share = this.shares.get(domain);
    if (!share) this.shares.set(domain, (share = { keys: new Set(), bytes: 0 }));
    if (share.keys.has(key)) return;
    share.keys.add(key);
    share.bytes += sizeOfRender(render);
    // Over its share: the wiki's own oldest renders go first, never another wiki's.
    const most = this.options.renderBytes * FARM_WIKI_RENDER_SHARE;
    for (const oldest of share.keys) {
      if (share.bytes <= most || oldest === key) break;
      this.renders.delete(oldest);
    }
  }

  /** A render left the cache (evicted, replaced or dropped): its wiki's share shrinks. */
  private released(key: string, render: Render): void {
    const domain = key.slice(0, key.indexOf('\u0000'));
    const share = this.shares.get(domain);
    if (!share?.keys.delete(key)) return;
    share.bytes -= sizeOfRender(render);
    if (share.keys.size === 0) this.shares.delete(domain);
  }

  /** The response headers of `render` under `key`, built on first use; shared by every answer of it, so frozen. */
  headersFor(render: RenderHead, key: string, build: () => Record<string, string>): Readonly<Record<string, string>> {
    let perRender = this.headers.get(render);
    if (!perRender) this.headers.set(render, (perRender = new Map()));
    let headers = perRender.get(key);
    if (!headers) perRender.set(key, (headers = Object.freeze(build())));
    return headers;
  }

  /** A normalised title, computed by `normalize` once; errors (invalid titles) are not kept. */
  async title(domain: string, text: string, normalize: () => Promise<string>): Promise<string> {
    const key = `${domain}\u0000${text}`;
    const hit = this.titles.get(key);
    if (hit !== undefined) return hit;
    const title = await normalize();
    this.titles.set(key, title);
    return title;
  }

  /** Bytes the title cache holds (bounded by `titleBytes`). */
  get titleBytes(): number {
    return this.titles.calculatedSize;
  }

  /** Asks the wiki unless it said "not found" for `key` moments ago; a 404 it answers is remembered. */
  async unlessMissing<T>(key: string, force: boolean, ask: () => Promise<T>): Promise<T> {
    const known = force ? undefined : this.misses?.get(key);
    if (known) throw known;
    try {
      return await ask();
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) this.misses?.set(key, e);
      throw e;
    }
  }

  forgetMiss(key: string): void {
    this.misses?.delete(key);
  }
}

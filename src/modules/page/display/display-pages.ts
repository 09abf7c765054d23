import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { badRequest } from '../../../util/errors.js';
import { workGate } from '../../../util/concurrency-limit.js';
import { SingleFlight } from '../model/single-flight.js';
import type { RequestContext } from '../../../router/types.js';
import type { LinkTargetState } from '../../../upstream/action-api.js';
import type { BundleRender } from '../model/render.js';
import type { DisplayOptions } from './display-pass.js';
import type { LinkStates } from './link-states.js';
import { displayHtml, type DisplayImages } from './pipeline.js';
import { gunzip, gzip } from '../../../util/compression.js';

/** The query options of a display URL; any other is a 400 naming it. */
const OPTIONS = ['sectionedit', 'toc', 'stubthreshold'] as const;
const MAX_STUB_THRESHOLD = 1_000_000_000;

function flag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw badRequest(`${name} is true or false.`, 'invalid-display-option');
}

/** The reader's options from a display URL's query. */
export function displayOptions(query: URLSearchParams): DisplayOptions {
  const unknown = [...query.keys()].filter((k) => !(OPTIONS as readonly string[]).includes(k));
  if (unknown.length) throw badRequest(`Unknown display option${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')} (known: ${OPTIONS.join(', ')}).`, 'unknown-display-option');
  const stub = query.get('stubthreshold');
  if (stub !== null && !(/^\d{1,10}$/.test(stub) && Number(stub) <= MAX_STUB_THRESHOLD)) throw badRequest('stubthreshold is a number of bytes.', 'invalid-display-option');
  return { sectionEdit: flag(query, 'sectionedit'), toc: flag(query, 'toc'), stubThreshold: Number(stub ?? 0) };
}

/** The digest of the link states a display was made with: the same digest, the same HTML. */
function digestOf(targets: string[], states: ReadonlyMap<string, LinkTargetState>, stubThreshold: number, images: DisplayImages): string {
  const hash = createHash('sha1').update(`${images.badImages.version}\u0000${images.noviewerImages.version}\u0000${images.pageImage ?? ''}\u0000`);
  for (const t of targets) {
    const s = states.get(t);
    hash.update(t).update(s ? `${+s.exists}${+s.redirect}${+s.disambiguation}${stubThreshold > 0 ? `:${s.length}` : ''}` : '?').update('\u0000');
  }
  return hash.digest('base64url').slice(0, 16);
}

/**
 * Displays made at once by this process, and waiting to be. A long article's display holds its
 * HTML's tree and the HTML made from it (some 10 MB for an article of 800 KB) across the reads of
 * its links' states: sixty asked at once, with options no cache had, ended a process with a 128 MB
 * heap. Past the waiting ones, a 503 to ask again.
 */
const MAKING = 4;
const MAKING_WAITING = 256;

export interface DisplayAnswer {
  /** Gzipped HTML. */
  body: Buffer;
  /** Which link states it shows (part of its ETag). */
  digest: string;
}

interface Cached extends DisplayAnswer {
  key: string;
  targets: string[];
  checked: number;
}

/**
 * The display HTML of renders (pipeline.ts), kept in memory per render and options: served again
 * as long as the states of its links (and the image lists, the page image) are what it was made with, re-checked after `recheckMs`
 * (states other processes learned are seen by then) and at once when this process learns that a
 * link target changed (`forget`).
 */
export class DisplayPages {
  private readonly cache: LRUCache<string, Cached>;
  private readonly keysOfPage = new Map<string, Set<string>>();
  /** Requests for the same display while it is made wait for that one. */
  private readonly making = new SingleFlight();
  private readonly turn = workGate(MAKING, MAKING_WAITING, 'display-busy', 'displays');

  constructor(
    private readonly linkStates: LinkStates,
    private readonly images: (domain: string, title: string) => Promise<DisplayImages>,
    cacheBytes: number,
    private readonly recheckMs: number,
  ) {
    this.cache = new LRUCache({
      maxSize: Math.max(1, cacheBytes),
      sizeCalculation: (v, k) => v.body.length + k.length * 2 + v.targets.length * 64 + 256,
      dispose: (_v, key) => {
        const page = key.slice(0, key.lastIndexOf('\u0001'));
        this.keysOfPage.get(page)?.delete(key);
      },
    });
  }

  /** The display HTML of `render`; `latest`: its links are recorded as the page's current links. */
  async of(ctx: RequestContext, domain: string, render: BundleRender, options: DisplayOptions, latest: boolean): Promise<DisplayAnswer> {
    const page = `${domain}\u0000${render.title}`;
    const key = `${page}\u0001${render.tid}\u0000${+options.sectionEdit}${+options.toc}${options.stubThreshold}`;
    const cached = this.cache.get(key);
    if (cached && Date.now() - cached.checked <= this.recheckMs) return cached;
    const images = await this.images(domain, render.title);
    if (cached) {
      const states = await this.linkStates.of(ctx, domain, cached.targets);
      if (digestOf(cached.targets, states, options.stubThreshold, images) === cached.digest) {
        cached.checked = Date.now();
        return cached;
      }
    }
    const answer = await this.making.run(key, () => this.turn(domain, () => this.make(ctx, domain, render, options, latest, key, images)));
    this.cache.set(key, answer);
    let keys = this.keysOfPage.get(page);
    if (!keys) this.keysOfPage.set(page, (keys = new Set()));
    keys.add(key);
    return answer;
  }

  private async make(ctx: RequestContext, domain: string, render: BundleRender, options: DisplayOptions, latest: boolean, key: string, images: DisplayImages): Promise<Cached> {
    const html = (await gunzip(render.parts.html)).toString('utf8');
    const made = await displayHtml(render.title, html, options, (targets) => this.linkStates.of(ctx, domain, targets), images);
    if (latest) await this.linkStates.record(ctx, domain, render.title, render.tid, made.targets);
    return { key, body: await gzip(made.html, { level: 6 }), digest: digestOf(made.targets, made.states, options.stubThreshold, images), targets: made.targets, checked: Date.now() };
  }

  /**
   * Whether `answer` is still what `of` would give without a look at its links: kept, not forgotten
   * (a link target or an image list changed) and checked less than `recheckMs` ago.
   */
  isCurrent(answer: DisplayAnswer): boolean {
    const cached = answer as Cached;
    return this.cache.peek(cached.key) === cached && Date.now() - cached.checked <= this.recheckMs;
  }

  /** Forgets every display (an image list changed: any page may show an image it names). */
  forgetAll(): void {
    this.cache.clear();
    this.keysOfPage.clear();
  }

  /** Forgets the displays of a page (a page it links to changed). */
  forget(domain: string, title: string): void {
    const page = `${domain}\u0000${title}`;
    for (const key of this.keysOfPage.get(page) ?? []) this.cache.delete(key);
    this.keysOfPage.delete(page);
  }
}

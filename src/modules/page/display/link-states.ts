import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { atMostEntries, BoundedMap } from '../../../util/bounded-map.js';
import { mapAtMost } from '../../../util/concurrency-limit.js';
import type { RequestContext } from '../../../router/types.js';
import type { LinkTargetState } from '../../../upstream/action-api.js';
import { isUnavailable } from '../../../upstream/wiki.js';
import { LinkStateTable } from '../tables/link-state-table.js';
import { PageLinks } from '../tables/page-links.js';
import type { WikiDirectory } from '../../../upstream/wikis.js';

/** Handles kept per wiki (stateless: one made again after the map starts over costs nothing). */
const DOMAINS = 1024;
/** Titles per request for their states: the Action API's limit for clients without apihighlimits. */
const TITLES_PER_REQUEST = 50;
/** Requests for states in flight at once, per display or change batch. */
const CONCURRENT_REQUESTS = 4;
/** Stored link states one page's display reads at once. */
const STORED_READS_AT_ONCE = 8;
/** A stored state is asked again after this long even if no change was seen (following may be off). */
const STATE_MAX_AGE_MS = 24 * 3600_000;
const sameState = (a: LinkTargetState, b: LinkTargetState) =>
  a.exists === b.exists && a.redirect === b.redirect && a.disambiguation === b.disambiguation && a.length === b.length && a.ns === b.ns;

/**
 * The state of the pages stored pages link to (exists, redirect, disambiguation, length): in
 * memory for `memoryMs` (what other processes learned is seen after that), stored, and asked of
 * the wiki in batches when neither knows. The change follower tells it of pages created,
 * deleted, moved or edited; it updates their state and names the pages that link to them.
 */
export class LinkStates {
  private readonly memory: LRUCache<string, LinkTargetState>;
  private readonly stateTables = new BoundedMap<string, LinkStateTable>(DOMAINS);
  private readonly linkTables = new BoundedMap<string, PageLinks>(DOMAINS);
  /** Renders whose links are recorded, by domain and title (so recording is checked once). */
  private readonly recorded = new LRUCache<string, string>(atMostEntries(100_000));

  constructor(
    private readonly wikis: WikiDirectory,
    private readonly log: Logger,
    memoryMs: number,
  ) {
    this.memory = new LRUCache({ ...atMostEntries(200_000), ttl: Math.max(1, memoryMs) });
  }

  states(domain: string): LinkStateTable {
    return this.stateTables.remember(domain, () => new LinkStateTable(domain));
  }

  links(domain: string): PageLinks {
    return this.linkTables.remember(domain, () => new PageLinks(domain));
  }

  async create(ctx: RequestContext, domain: string): Promise<void> {
    await Promise.all([this.states(domain).create(ctx), this.links(domain).create(ctx)]);
  }

  /** The states of `targets`; those the wiki cannot be asked for now are left out (their links keep their marks). */
  async of(ctx: RequestContext, domain: string, targets: string[]): Promise<Map<string, LinkTargetState>> {
    const found = new Map<string, LinkTargetState>();
    const unknown: string[] = [];
    // A page of thousands of links reads their stored states a few at a time (see mapAtMost).
    await mapAtMost(targets, STORED_READS_AT_ONCE, async (target) => {
      const known = this.memory.get(`${domain}\u0000${target}`) ?? (await this.stored(ctx, domain, target));
      if (known) found.set(target, known);
      else unknown.push(target);
    });
    if (unknown.length) {
      try {
        for (const state of await this.askWiki(domain, unknown)) {
          found.set(state.title, state);
          await this.remember(ctx, domain, state);
        }
      } catch (err) {
        if (!isUnavailable(err)) throw err;
        this.log.debug({ err, domain }, 'link states not asked: the wiki is unreachable');
      }
    }
    return found;
  }

  /** Records the links of a page's latest render, once per render (the reverse lookup's source). */
  async record(ctx: RequestContext, domain: string, title: string, tid: string, targets: string[]): Promise<void> {
    const key = `${domain}\u0000${title}`;
    if (this.recorded.get(key) === tid) return;
    const links = this.links(domain);
    if ((await links.recordedTid(ctx, title)) !== tid) await links.record(ctx, title, tid, targets);
    this.recorded.set(key, tid);
  }

  /**
   * Pages the wiki changed (created, deleted, moved, edited): those some stored page links to get
   * their state asked again; answers the pages linking to each target whose state changed.
   */
  async changed(ctx: RequestContext, domain: string, titles: string[]): Promise<{ target: string; linking: string[] }[]> {
    // Only targets some stored page links to have a state stored: the others concern no display.
    const stored = new Map<string, LinkTargetState>();
    await Promise.all(titles.map(async (t) => {
      const state = await this.states(domain).get(ctx, t);
      if (state) stored.set(t, state);
    }));
    if (!stored.size) return [];
    const out: { target: string; linking: string[] }[] = [];
    for (const state of await this.askWiki(domain, [...stored.keys()])) {
      const before = stored.get(state.title);
      await this.remember(ctx, domain, state);
      if (before && sameState(before, state)) continue;
      out.push({ target: state.title, linking: await this.links(domain).linking(ctx, state.title) });
    }
    return out;
  }

  private async stored(ctx: RequestContext, domain: string, target: string): Promise<LinkTargetState | undefined> {
    const row = await this.states(domain).get(ctx, target);
    if (!row || Date.now() - row.checked > STATE_MAX_AGE_MS) return undefined;
    this.memory.set(`${domain}\u0000${target}`, row);
    return row;
  }

  private async remember(ctx: RequestContext, domain: string, state: LinkTargetState): Promise<void> {
    this.memory.set(`${domain}\u0000${state.title}`, state);
    await this.states(domain).put(ctx, state);
  }

  private async askWiki(domain: string, titles: string[]): Promise<LinkTargetState[]> {
    const api = this.wikis.of(domain).api;
    const states: LinkTargetState[] = [];
    // A page of thousands of links asks a few batches at a time, not every one at once.
    const step = TITLES_PER_REQUEST * CONCURRENT_REQUESTS;
    for (let i = 0; i < titles.length; i += step) {
      const batches: string[][] = [];
      for (let j = i; j < Math.min(titles.length, i + step); j += TITLES_PER_REQUEST) batches.push(titles.slice(j, j + TITLES_PER_REQUEST));
      for (const answer of await Promise.all(batches.map((batch) => api.linkTargetStates(batch)))) states.push(...answer);
    }
    return states;
  }
}

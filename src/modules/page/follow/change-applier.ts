import type { Metrics } from '../../../util/metrics.js';
import type { RequestContext } from '../../../router/types.js';
import type { RecentChange } from '../../../upstream/action-api.js';
import type { RevisionRow } from '../model/revision.js';
import type { PageService } from '../read/page-service.js';
import type { FollowerState } from '../tables/follower-state.js';
import { planChanges, type ChangePlan, type PageMove } from './change-plan.js';
import type { TaskKind } from './template-dependents.js';

/** What applying the wiki's changes touches: the revisions known, their renders, the wiki. */
export type ApplierSources = Pick<PageService, 'renderer' | 'revisions' | 'wiki'>;

/** Told of every page a batch of the wiki's changes touched (created, deleted, moved, edited: what links to them may show anew), and the moves among those changes. */
export type PagesChanged = (ctx: RequestContext, domain: string, titles: string[], moves: PageMove[], protections: string[]) => Promise<void>;

/**
 * Queue priorities: revisions hidden first (their text must stop being served), then pages' states
 * (a page deleted or moved), then renders.
 */
const PRIORITY = { recheck: 2, refresh: 1, render: 0 } as const;

/** Runs one page's work: the follower's rate-limited queue, or at once for a notice. */
export type PageTask = (kind: TaskKind, work: () => Promise<unknown>, priority: number) => Promise<void>;

/** A batch being applied: `stored` once every page's new state is stored (and purged), `rest` once all of it is done. */
export interface Applying {
  stored: Promise<void>;
  rest: Promise<void>;
}

/**
 * Applies the wiki's changes, whoever learnt of them (the follower reading the recent changes,
 * or the wiki's notice of one change as it happens): one plan, the same purges and renders.
 */
export class ChangeApplier {
  constructor(
    private readonly domain: string,
    private readonly service: ApplierSources,
    private readonly state: FollowerState,
    private readonly storedOnly: boolean,
    private readonly metrics: Metrics,
    private readonly pagesChanged?: PagesChanged,
    /** Told that template dependents were queued (so a local follower looks at once). */
    private readonly dependentsQueued?: () => void,
  ) {}

  /**
   * Applies changes (oldest first): their links first, the rest (pages refreshed and rendered,
   * revisions re-checked, templates' dependents queued) through `run`. Either part fails only if
   * the wiki or storage is unreachable. `linksFirst: false` (a notice, which the wiki's editor
   * waits for): the links are looked at beside the rest, part of `rest`, since that may ask the
   * wiki, and a worker of the wiki is held until the notice is answered.
   */
  async apply(ctx: RequestContext, changes: RecentChange[], run: PageTask, { linksFirst = true } = {}): Promise<Applying> {
    const wiki = this.service.wiki(this.domain);
    // A title the service keeps nothing for (a special page, one it cannot parse) is left out.
    const titles = new Map<string, string>();
    for (const c of changes) {
      for (const t of [c.title, c.logparams?.target_title, c.logparams?.dest_title]) {
        if (typeof t === 'string' && t && !titles.has(t)) titles.set(t, await wiki.normalize(t).catch(() => ''));
      }
    }
    const normalized = changes.map((c) => ({
      ...c,
      title: c.title && titles.get(c.title)!,
      logparams: c.logparams && {
        ...c.logparams,
        ...(typeof c.logparams.target_title === 'string' ? { target_title: titles.get(c.logparams.target_title) } : {}),
        ...(typeof c.logparams.dest_title === 'string' ? { dest_title: titles.get(c.logparams.dest_title) } : {}),
      },
    }));
    const plan = planChanges(normalized);
    // Every page touched, stored here or not: a page created is what turns links to it blue.
    const touched = [...plan.refresh];
    // Links to the pages touched first: that needs no render, while the refreshes below wait
    // their turn at the wiki (a batch of 100 pages is 10 s at 10 pages a second).
    const links = this.pagesChanged && touched.length ? this.pagesChanged(ctx, this.domain, touched, plan.moves, plan.protections) : Promise.resolve();
    if (linksFirst) await links;
    else links.catch(() => undefined); // reported through `rest`
    if (this.storedOnly) plan.refresh = await this.storedOrMovedThere(ctx, plan.refresh, normalized);
    // Queued now, in the batch's order; revisions hidden first (their text must stop being served).
    const rechecked = Promise.all(plan.recheck.map(({ title, revid }) => run('recheck', () => this.service.revisions.recheckWithWiki(ctx, this.domain, title, revid), PRIORITY.recheck)));
    const { stored, rendered } = this.refreshPages(ctx, plan, run);
    const rest = (async () => {
      await Promise.all([rechecked, rendered, links]);
      for (const template of plan.dependencies) await this.state.queueDependents(ctx, template);
      if (plan.dependencies.length) this.dependentsQueued?.();
      for (const [kind, n] of plan.kinds) this.metrics.followerChanges.inc({ domain: this.metrics.wikiLabel(this.domain), kind }, n);
    })();
    const storedAll = Promise.all([rechecked, stored]).then(() => undefined);
    // Seen by whoever waits for them, if it gets that far.
    rest.catch(() => undefined);
    storedAll.catch(() => undefined);
    return { stored: storedAll, rest };
  }

  /**
   * For the wiki's notice of changes: each page they touch marked unchecked (see
   * `KnownRevisions.noticed`), so a read right after the wiki answered asks it. True if that is all
   * they ask before the wiki may answer; a revision's visibility changed must be re-checked first
   * (hidden text is never served).
   */
  async markNoticed(ctx: RequestContext, changes: RecentChange[]): Promise<boolean> {
    const wiki = this.service.wiki(this.domain);
    let all = true;
    for (const c of changes) {
      if (c.type === 'log' && (c.logtype === 'delete' || c.logtype === 'suppress') && c.logaction === 'revision') all = false;
      for (const t of [c.title, c.logparams?.target_title]) {
        const title = typeof t === 'string' && t ? await wiki.normalize(t).catch(() => undefined) : undefined;
        if (title) await this.service.revisions.noticed(ctx, this.domain, title);
      }
    }
    return all;
  }

  /**
   * Of the pages changes touched, those worth a request to the wiki when only what is stored is
   * kept fresh: pages stored here, and the titles stored pages were moved to.
   */
  private async storedOrMovedThere(ctx: RequestContext, titles: string[], changes: RecentChange[]): Promise<string[]> {
    const revs = this.service.revisions.table(this.domain);
    const stored = new Set<string>();
    await Promise.all(titles.map(async (title) => {
      if (await revs.newest(ctx, title)) stored.add(title);
    }));
    for (const c of changes) {
      const to = c.logparams?.target_title;
      if (c.type === 'log' && c.logtype === 'move' && typeof to === 'string' && to && stored.has(c.title)) stored.add(to);
    }
    return titles.filter((t) => stored.has(t));
  }

  /**
   * Each page's state asked of the wiki and stored (`stored`), then its new revision rendered
   * (`rendered`). Two tasks, not one: a state is one cheap query and is what stops a deleted or
   * moved page being served, so it goes ahead of the renders queued (a render holds its place for
   * as long as the wiki's Parsoid takes, seconds when the wiki is busy).
   */
  private refreshPages(ctx: RequestContext, plan: ChangePlan, run: PageTask): { stored: Promise<void>; rendered: Promise<void> } {
    const states: Promise<void>[] = [];
    const lag = this.metrics.followerLag.labels({ domain: this.metrics.wikiLabel(this.domain) });
    const tasks = plan.refresh.map((title) => {
      let storedOne!: () => void;
      let failedOne!: (e: unknown) => void;
      states.push(new Promise<void>((resolve, reject) => ((storedOne = resolve), (failedOne = reject))));
      const at = plan.changedAt.get(title);
      const caughtUp = () => at !== undefined && lag.observe(Math.max(0, (Date.now() - at) / 1000));
      let row: RevisionRow | undefined;
      return run('refresh', async () => {
        try {
          row = await this.service.revisions.refreshFromWiki(ctx, this.domain, title);
        } catch (e) {
          failedOne(e);
          throw e;
        }
        storedOne();
        if (!row) caughtUp();
      }, PRIORITY.refresh).finally(() => storedOne()).then(async () => {
        const latest = row;
        if (latest) await run('render', async () => {
          await this.service.renderer.renderAndStore(ctx, this.domain, latest);
          caughtUp();
        }, PRIORITY.render);
      });
    });
    return { stored: Promise.all(states).then(() => undefined), rendered: Promise.all(tasks).then(() => undefined) };
  }
}

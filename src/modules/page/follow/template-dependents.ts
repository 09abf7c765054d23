import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { HttpError } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import type { PageService } from '../read/page-service.js';
import type { FollowerState } from '../tables/follower-state.js';

/** What re-rendering a template's dependents needs: the revisions known, their renders, what is read most, the wiki. */
export type DependentsSources = Pick<PageService, 'reads' | 'renderer' | 'revisions' | 'wiki'>;

/** Embedding pages listed per request while re-rendering a template's dependents. */
export const DEPENDENTS_CHUNK = 500;

/** What a follower's task did, as its metrics count it. */
export type TaskKind = 'refresh' | 'render' | 'recheck' | 'dependent';
/** Runs one page's work on a queue, counted; a failure of the wiki itself is thrown, others logged. */
export type RunTask = (kind: TaskKind, work: () => Promise<unknown>, queue: PQueue) => Promise<void>;

/** Sleeps, but wakes at once when the follower stops leading. */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  // Not ref'd: a follower waiting never keeps a stopping process alive.
  await sleep(ms, undefined, { signal, ref: false }).catch(() => undefined);
}

/**
 * A follower's second job: re-rendering the stored pages that use a changed template, one queued
 * template at a time, on a queue of its own paced by the wiki (or `dependentsPerSecond`), so a
 * template used by thousands of pages never holds back the wiki's other changes.
 */
export class TemplateDependents {
  /** Whether templates may be queued for re-rendering: their queue in storage is read only when so. */
  private queued = true;
  private readonly queue: PQueue;

  constructor(
    private readonly domain: string,
    private readonly service: DependentsSources,
    private readonly state: FollowerState,
    private readonly options: { pollMs: number; concurrency: number; dependentsPerSecond: number },
    private readonly log: Logger,
    private readonly task: RunTask,
    private readonly isLeading: () => boolean,
  ) {
    // Paced by the wiki's own answer times (and its requests_per_second), unless a rate is set.
    this.queue = new PQueue(
      options.dependentsPerSecond > 0
        ? { concurrency: options.concurrency, intervalCap: Math.max(1, Math.round(options.dependentsPerSecond)), interval: 1000 }
        : { concurrency: options.concurrency },
    );
  }

  /** A template was queued (or may have been, by a leader before this one): the queue is read again. */
  mayHaveQueued(): void {
    this.queued = true;
  }

  /**
   * Re-renders the stored pages that use a changed template, one queued template at a time,
   * newest-edited first within each chunk of the wiki's listing; progress is stored, so a new
   * follower goes on where the last one stopped. Runs until `signal` (the leadership) ends, or
   * (`idleMs`, a farm's wiki, worked only while templates are queued) once nothing was queued that long.
   */
  async follow(ctx: RequestContext, signal: AbortSignal, idleMs?: number): Promise<void> {
    const api = this.service.wiki(this.domain).api;
    let workedAt = Date.now();
    while (!signal.aborted) {
      try {
        // Only this leader queues templates: while it has queued none, storage is not asked. The
        // flag drops before the read, so a template queued during it is read next time round.
        let job: Awaited<ReturnType<FollowerState['nextDependents']>>;
        if (this.queued) {
          this.queued = false;
          job = await this.state.nextDependents(ctx);
        }
        if (!job) {
          if (idleMs !== undefined && Date.now() - workedAt > idleMs) return;
          await pause(this.options.pollMs, signal);
          continue;
        }
        workedAt = Date.now();
        this.queued = true; // more may wait behind this one
        const { pages, cont } = await api.listPages('embeddedin', { geititle: job.title, geilimit: String(DEPENDENTS_CHUNK) }, job.cont ?? undefined);
        // Only pages stored here need work; the most-read first, then the most recently edited.
        const stored = await this.storedPages(ctx, pages);
        stored.sort((a, b) => this.service.reads.of(this.domain, b.title) - this.service.reads.of(this.domain, a.title) || b.lastrevid - a.lastrevid);
        await Promise.all(
          stored.map(({ title }) => this.task('dependent', () => this.whenWikiAnswers(() => this.service.renderer.rerenderLatest(ctx, this.domain, title)), this.queue)),
        );
        if (this.isLeading()) await this.state.progressDependents(ctx, job.title, job.queued, cont ?? null);
      } catch (err) {
        this.queued = true;
        this.log.warn({ err, domain: this.domain }, 're-rendering a template\'s dependents failed; retrying');
        await pause(Math.max(1000, this.options.pollMs * 5), signal);
      }
    }
  }

  /** Of the pages the wiki lists, those stored here, by normalised title. */
  private async storedPages(ctx: RequestContext, pages: { title: string; lastrevid?: number }[]): Promise<{ title: string; lastrevid: number }[]> {
    const wiki = this.service.wiki(this.domain);
    const revs = this.service.revisions.table(this.domain);
    const found = await Promise.all(pages.map(async (page) => {
      const title = await wiki.normalize(page.title);
      return (await revs.newest(ctx, title)) ? { title, lastrevid: page.lastrevid ?? 0 } : undefined;
    }));
    return found.filter((p) => p !== undefined);
  }

  /**
   * Runs a re-render; if the wiki says it is overloaded or lagged (503, 429), the queue pauses
   * for its Retry-After (5 s at most), so a template's pages never push a busy wiki.
   */
  private async whenWikiAnswers<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof HttpError && (e.status === 503 || e.status === 429) && !this.queue.isPaused) {
        const seconds = Math.min(5, Number(e.headers?.['retry-after']) || 5);
        this.queue.pause();
        setTimeout(() => this.queue.start(), seconds * 1000).unref();
      }
      throw e;
    }
  }
}

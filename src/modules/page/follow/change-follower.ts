import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import { keepRenewed } from '../../../table-access/lease.js';
import type { Metrics } from '../../../util/metrics.js';
import type { RequestContext } from '../../../router/types.js';
import type { RecentChange } from '../../../upstream/action-api.js';
import { isUnavailable } from '../../../upstream/wiki.js';
import { InOrderBatches } from './in-order-batches.js';
import { DEPENDENTS_CHUNK, pause, TemplateDependents, type DependentsSources, type TaskKind } from './template-dependents.js';
import { ChangeApplier, type ApplierSources, type PagesChanged } from './change-applier.js';
import { failureKind } from './failure-kind.js';
import type { Cursor, FollowerState } from '../tables/follower-state.js';

export interface FollowerOptions {
  /** Only pages already stored are refreshed (and the new title of a stored page moved); else every page changed. */
  storedOnly: boolean;
  /** How often the wiki's recent changes are read when the follower has caught up. */
  pollMs: number;
  /** Changes applied per batch (the cursor moves once a batch is applied). */
  batchSize: number;
  /** Pages refreshed and rendered side by side. */
  concurrency: number;
  /** Pages refreshed (and rendered) per second at most: a long outage catches up without a render storm. */
  pagesPerSecond: number;
  /** Pages re-rendered per second at most because a template they use changed; 0: as fast as the wiki answers. */
  dependentsPerSecond: number;
  /** How long the lease lives unless renewed: how soon another process takes over from a dead one. */
  leaseMs: number;
}

/** How far back each read of the recent changes reaches before the cursor: changes the wiki made visible late. */
const OVERLAP_MS = 5_000;
/** Changes read when following starts, to mark those of the overlap seen (the most one read gives). */
const NEWEST_SEEN = 500;

/**
 * Batches read ahead of the last one fully applied: their links are looked at at once, their pages
 * wait in the refresh queue behind the earlier batches' pages. While the wiki is slow, the next
 * read waits and gathers more changes, each page refreshed once for all of them.
 */
const BATCHES_AHEAD = 3;

/**
 * Follows one wiki's recent changes: refreshes each changed page from the wiki (new latest
 * revision stored and rendered, deletions, restores, moves), re-checks revisions whose visibility
 * changed, re-renders pages whose templates changed, and purges what changed. One process per
 * wiki follows at a time (a lease in storage); the others stand by to take over.
 *
 * Batches are read and their links looked at as they come; the pages they touched are refreshed
 * at the wiki's pace, in order, and the stored cursor moves past a batch only once all of it is
 * applied: a batch of edits being refreshed holds back neither the next batch's links nor its
 * hidden revisions, and a crash or a failure reads again from the last batch applied in full.
 */
export class ChangeFollower {
  readonly holder = `${process.pid}-${randomUUID()}`;
  private leading = false;
  private ledSince = 0;
  private stopped = false;
  private stopRenewing: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly loops = new Set<Promise<void>>();
  /** A lease attempt in flight (one at a time). */
  private attempt: Promise<void> | undefined;
  /** Where the next batch is read from: ahead of the stored cursor by the batches being applied. */
  private cursor: Cursor | undefined;
  /** The batches read and not yet applied in full, a new set per leadership. */
  private batches = new InOrderBatches();
  /** The cursor stored last: every change before it is applied. */
  private appliedTo: Cursor | undefined;
  /** Pages' states asked of the wiki and revisions re-checked: one query each. */
  private readonly pages: PQueue;
  /** Renders, apart: a render holds its place for seconds when the wiki is busy, and must not hold back a deletion's state. */
  private readonly renders: PQueue;
  /** Re-renders the pages of changed templates, beside the changes (its own queue and pace). */
  private readonly dependents: TemplateDependents;
  /** What a batch of changes asks of the service, done (the wiki's notices are applied by it too). */
  private readonly applier: ChangeApplier;
  /** When the wiki's recent changes were last read without failing (ms), and failures since. */
  private lastPollAt: number | undefined;
  /** When a read of the changes last found nothing more to follow: following was current then. */
  private caughtUpAt: number | undefined;
  private failuresInARow = 0;
  /** Aborted when this process stops leading: queued page work is dropped (the batch is read again by whoever leads). */
  private leadership = new AbortController();

  constructor(
    private readonly domain: string,
    private readonly service: ApplierSources & DependentsSources,
    private readonly state: FollowerState,
    private readonly options: FollowerOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    pagesChanged?: PagesChanged,
  ) {
    const paced = { concurrency: options.concurrency, intervalCap: Math.max(1, Math.round(options.pagesPerSecond)), interval: 1000 };
    this.pages = new PQueue(paced);
    this.renders = new PQueue(paced);
    this.applier = new ChangeApplier(domain, service, state, options.storedOnly, metrics, pagesChanged, () => this.dependents.mayHaveQueued());
    this.dependents = new TemplateDependents(domain, service, state, options, log, (kind, work, queue) => this.task(kind, work, queue), () => this.leading);
    // Exported from the start: a process standing by says so (0), it is not just absent.
    metrics.followerLeading.set({ domain }, 0);
    metrics.followerAges.set(domain, () => {
      const status = this.status();
      return { cursor: status.cursor_age_seconds, poll: status.last_poll_age_seconds };
    });
  }

  /**
   * How following goes, for /_health and /metrics: stalled when this process leads but has not
   * read the wiki's changes for ten poll intervals (at least 5 s).
   */
  status(): { leading: boolean; stalled: boolean; cursor?: string; cursor_age_seconds?: number; last_poll_age_seconds?: number; failures_in_a_row: number } {
    if (!this.leading) return { leading: false, stalled: false, failures_in_a_row: 0 };
    const now = Date.now();
    const pollAge = this.lastPollAt === undefined ? undefined : (now - this.lastPollAt) / 1000;
    const stalledAfter = Math.max(5, (this.options.pollMs * 10) / 1000);
    return {
      leading: true,
      stalled: (pollAge ?? (now - this.ledSince) / 1000) > stalledAfter,
      cursor: this.appliedTo?.ts,
      // Behind by the last change applied, unless a later read found nothing newer (a quiet wiki).
      cursor_age_seconds: this.appliedTo ? (now - Math.max(Date.parse(this.appliedTo.ts), this.caughtUpAt ?? 0)) / 1000 : undefined,
      last_poll_age_seconds: pollAge,
      failures_in_a_row: this.failuresInARow,
    };
  }

  private get leaseSeconds(): number {
    return Math.max(1, Math.ceil(this.options.leaseMs / 1000));
  }

  /** Templates' dependents were queued elsewhere (a notice): looked at now rather than at the next poll. */
  dependentsQueued(): void {
    if (this.leading) this.dependents.mayHaveQueued();
  }

  /** Whether this process follows the wiki now. */
  get isLeading(): boolean {
    return this.leading;
  }

  /** Tries for the lease now and three times per lease from now on. */
  start(ctx: RequestContext): void {
    const attempt = () => {
      if (this.leading || this.stopped || this.attempt) return;
      this.attempt = this.tryToLead(ctx)
        .catch((err) => this.log.warn({ err, domain: this.domain }, 'taking the change follower lease failed'))
        .finally(() => (this.attempt = undefined));
    };
    attempt();
    this.timer = setInterval(attempt, Math.max(100, this.options.leaseMs / 3));
    this.timer.unref();
  }

  private async tryToLead(ctx: RequestContext): Promise<void> {
    if (!(await this.state.lead(ctx, this.holder, this.leaseSeconds))) return;
    if (this.stopped) {
      // Stopped while the lease was being taken: give it back, start nothing.
      await this.state.release(ctx, this.holder);
      return;
    }
    this.leading = true;
    this.ledSince = Date.now();
    this.lastPollAt = undefined;
    this.caughtUpAt = undefined;
    this.failuresInARow = 0;
    this.leadership = new AbortController();
    // Another leader may have moved the cursor and queued templates meanwhile: both read anew.
    this.cursor = undefined;
    this.appliedTo = undefined;
    this.batches = new InOrderBatches();
    this.dependents.mayHaveQueued();
    // Every queued task and every pause listens to it: a page's state and its render (a move's two
    // pages) for each change of the batches under way, and a chunk of dependents at most.
    setMaxListeners(4 * this.options.batchSize * (BATCHES_AHEAD + 1) + DEPENDENTS_CHUNK + 16, this.leadership.signal);
    this.metrics.followerLeading.set({ domain: this.domain }, 1);
    this.log.info({ domain: this.domain, holder: this.holder }, 'following the wiki\'s changes');
    this.stopRenewing = keepRenewed(
      this.options.leaseMs,
      () => this.state.renew(ctx, this.holder, this.leaseSeconds),
      (err) => this.log.warn({ err, domain: this.domain }, 'renewing the change follower lease failed'),
      () => this.demote('the change follower lease was lost'),
    );
    // The loops end with this leadership, even if the process leads again before they notice.
    const { signal } = this.leadership;
    this.run(this.followChanges(ctx, signal));
    this.run(this.dependents.follow(ctx, signal));
  }

  private demote(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.leadership.abort();
    this.stopRenewing?.();
    this.metrics.followerLeading.set({ domain: this.domain }, 0);
    this.log.warn({ domain: this.domain }, reason);
  }

  private run(loop: Promise<void>): void {
    const tracked = loop.catch((err) => this.log.error({ err, domain: this.domain }, 'a change follower loop failed')).finally(() => this.loops.delete(tracked));
    this.loops.add(tracked);
  }

  /** Stops following and gives the lease up at once, so another process need not wait for it to expire. */
  async stop(ctx: RequestContext): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    // A lease attempt in flight ends without leading (see tryToLead).
    await this.attempt;
    const wasLeading = this.leading;
    this.demote('the change follower stopped');
    await Promise.all([...this.loops]);
    if (wasLeading) await this.state.release(ctx, this.holder).catch((err) => this.log.warn({ err }, 'releasing the change follower lease failed'));
  }

  private async followChanges(ctx: RequestContext, signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        const more = await this.step(ctx);
        failures = 0;
        this.failuresInARow = 0;
        if (!more) {
          if (this.batches.size === 0) this.caughtUpAt = this.lastPollAt;
          await pause(this.options.pollMs, signal);
        }
      } catch (err) {
        failures++;
        this.failuresInARow = failures;
        this.metrics.followerFailures.inc({ domain: this.metrics.wikiLabel(this.domain), kind: failureKind(err) });
        this.log.warn({ err, domain: this.domain }, 'following the wiki\'s changes failed; retrying');
        await pause(Math.min(30_000, this.options.pollMs * 2 ** Math.min(failures, 5)), signal);
      }
    }
    // Stopping waits for the batches under way (their queued pages were dropped with the leadership).
    await this.batches.settled();
  }

  /**
   * Reads one batch, looks at its links and queues the rest of its work (see the class); true if
   * more changes are waiting. A batch under way that failed is thrown here, and reading starts
   * again from the stored cursor.
   */
  private async step(ctx: RequestContext): Promise<boolean> {
    this.throwIfFailed();
    const api = this.service.wiki(this.domain).api;
    if (!this.cursor) this.cursor = this.appliedTo = await this.state.cursor(ctx);
    let cursor = this.cursor;
    if (!cursor) {
      // Following starts after the wiki's newest change: older content is what the backfill is
      // for. The changes each read reaches back over (OVERLAP_MS) were made before following
      // began: marked seen, not applied (a first batch of them held a new follower's first
      // changes back behind their refreshes).
      const recent = await api.newestChanges(NEWEST_SEEN);
      const newest = recent[0]?.timestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const seen = recent.map((c): [number, number] => [c.rcid, Date.parse(c.timestamp)]).filter(([, at]) => at >= Date.parse(newest) - OVERLAP_MS);
      cursor = { ts: newest, seen, since: this.options.storedOnly ? undefined : newest };
      if (!(await this.state.advance(ctx, this.holder, cursor))) return false;
      this.cursor = this.appliedTo = cursor;
    }
    const seen = new Set(cursor.seen.map(([rcid]) => rcid));
    const start = new Date(Date.parse(cursor.ts) - OVERLAP_MS).toISOString().replace(/\.\d+Z$/, 'Z');
    const batch: RecentChange[] = [];
    let cont: string | undefined;
    do {
      const page = await api.recentChanges(start, this.options.batchSize, cont);
      for (const change of page.changes) if (!seen.has(change.rcid) && batch.length < this.options.batchSize) batch.push(change);
      cont = page.cont;
    } while (cont && batch.length < this.options.batchSize && this.leading);
    this.lastPollAt = Date.now();
    if (batch.length === 0 || !this.leading) return false;

    const { rest } = await this.apply(ctx, batch);
    const newest = Math.max(Date.parse(cursor.ts), ...batch.map((c) => Date.parse(c.timestamp)));
    const window = [...cursor.seen, ...batch.map((c): [number, number] => [c.rcid, Date.parse(c.timestamp)])].filter(([, at]) => at >= newest - OVERLAP_MS);
    const next: Cursor = { ts: new Date(newest).toISOString(), seen: window, since: this.options.storedOnly ? undefined : (cursor.since ?? cursor.ts) };
    // A batch before it failed meanwhile: this one must not move the cursor past it.
    this.throwIfFailed();
    this.cursor = next;
    this.applyInOrder(ctx, rest, next);
    // Not too far ahead: each batch waiting holds its pages in the queue.
    await this.batches.atMost(BATCHES_AHEAD);
    this.throwIfFailed();
    return batch.length >= this.options.batchSize;
  }

  /** Stores `next` as the cursor once `rest` and every batch read before it are applied in full. */
  private applyInOrder(ctx: RequestContext, rest: Promise<void>, next: Cursor): void {
    // This leadership's: a batch of one that ended moves nothing.
    const { signal } = this.leadership;
    this.batches.add(async () => {
      await rest;
      if (signal.aborted) throw new Error('no longer following the wiki');
      if (!(await this.state.advance(ctx, this.holder, next))) {
        this.demote('another process follows the wiki now');
        throw new Error('another process follows the wiki now');
      }
      this.appliedTo = next;
    });
  }

  /** A batch under way failed: thrown once, and the next read starts from the stored cursor. */
  private throwIfFailed(): void {
    try {
      this.batches.throwIfFailed();
    } catch (err) {
      this.cursor = undefined;
      throw err;
    }
  }

  /**
   * Applies a batch: its links at once, the rest (its pages refreshed, revisions re-checked,
   * templates queued) in the promise returned, behind the batches before it. Either part fails
   * (and the batch is read again) only if the wiki or storage is unreachable.
   */
  private async apply(ctx: RequestContext, changes: RecentChange[]): Promise<{ rest: Promise<void> }> {
    const { rest } = await this.applier.apply(ctx, changes, (kind, work, priority) => this.task(kind, work, kind === 'render' ? this.renders : this.pages, priority));
    // In an object: a promise returned from an async function would be waited for.
    return { rest };
  }

  /**
   * One page's work, rate-limited. The wiki or storage being unreachable fails the batch (it is
   * read again); any other failure of one page (a render Parsoid cannot make) is logged and
   * counted, and does not hold the wiki's other changes back.
   */
  private async task(kind: TaskKind, work: () => Promise<unknown>, queue = this.pages, priority = 0): Promise<void> {
    try {
      await queue.add(work, { signal: this.leadership.signal, priority });
      this.metrics.followerTasks.inc({ domain: this.metrics.wikiLabel(this.domain), task: kind, outcome: 'done' });
    } catch (err) {
      this.metrics.followerTasks.inc({ domain: this.metrics.wikiLabel(this.domain), task: kind, outcome: 'failed' });
      if (isUnavailable(err) || !this.leading) throw err;
      this.log.warn({ err, domain: this.domain, task: kind }, 'a change could not be applied to one page');
    }
  }
}

import { randomUUID } from 'node:crypto';
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { RequestContext } from '../../../router/types.js';
import { keepRenewed, LeaseTable } from '../../../table-access/lease.js';
import { FarmWikis } from '../tables/farm-wikis.js';
import type { RecentChange } from '../../../upstream/action-api-types.js';
import type { Wiki } from '../../../upstream/wiki.js';
import type { Metrics } from '../../../util/metrics.js';
import type { Cursor, FollowerState } from '../tables/follower-state.js';
import type { ChangeApplier } from './change-applier.js';
import { failureKind } from './failure-kind.js';

const LEASE_KEY = 'farm-polls';
/** How far back each read reaches before the cursor: changes the wiki made visible late. */
const OVERLAP_MS = 5_000;
/** Pages of one wiki's changes refreshed side by side (a farm's polls are a safety net, not a mirror). */
const PAGE_CONCURRENCY = 2;
/** Wikis known to have changed, polled again before the others: at most this many remembered. */
const ACTIVE_KEPT = 1000;

export interface FarmPollOptions {
  /** Polls per second over every wiki of the group, at most. */
  pollsPerSecond: number;
  /** How soon a wiki whose last poll found changes is polled again (ms). */
  pollMs: number;
  batchSize: number;
  leaseMs: number;
}

export interface FarmPollParts {
  wiki(domain: string): Wiki;
  stateOf(domain: string): FollowerState;
  applierOf(domain: string): ChangeApplier;
}

/**
 * The safety net under a farm's notices: the recent changes of every wiki of a storage group,
 * read in turn at `pollsPerSecond` in all, whatever the number of wikis (recently changed ones
 * again sooner). One process polls a group at a time (one lease per group, not per wiki); each
 * wiki's cursor is fenced by it only when a poll found changes to apply, so idle wikis cost the
 * store no write. The wikis are those found so far, kept in the group's `farm_wikis` table.
 */
export class FarmPolls {
  readonly holder = `${process.pid}-${randomUUID()}`;
  private readonly lease: LeaseTable;
  private readonly registry: FarmWikis;
  private readonly registered = new Set<string>();
  private readonly fenced = new Set<string>();
  private readonly active = new Map<string, number>();
  /**
   * Where following a wiki without a stored cursor starts (its newest change at its first poll):
   * kept here, and stored only with the first changes applied, so finding wikis costs no write.
   */
  private readonly starts = new Map<string, Cursor>();
  private readonly pages = new PQueue({ concurrency: PAGE_CONCURRENCY });
  private leading = false;
  /** Aborted when this process stops leading the group: the work of its leadership ends. */
  private leadership = new AbortController();
  private stopRenewing: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private round: string[] = [];
  private next: string | undefined;
  /** Polls under way (a few at most): each ends once its batch is applied, renders and all. */
  private readonly polling = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    /** The domain the group's own rows (lease, registry) are kept under. */
    home: string,
    private readonly label: string,
    private readonly parts: FarmPollParts,
    private readonly options: FarmPollOptions,
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.lease = new LeaseTable(home, 'page_follower');
    this.registry = new FarmWikis(home);
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.registry.create(ctx);
  }

  /** A wiki of the group found: polled from now on (recorded once, for every process and restart). */
  async add(ctx: RequestContext, domain: string): Promise<void> {
    if (this.registered.has(domain)) return;
    await this.registry.add(ctx, domain);
    this.registered.add(domain);
    this.touched(domain);
  }

  /** A wiki changed or was just found: polled again before the others. */
  touched(domain: string): void {
    if (this.active.size >= ACTIVE_KEPT) this.active.delete(this.active.keys().next().value!);
    this.active.set(domain, Date.now());
  }

  start(ctx: RequestContext): void {
    const seconds = Math.max(1, Math.ceil(this.options.leaseMs / 1000));
    const attempt = () => {
      if (this.leading || this.stopped) return;
      this.lease.acquire(ctx, LEASE_KEY, this.holder, seconds).then((held) => {
        if (!held || this.stopped) return;
        this.leading = true;
        this.leadership = new AbortController();
        this.fenced.clear();
        this.metrics.followerLeading.set({ domain: this.label }, 1);
        this.stopRenewing = keepRenewed(this.options.leaseMs, () => this.lease.renew(ctx, LEASE_KEY, this.holder, seconds),
          (err) => this.log.warn({ err, group: this.label }, 'renewing the farm poll lease failed'), () => this.demote());
      }, (err) => this.log.warn({ err, group: this.label }, 'taking the farm poll lease failed'));
    };
    attempt();
    this.leaseTimer = setInterval(attempt, Math.max(100, this.options.leaseMs / 3));
    this.leaseTimer.unref();
    this.timer = setInterval(() => void this.tick(ctx), Math.max(1, 1000 / this.options.pollsPerSecond));
    this.timer.unref();
  }

  /** Whether this process polls the group now. */
  get isLeading(): boolean {
    return this.leading;
  }

  /** Ends with this process's leadership of the group. */
  get signal(): AbortSignal {
    return this.leadership.signal;
  }

  private demote(): void {
    this.leading = false;
    this.leadership.abort();
    this.stopRenewing?.();
    this.metrics.followerLeading.set({ domain: this.label }, 0);
    this.log.warn({ group: this.label }, 'another process polls the farm now');
  }

  async stop(ctx: RequestContext): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    const was = this.leading;
    if (was) this.demote();
    // The polls under way first: a page's render is queued only once its state is stored, so the
    // queue may be idle for a moment while a poll still has work to queue.
    await Promise.allSettled([...this.polling]);
    await this.pages.onIdle();
    if (was) await this.lease.release(ctx, LEASE_KEY, this.holder).catch(() => undefined);
  }

  /** One poll per tick, at most a few under way: the next recently changed wiki due, else the next in turn. */
  private async tick(ctx: RequestContext): Promise<void> {
    if (!this.leading || this.polling.size >= 4) return;
    const domain = this.due() ?? (await this.nextInTurn(ctx));
    if (!domain) return;
    const polled = this.poll(ctx, domain);
    this.polling.add(polled);
    try {
      await polled;
    } catch (err) {
      this.metrics.followerFailures.inc({ domain: this.label, kind: failureKind(err) });
      this.log.warn({ err, domain }, "polling a farm's wiki failed; it is polled again in its turn");
    } finally {
      this.polling.delete(polled);
    }
  }

  private due(): string | undefined {
    const now = Date.now();
    for (const [domain, at] of this.active) {
      if (now - at < this.options.pollMs) continue;
      this.active.delete(domain);
      return domain;
    }
    return undefined;
  }

  /** The wikis of the group in turn, read from the registry a page at a time. */
  private async nextInTurn(ctx: RequestContext): Promise<string | undefined> {
    if (this.round.length === 0) {
      const page = await this.registry.page(ctx, 500, this.next);
      this.round = page.wikis;
      this.next = page.next;
    }
    return this.round.shift();
  }

  /** Reads a wiki's changes since its cursor and applies them; a wiki without changes costs no write. */
  private async poll(ctx: RequestContext, domain: string): Promise<void> {
    const state = this.parts.stateOf(domain);
    const api = this.parts.wiki(domain).api;
    const cursor = (await state.cursor(ctx)) ?? this.starts.get(domain);
    if (!cursor) {
      // Following a wiki starts after its newest change, as a wiki's own follower does.
      const [newest] = await api.newestChanges(1);
      this.starts.set(domain, { ts: newest?.timestamp ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'), seen: newest ? [[newest.rcid, Date.parse(newest.timestamp)]] : [] });
      return;
    }
    const seen = new Set(cursor.seen.map(([rcid]) => rcid));
    const start = new Date(Date.parse(cursor.ts) - OVERLAP_MS).toISOString().replace(/\.\d+Z$/, 'Z');
    const { changes } = await api.recentChanges(start, this.options.batchSize);
    const batch: RecentChange[] = changes.filter((c) => !seen.has(c.rcid));
    if (batch.length === 0) return;
    const applying = await this.parts.applierOf(domain).apply(ctx, batch, (_kind, work, priority) => this.pages.add(work, { priority }).then(() => undefined));
    await applying.rest;
    const newest = Math.max(Date.parse(cursor.ts), ...batch.map((c) => Date.parse(c.timestamp)));
    const window = [...cursor.seen, ...batch.map((c): [number, number] => [c.rcid, Date.parse(c.timestamp)])].filter(([, at]) => at >= newest - OVERLAP_MS);
    await this.advance(ctx, state, domain, { ts: new Date(newest).toISOString(), seen: window });
    this.starts.delete(domain);
    this.touched(domain);
  }

  /** Moves the cursor, fencing it for this leader first if it was not yet in this leadership. */
  private async advance(ctx: RequestContext, state: FollowerState, domain: string, cursor: Cursor): Promise<void> {
    if (await state.advance(ctx, this.holder, cursor)) return;
    if (!this.leading || this.fenced.has(domain)) return;
    await state.fence(ctx, this.holder);
    this.fenced.add(domain);
    await state.advance(ctx, this.holder, cursor);
  }
}

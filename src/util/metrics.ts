import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RequestMetrics } from './request-metrics.js';
import { SeriesMetrics } from './series-metrics.js';
import { Busiest } from './busiest.js';

/** Prometheus metrics of one service instance (its own registry, so tests can run several). */
export class Metrics {
  readonly registry = new Registry();
  /**
   * The `domain` label of a wiki's series: its domain for a wiki listed by name, its pattern for
   * one of a farm's (set by the app), so that ten thousand wikis are not ten thousand series.
   */
  wikiLabel: (domain: string) => string = (domain) => domain;
  private busiest: Busiest | undefined;

  /**
   * Opt-in: the `n` wikis that served the most requests, by domain (`farm.top_wikis`), counted in
   * bounded memory however many wikis there are.
   */
  countBusiestWikis(n: number): void {
    if (n <= 0) return;
    const busiest = (this.busiest = new Busiest(Math.max(100, 10 * n)));
    new Gauge({
      name: 'wiki_requests_busiest', help: `Requests served per wiki since start, for the ${n} busiest (an estimate from above: farm.top_wikis)`,
      labelNames: ['domain'] as const, registers: [this.registry],
      collect(this: Gauge<'domain'>) {
        this.reset();
        for (const [domain, count] of busiest.top(n)) this.set({ domain }, count);
      },
    });
  }

  /** A client's request to a wiki was served (see `countBusiestWikis`). */
  servedFor(domain: string): void {
    this.busiest?.add(domain);
  }

  private counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A follower age per domain, read from `followerAges` when scraped. */
  private ageGauge(which: 'cursor' | 'poll', name: string, help: string): Gauge<'domain'> {
    const ages = this.followerAges;
    return new Gauge({
      name, help, labelNames: ['domain'] as const, registers: [this.registry],
      collect(this: Gauge<'domain'>) {
        this.reset();
        for (const [domain, of] of ages) {
          const age = of()[which];
          if (age !== undefined) this.set({ domain }, age);
        }
      },
    });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  private readonly requests = new RequestMetrics(
    this.registry,
    { count: 'http_requests_total', duration: 'http_request_duration_seconds' },
    {
      count: 'Requests by route template, method, status and origin (external or internal)',
      duration: 'Request latency by route template, method, status and origin (external or internal)',
    },
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );

  readonly renderCacheReads = this.counter('render_cache_reads_total', 'Renders sought by tid in memory, by outcome (hit; miss: read from storage)', ['outcome'] as const);
  readonly renderCacheOffers = this.counter(
    'render_cache_offers_total', 'Renders read from storage a second time soon, offered to the render cache, by outcome (kept; refused: the cache is full of renders read more often lately)', ['outcome'] as const,
  );
  readonly purges = this.counter('cache_purges_total', 'PURGE requests sent to the HTTP caches in front, by outcome (purged, failed)', ['outcome'] as const);
  readonly wikiRequests = this.counter('wiki_requests_total', 'Requests to the wikis, by domain and endpoint (action, parsoid, transforms)', ['domain', 'endpoint'] as const);
  readonly wikiCircuitOpen = this.gauge('wiki_circuit_open', 'Whether requests to a wiki fail at once because it stopped answering (1) or go to it (0); for a farm\'s pattern, how many of its wikis do', ['domain'] as const);
  readonly connections = this.gauge('http_open_connections', 'Open client connections');
  readonly shed = this.counter('http_shed_requests_total', 'Requests answered 503 because too many connections were open');
  readonly streams = this.gauge('http_open_streams', 'Streamed answers under way (change streams, Realtime, downloads)');
  readonly streamsRefused = this.counter('http_refused_streams_total', 'Streams refused: the client held its share (client, 429) or the service held its limit (total, 503)', ['reason'] as const);
  readonly sendTimeouts = this.counter('http_send_timeouts_total', 'Connections closed because their client took none of an answer for send_timeout seconds');
  readonly pipelineCut = this.counter('http_pipelining_cut_connections_total', 'Connections closed for pipelining more requests than may wait for their answers');
  readonly workerRestarts = this.gauge('worker_restarts_total', 'Worker processes the supervisor restarted after they died (since it started)');
  readonly transactions = this.counter(
    'transactions_total', 'HTTP transactions by event: started, finished, recovered (taken over from a dead owner), failed (primary refused)', ['event'] as const,
  );
  readonly oldestTransaction = this.gauge('transactions_oldest_unfinished_seconds', 'Age of the oldest stored, unfinished transaction at the last sweep that completed', ['domain'] as const);
  readonly transactionSweeps = this.counter(
    'transactions_sweeps_total', 'Sweeps for unfinished transactions, by outcome (done, failed: the metrics of sweeps are then stale)', ['domain', 'outcome'] as const,
  );
  readonly transactionSweepSeconds = this.gauge('transactions_sweep_seconds', 'How long the last completed sweep for unfinished transactions took', ['domain'] as const);

  readonly followerLeading = this.gauge('follower_leading', 'Whether this process follows the wiki\'s changes (holds its lease): 1 or 0', ['domain'] as const);
  readonly displayInvalidations = this.counter(
    'display_invalidations_total', 'Pages whose display HTML was dropped and purged because a page they link to changed (no render)', ['domain'] as const,
  );
  readonly branchesExpired = this.counter('branches_expired_total', 'Branches (drafts) that expired unmerged, removed by the expiry sweep', ['domain'] as const);
  readonly branchesExpiring = this.gauge('branches_expiring', 'Open branches that expire within a week unless updated, as the last expiry sweep counted them', ['domain'] as const);
  readonly followerChanges = this.counter('follower_changes_total', 'The wiki\'s changes followed, by kind (edit, new, delete/delete, move/move, ...)', ['domain', 'kind'] as const);
  readonly followerTasks = this.counter(
    'follower_tasks_total', 'Pages\' states refreshed, their new revisions rendered, revisions re-checked and dependents re-rendered by the follower, by task and outcome (done, failed)', ['domain', 'task', 'outcome'] as const,
  );
  readonly followerLag = new Histogram({
    name: 'follower_lag_seconds',
    help: 'From a change on the wiki (its recent-changes time) to the page refreshed, rendered and purged here',
    labelNames: ['domain'] as const,
    buckets: [0.5, 1, 2, 3, 5, 10, 30, 60, 300, 1800, 3600],
    registers: [this.registry],
  });
  /** Seconds behind the wiki, per followed domain: read when scraped (see `followerAges`). */
  readonly followerAges = new Map<string, () => { cursor?: number; poll?: number }>();
  readonly followerCursorAge = this.ageGauge('cursor', 'follower_cursor_age_seconds', 'How far behind the wiki\'s changes following is: now minus the time of the last change applied (leader only)');
  readonly followerPollAge = this.ageGauge('poll', 'follower_last_poll_age_seconds', 'Seconds since the wiki\'s recent changes were last read successfully (leader only): grows while following is stalled');
  readonly followerFailures = this.counter(
    'follower_failures_total', 'Batches of changes that could not be followed, by kind (wiki-unavailable, wiki-error, storage, other)', ['domain', 'kind'] as const,
  );
  readonly wikiOutcomes = this.counter(
    'wiki_request_outcomes_total', 'Requests to the wikis by outcome (ok, refused: an error answer, timeout, unreachable, circuit-open: not sent)', ['domain', 'outcome'] as const,
  );
  /** Every storage operation adds to it: a series map, not prom-client's histogram (see SeriesMetrics). */
  readonly storageDuration = new SeriesMetrics(
    this.registry,
    ['operation', 'table'],
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    { name: 'storage_operation_seconds', help: 'Table storage operations by kind (get, put, delete, create_table, ...) and table, whatever the backend' },
  );
  readonly storageErrors = this.counter(
    'storage_errors_total', 'Table storage operations that failed, by kind (unavailable, condition-failed, invalid, not-found, other)', ['operation', 'kind'] as const,
  );
  readonly storageNodes = this.gauge('storage_nodes', 'Storage nodes the driver sees, by state (up, down): Cassandra', ['state'] as const);
  readonly backfillPages = this.counter('backfill_pages_total', 'Pages the backfill went through, by outcome (rendered, skipped, failed)', ['domain', 'outcome'] as const);
  readonly backfillTotal = this.gauge('backfill_pages_expected', 'Pages the running backfill expects to go through', ['domain'] as const);

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }

  /** `origin`: external (from a client) or internal (one module asking another). */
  observe(route: string, method: string, status: number, seconds: number, origin: 'external' | 'internal' = 'external'): void {
    this.requests.observe(route, method, status, seconds, origin);
  }

  /** `observe` for one label set, its series found once (see `RequestMetrics.recorder`). */
  recorder(route: string, method: string, status: number, origin: 'external' | 'internal' = 'external'): (seconds: number) => void {
    return this.requests.recorder(route, method, status, origin);
  }
}

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one service instance (its own registry, so tests can run several). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests by route template, method, status and origin (external or internal)',
    labelNames: ['route', 'method', 'status', 'origin'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Request latency by route template, method, status and origin (external or internal)',
    labelNames: ['route', 'method', 'status', 'origin'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly purges = new Counter({
    name: 'cache_purges_total',
    help: 'PURGE requests sent to the HTTP caches in front, by outcome (purged, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly wikiRequests = new Counter({
    name: 'wiki_requests_total',
    help: 'Requests to the wikis, by domain and endpoint (action, parsoid, parsoid-wikitext)',
    labelNames: ['domain', 'endpoint'] as const,
    registers: [this.registry],
  });

  readonly connections = new Gauge({ name: 'http_open_connections', help: 'Open client connections', registers: [this.registry] });
  readonly shed = new Counter({ name: 'http_shed_requests_total', help: 'Requests answered 503 because too many connections were open', registers: [this.registry] });

  readonly workerRestarts = new Gauge({
    name: 'worker_restarts_total',
    help: 'Worker processes the supervisor restarted after they died (since it started)',
    registers: [this.registry],
  });

  readonly transactions = new Counter({
    name: 'transactions_total',
    help: 'HTTP transactions by event: started, finished, recovered (taken over from a dead owner), failed (primary refused)',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });
  readonly oldestTransaction = new Gauge({
    name: 'transactions_oldest_unfinished_seconds',
    help: 'Age of the oldest stored, unfinished transaction at the last sweep',
    labelNames: ['domain'] as const,
    registers: [this.registry],
  });

  constructor(defaults = true) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }

  /** `origin`: external (from a client) or internal (one module asking another). */
  observe(route: string, method: string, status: number, seconds: number, origin: 'external' | 'internal' = 'external'): void {
    const labels = { route, method, status: String(status), origin };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }
}

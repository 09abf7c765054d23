import type { Registry } from 'prom-client';
import { SeriesMetrics } from './series-metrics.js';

/**
 * Request counts and latencies by route, method, status and origin, exported as prom-client's
 * counter and histogram would be: every request, external or internal, adds to them (see
 * SeriesMetrics).
 */
export class RequestMetrics {
  private readonly metrics: SeriesMetrics;

  constructor(registry: Registry, names: { count: string; duration: string }, help: { count: string; duration: string }, buckets: readonly number[]) {
    this.metrics = new SeriesMetrics(registry, ['route', 'method', 'status', 'origin'], buckets, { name: names.duration, help: help.duration }, { name: names.count, help: help.count });
  }

  observe(route: string, method: string, status: number, seconds: number, origin: string): void {
    this.metrics.observe([route, method, String(status), origin], seconds);
  }

  /** Observes one label set's requests without finding its series each time (see SeriesMetrics.recorder). */
  recorder(route: string, method: string, status: number, origin: string): (seconds: number) => void {
    return this.metrics.recorder([route, method, String(status), origin]);
  }
}

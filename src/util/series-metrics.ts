import type { Registry } from 'prom-client';

interface Series {
  labels: Record<string, string>;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative): the last slot is past the largest bound. */
  perBucket: number[];
}

export interface ExportedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { labels: Record<string, string | number>; value: number; metricName?: string }[];
}

interface Described {
  name: string;
  help: string;
}

/**
 * A histogram by label values (and, if named, the counter of the same observations), exported
 * as prom-client's histogram and counter would be. For what every request or storage operation
 * adds to: prom-client hashes the label set on every call (about 2 µs, 4 % of a bucket read; 8 µs
 * of a snapshot's 0.4 ms a page), where this keeps one entry per label set, found by a joined string.
 */
export class SeriesMetrics {
  private readonly series = new Map<string, Series>();
  /** How many times the series were cleared (a recorder then finds its series again). */
  private resets = 0;

  constructor(
    registry: Registry,
    private readonly labelNames: readonly string[],
    private readonly buckets: readonly number[],
    private readonly duration: Described,
    private readonly count?: Described,
  ) {
    if (count) registry.registerMetric(this.exported(count.name, () => this.counts()) as never);
    registry.registerMetric(this.exported(duration.name, () => this.get()) as never);
  }

  /** `values`: one per label name, in their order. */
  observe(values: readonly string[], seconds: number): void {
    this.add(this.seriesOf(values), seconds);
  }

  /**
   * Observes one label set without finding its series each time (an answer sent again many
   * times over): the series is found again only once the metric was reset.
   */
  recorder(values: readonly string[]): (seconds: number) => void {
    let series = this.seriesOf(values);
    let resets = this.resets;
    return (seconds) => {
      if (resets !== this.resets) {
        series = this.seriesOf(values);
        resets = this.resets;
      }
      this.add(series, seconds);
    };
  }

  /** The histogram's values as prom-client's `get` answers them. */
  get(): ExportedMetric {
    const name = this.duration.name;
    const values: ExportedMetric['values'] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.perBucket[i]!;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${name}_count` });
    }
    return { name, help: this.duration.help, type: 'histogram', aggregator: 'sum', values };
  }

  private seriesOf(values: readonly string[]): Series {
    const key = values.join('\u0000');
    let series = this.series.get(key);
    if (!series) {
      const labels = Object.fromEntries(this.labelNames.map((name, i) => [name, values[i] ?? '']));
      series = { labels, count: 0, sum: 0, perBucket: new Array<number>(this.buckets.length + 1).fill(0) };
      this.series.set(key, series);
    }
    return series;
  }

  private add(series: Series, seconds: number): void {
    series.count++;
    series.sum += seconds;
    let i = 0;
    while (i < this.buckets.length && seconds > this.buckets[i]!) i++;
    series.perBucket[i]!++;
  }

  /** What the registry asks of a metric: its name, and `get` for the values at scrape time. */
  private exported(name: string, get: () => ExportedMetric) {
    const reset = () => {
      this.series.clear();
      this.resets++;
    };
    return { name, get: async () => get(), reset };
  }

  private counts(): ExportedMetric {
    const values = [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count }));
    return { name: this.count!.name, help: this.count!.help, type: 'counter', aggregator: 'sum', values };
  }
}

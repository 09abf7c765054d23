import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics } from '../../src/util/request-metrics.js';
import { SeriesMetrics } from '../../src/util/series-metrics.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const LABELS = ['route', 'method', 'status', 'origin'] as const;
const observations: [string, string, number, number, string][] = [
  ['/{domain}/sys/table/{table}', 'GET', 200, 0.0004, 'external'],
  ['/{domain}/sys/table/{table}', 'GET', 200, 0.001, 'external'], // on a bound: counted in it, as Prometheus does
  ['/{domain}/sys/table/{table}', 'GET', 200, 0.05, 'internal'],
  ['/{domain}/sys/table/{table}', 'GET', 404, 3, 'external'], // past the largest bound: +Inf only
  ['/_health', 'HEAD', 200, 0.002, 'external'],
];

describe('request metrics', () => {
  it('export exactly what prom-client counter and histogram export for the same requests', async () => {
    const ours = new Registry();
    const requests = new RequestMetrics(ours, { count: 'reqs_total', duration: 'req_seconds' }, { count: 'count help', duration: 'duration help' }, BUCKETS);
    const theirs = new Registry();
    const counter = new Counter({ name: 'reqs_total', help: 'count help', labelNames: LABELS, registers: [theirs] });
    const histogram = new Histogram({ name: 'req_seconds', help: 'duration help', labelNames: LABELS, buckets: BUCKETS, registers: [theirs] });
    for (const [route, method, status, seconds, origin] of observations) {
      requests.observe(route, method, status, seconds, origin);
      const labels = { route, method, status: String(status), origin };
      counter.inc(labels);
      histogram.observe(labels, seconds);
    }
    const text = await ours.metrics();
    assert.equal(text, await theirs.metrics());
    assert.match(text, /req_seconds_bucket\{le="0.001",route="\/\{domain\}\/sys\/table\/\{table\}",method="GET",status="200",origin="external"\} 2/);
    assert.match(text, /req_seconds_bucket\{le="1",route="\/\{domain\}\/sys\/table\/\{table\}",method="GET",status="404",origin="external"\} 0/);
    assert.match(text, /req_seconds_bucket\{le="\+Inf",route="\/\{domain\}\/sys\/table\/\{table\}",method="GET",status="404",origin="external"\} 1/);
  });

  it('start again from nothing when the registry is reset', async () => {
    const registry = new Registry();
    const requests = new RequestMetrics(registry, { count: 'reqs_total', duration: 'req_seconds' }, { count: 'c', duration: 'd' }, BUCKETS);
    requests.observe('/a', 'GET', 200, 0.5, 'external');
    registry.resetMetrics();
    assert.doesNotMatch(await registry.metrics(), /route="\/a"/);
  });

  it('count through a recorder as through observe, before and after a reset', async () => {
    const registry = new Registry();
    const requests = new RequestMetrics(registry, { count: 'reqs_total', duration: 'req_seconds' }, { count: 'c', duration: 'd' }, BUCKETS);
    const record = requests.recorder('/a', 'GET', 200, 'external');
    record(0.0005);
    requests.observe('/a', 'GET', 200, 0.05, 'external');
    record(0.5);
    let text = await registry.metrics();
    assert.match(text, /reqs_total\{route="\/a",method="GET",status="200",origin="external"\} 3/);
    assert.match(text, /req_seconds_bucket\{le="0.001",route="\/a",method="GET",status="200",origin="external"\} 1/);
    assert.match(text, /req_seconds_bucket\{le="0.1",route="\/a",method="GET",status="200",origin="external"\} 2/);
    registry.resetMetrics();
    record(0.002);
    text = await registry.metrics();
    assert.match(text, /reqs_total\{route="\/a",method="GET",status="200",origin="external"\} 1/);
    assert.match(text, /req_seconds_sum\{route="\/a",method="GET",status="200",origin="external"\} 0.002/);
  });

  it('export a histogram of other labels alone as prom-client\'s histogram does (storage operations)', async () => {
    const ours = new Registry();
    const storage = new SeriesMetrics(ours, ['operation', 'table'], BUCKETS, { name: 'ops_seconds', help: 'ops' });
    const theirs = new Registry();
    const histogram = new Histogram({ name: 'ops_seconds', help: 'ops', labelNames: ['operation', 'table'] as const, buckets: BUCKETS, registers: [theirs] });
    for (const [operation, table, seconds] of [['get', 'parsoid', 0.0002], ['get', 'parsoid', 0.02], ['put', 'parsoid', 0.001], ['get', 'page_revisions', 7]] as const) {
      storage.observe([operation, table], seconds);
      histogram.observe({ operation, table }, seconds);
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
    // What a caller reads in process too (`get`), but for the exemplars neither keeps.
    const { values, ...rest } = await histogram.get();
    assert.deepEqual(storage.get(), { ...rest, values: values.map(({ labels, value, metricName }) => ({ labels, value, metricName })) });
  });
});

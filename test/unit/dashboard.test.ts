import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer } from '../helpers.js';

/** The example Grafana dashboard in deploy/ charts only what the service exports. */
describe('the Grafana dashboard', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('queries only metrics that /metrics exports, with the labels they have', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../../deploy/grafana/wikistore.json', import.meta.url), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    await request(`${s.base}/`);
    const exported = (await request(`${s.base}/metrics`)).text;
    const help = new Map<string, string>();
    for (const [, name] of exported.matchAll(/^# HELP (\w+) /gm)) help.set(name!, name!);
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));
    assert.ok(exprs.length >= 10);
    for (const { panel, expr } of exprs) {
      // Metric names: snake_case words followed by a selector, a range or a closing parenthesis.
      const names = [...expr.matchAll(/\b([a-z]+(?:_[a-z0-9]+)+)\s*(?=[{[)])/g)].map((m) => m[1]!).filter((n) => !n.startsWith('histogram_'));
      assert.ok(names.length > 0, `${panel}: ${expr}`);
      for (const name of names) {
        const base = name.replace(/_(bucket|sum|count)$/, '');
        assert.ok(help.has(name) || help.has(base), `${panel}: ${name} is not exported`);
      }
      const known = new Set(names.flatMap((n) => [...labelsOf(exported, n.replace(/_(bucket|sum|count)$/, '')), ...declaredLabels(s, n)]));
      for (const [, labels] of expr.matchAll(/by \(([^)]+)\)/g)) {
        for (const label of labels!.split(',').map((l) => l.trim()).filter((l) => l !== 'le')) assert.ok(known.has(label), `${panel}: no label ${label} on ${names.join(', ')}`);
      }
    }
  });
});

/** Labels seen on a metric's samples in the exposition text. */
function labelsOf(text: string, base: string): Set<string> {
  const labels = new Set<string>();
  for (const [, inner] of text.matchAll(new RegExp(`^${base}(?:_bucket|_sum|_count)?\\{([^}]*)\\}`, 'gm'))) {
    for (const [, name] of inner!.matchAll(/(\w+)="/g)) labels.add(name!);
  }
  return labels;
}

/** Labels a metric declares, for metrics with no sample yet. */
function declaredLabels(s: TestServer, metric: string): string[] {
  const found = s.app.metrics.registry.getSingleMetric(metric.replace(/_(bucket|sum|count)$/, '')) as unknown as { labelNames?: string[] } | undefined;
  return found?.labelNames ?? [];
}

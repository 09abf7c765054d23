import { compare, load, type Comparison } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startService } from '../service.js';

export interface WorkersReport {
  comparison: Comparison;
  coalescing: { workers: number; concurrent: number; rendersStored: number };
}

/** Renders stored for a title: more than one means two processes each asked Parsoid. */
async function rendersStored(base: string, title: string): Promise<number> {
  const res = await fetch(`${base}/${DOMAIN}/sys/table/parsoid/_query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { title }, proj: ['tid'] }),
  });
  if (res.status !== 200) throw new Error(`counting renders: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { items: unknown[] }).items.length;
}

/**
 * The page API with `workers: 2` next to `workers: 1`, both on every core (as deployed; the load
 * generator shares them), and misses of one revision spread over two workers.
 */
export async function workerScenarios(wikiUrl: string, title: string, coldTitle: string, opts: { seconds: number; rounds: number }): Promise<WorkersReport> {
  const one = await startService('sqlite', wikiUrl, {}, '', 1);
  const two = await startService('sqlite', wikiUrl, {}, '', 2);
  try {
    const gzip = { 'accept-encoding': 'gzip' };
    const path = `/${DOMAIN}/v1/page/${encodeURIComponent(title).replace(/%3A/g, ':')}/html`;
    for (const s of [one, two]) if ((await fetch(`${s.base}${path}`)).status !== 200) throw new Error(`${title} could not be rendered`);
    const comparison = await compare(
      'page latest HTML: 2 workers vs 1 (all cores, load generator among them)',
      opts.rounds,
      () => load({ url: `${two.base}${path}`, headers: gzip }, opts.seconds, 50, false),
      '1 worker',
      () => load({ url: `${one.base}${path}`, headers: gzip }, opts.seconds, 50, false),
    );
    const concurrent = 100;
    const cold = `${two.base}/${DOMAIN}/v1/page/${encodeURIComponent(coldTitle)}/html`;
    const statuses = await Promise.all(Array.from({ length: concurrent }, () => fetch(cold).then((r) => r.status)));
    if (statuses.some((s) => s !== 200)) throw new Error(`misses across workers saw statuses ${[...new Set(statuses)]}`);
    return { comparison, coalescing: { workers: 2, concurrent, rendersStored: await rendersStored(two.base, coldTitle) } };
  } finally {
    await Promise.all([one.stop(), two.stop()]);
  }
}

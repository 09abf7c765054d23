import type { LinkTargetState } from '../../src/upstream/action-api.js';
import { displayHtml } from '../../src/modules/page/display/pipeline.js';
import PQueue from 'p-queue';
import { median } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startService } from '../service.js';
import { api } from '../wiki-api.js';

export interface DisplayComputeReport {
  htmlBytes: number;
  links: number;
  medianMs: number;
  p99Ms: number;
  samples: number;
}

const RUNS = 200;

/**
 * The display passes over one stored render (parse once, every pass, serialise once), timed with
 * the states of its links known (the cost on a miss of the display cache, states aside).
 */
export async function displayCompute(htmlUrl: string, wikiUrl: string): Promise<DisplayComputeReport> {
  const html = await (await fetch(htmlUrl)).text();
  const title = decodeURIComponent(new URL(htmlUrl).pathname.split('/')[4]!);
  const states = new Map<string, LinkTargetState>();
  // The states as the wiki gives them, asked once.
  await displayHtml(title, html, { sectionEdit: true, toc: true, stubThreshold: 0 }, async (targets) => {
    for (let i = 0; i < targets.length; i += 50) {
      const batch = targets.slice(i, i + 50);
      const json = (await (await fetch(`${wikiUrl}/api.php?action=query&prop=info&format=json&formatversion=2&titles=${encodeURIComponent(batch.join('|'))}`)).json()) as any;
      for (const p of json.query?.pages ?? []) {
        const t = String(p.title).replace(/ /g, '_');
        states.set(t, { title: t, exists: !p.missing, redirect: !!p.redirect, disambiguation: false, length: p.length ?? null, ns: p.ns });
      }
    }
    return states;
  });
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await displayHtml(title, html, { sectionEdit: true, toc: true, stubThreshold: i % 2 ? 500 : 0 }, async () => states);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { htmlBytes: Buffer.byteLength(html), links: states.size, medianMs: median(times), p99Ms: times[Math.floor(times.length * 0.99)]!, samples: RUNS };
}

export interface InvalidationReport {
  linking: number;
  /** From the wiki's answer to the creation until every linking page's display was dropped and purged. */
  seconds: number;
}

/**
 * One page created that `linking` stored pages link to: the time from the wiki's answer to the
 * moment the follower has dropped and purged the display of every one of them (no render).
 */
export async function invalidationScenario(wikiUrl: string, linking: number): Promise<InvalidationReport> {
  const service = await startService('sqlite', wikiUrl, {}, 'follow_changes: true\n');
  const target = `Bench display target ${Date.now().toString(36)}`.replace(/ /g, '_');
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const sys = `${service.base}/${DOMAIN}/sys/table`;
  try {
    const metrics = async () => (await fetch(`${service.base}/metrics`)).text();
    for (let i = 0; !/^follower_leading\{domain="bench.example"\} 1$/m.test(await metrics()); i++) {
      if (i > 100) throw new Error('the follower did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    // As displays of `linking` pages leave them: each page's links recorded, the target's state known (missing).
    const writes = new PQueue({ concurrency: 16 });
    await Promise.all(Array.from({ length: linking }, (_, i) => writes.add(async () => {
      const res = await fetch(`${sys}/page_links/`, { method: 'PUT', headers: admin, body: JSON.stringify({ attributes: { title: `Bench_linking_${i}`, target } }) });
      if (res.status >= 300) throw new Error(`page_links: ${res.status} ${await res.text()}`);
    })));
    const state = { target, exists: false, redirect: false, disambiguation: false, length: null, ns: 0, checked: new Date().toISOString() };
    await fetch(`${sys}/link_states/`, { method: 'PUT', headers: admin, body: JSON.stringify({ attributes: state }) });
    const invalidated = async () => Number(/^display_invalidations_total\{domain="bench\.example"\} (\d+)/m.exec(await metrics())?.[1] ?? 0);
    const before = await invalidated();
    await api(wikiUrl, { action: 'edit', title: target, text: 'Created.', token: '+\\' }, true);
    const t0 = performance.now();
    while ((await invalidated()) - before < linking) {
      if (performance.now() - t0 > 60_000) throw new Error('the linking pages were not invalidated within a minute');
      await new Promise((r) => setTimeout(r, 20));
    }
    return { linking, seconds: (performance.now() - t0) / 1000 };
  } finally {
    await service.stop();
  }
}

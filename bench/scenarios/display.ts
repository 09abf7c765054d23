import type { LinkTargetState } from '../../src/upstream/action-api.js';
import { displayHtml } from '../../src/modules/page/display/pipeline.js';
import { median } from '../harness.js';

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

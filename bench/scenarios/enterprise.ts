import { abstractOf } from '../../src/modules/page/model/html-structure.js';
import { median, type Comparison } from '../harness.js';
import { sideBySide } from '../side-by-side.js';
import { DOMAIN, startService } from '../service.js';

/** Corpus articles of the bench (as the page scenarios pick from), the first rendered one measured. */
const CANDIDATES = ['Bodmin', 'Arts_Club_of_Chicago', 'Allen_R._Morris', 'Raith_rovers', '2008_British_motorcycle_Grand_Prix'];

export interface EnterpriseReport {
  comparisons: Comparison[];
  article: { title: string; recordBytes: number };
  /** What a render costs more for its record: its abstract and lead image read from its HTML (the body's other work was there before), ms. */
  perRender: { pages: number; meanMs: number; medianMs: number; maxMs: number };
}

/**
 * Enterprise's On-demand and Structured Contents side by side with a bare server sending the same
 * bytes (SQLite), and the work a render's record adds to storing it.
 */
export async function enterpriseScenarios(wikiUrl: string, opts: { seconds: number; rounds: number }): Promise<EnterpriseReport> {
  const service = await startService('sqlite', wikiUrl);
  try {
    const base = `${service.base}/${DOMAIN}/enterprise/v2`;
    let title: string | undefined;
    let recordBytes = 0;
    const htmls: string[] = [];
    for (const candidate of CANDIDATES) {
      const res = await fetch(`${base}/articles/${encodeURIComponent(candidate)}`);
      if (res.status !== 200) continue;
      const [record] = (await res.json()) as { article_body: { html: string } }[];
      htmls.push(record!.article_body.html);
      if (!title) {
        title = candidate;
        recordBytes = Number(res.headers.get('content-length') ?? 0);
      }
    }
    if (!title) throw new Error('no candidate article could be read');
    // Read once more: its facts asked by the first read are stored now.
    await fetch(`${base}/articles/${encodeURIComponent(title)}`);
    const gzip = { 'accept-encoding': 'gzip' };
    const comparisons: Comparison[] = [
      await sideBySide(service, `enterprise on-demand article ${Math.round(recordBytes / 1024)} KB (sqlite, gzip accepted)`, { path: `/${DOMAIN}/enterprise/v2/articles/${encodeURIComponent(title)}`, headers: gzip }, opts, { minRatio: 0.8 }, { sweep: false }),
      await sideBySide(service, 'enterprise on-demand article, fields name,url,version (sqlite)', { path: `/${DOMAIN}/enterprise/v2/articles/${encodeURIComponent(title)}?fields=name,url,version`, headers: gzip }, opts, { minRatio: 0.5 }, { sweep: false }),
      await sideBySide(service, 'enterprise structured contents (sqlite, gzip accepted)', { path: `/${DOMAIN}/enterprise/v2/structured-contents/${encodeURIComponent(title)}`, headers: gzip }, opts, { minRatio: 0.2 }, { sweep: false }),
    ];
    const times: number[] = [];
    for (let round = 0; round < 20; round++) {
      for (const html of htmls) {
        const t0 = performance.now();
        abstractOf(html);
        times.push(performance.now() - t0);
      }
    }
    times.sort((a, b) => a - b);
    return {
      comparisons, article: { title, recordBytes },
      perRender: { pages: htmls.length, meanMs: times.reduce((a, b) => a + b, 0) / times.length, medianMs: median(times), maxMs: times.at(-1)! },
    };
  } finally {
    await service.stop();
  }
}

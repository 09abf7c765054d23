import { compare, load, rssMb, type Comparison } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { sideBySide } from '../side-by-side.js';
import { coldMisses, type ColdMissRow } from './cold-miss.js';
import { displayCompute, type DisplayComputeReport } from './display.js';

const CANDIDATES = ['Arts_Club_of_Chicago', 'Allen_R._Morris', 'Bodmin', 'Raith_rovers', '2008_British_motorcycle_Grand_Prix', 'Antique_(band)'];

export interface PageReport {
  comparisons: Comparison[];
  article: { title: string; htmlBytes: number };
  coldMiss: ColdMissRow[];
  coalescing: { concurrent: number; parsoidRequests: number };
  /** Computing the display HTML of the article from its stored render. */
  display: DisplayComputeReport;
  rss: { idleMb: number; underLoadPeakMb: number };
}

async function parsoidCount(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = new RegExp(`wiki_requests_total\\{domain="${DOMAIN.replace(/\./g, '\\.')}",endpoint="parsoid"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

async function timed(url: string, init?: RequestInit): Promise<{ ms: number; status: number; body: string }> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  return { ms: performance.now() - t0, status: res.status, body };
}

/** The page API on stored content next to a bare server and next to the wiki itself. */
export async function pageScenarios(wikiUrl: string, opts: { seconds: number; rounds: number }): Promise<PageReport> {
  const service = await startService('sqlite', wikiUrl);
  const v1 = `${service.base}/${DOMAIN}/v1`;
  try {
    const idleMb = rssMb(service.child.pid!).rss;
    // The stored article whose HTML is closest to 50 KB.
    const sizes: { title: string; bytes: number }[] = [];
    for (const title of CANDIDATES) {
      const res = await timed(`${v1}/page/${encodeURIComponent(title).replace(/%3A/g, ':')}/html`);
      if (res.status === 200) sizes.push({ title, bytes: Buffer.byteLength(res.body) });
    }
    if (sizes.length === 0) throw new Error('no candidate article could be rendered');
    const { title, bytes } = sizes.sort((a, b) => Math.abs(a.bytes - 51200) - Math.abs(b.bytes - 51200))[0]!;
    const path = `/${DOMAIN}/v1/page/${encodeURIComponent(title).replace(/%3A/g, ':')}`;
    const latest = await fetch(`${service.base}${path}/html`);
    const [rev, tid] = latest.headers.get('etag')!.replace(/"/g, '').split('/');
    const gzip = { 'accept-encoding': 'gzip' };
    const comparisons: Comparison[] = [];
    comparisons.push(await sideBySide(service, `page latest HTML ${Math.round(bytes / 1024)} KB (gzip accepted)`, { path: `${path}/html`, headers: gzip }, opts, { minRatio: 0.7 }));
    comparisons.push(await sideBySide(service, 'page by-revid HTML (gzip accepted)', { path: `${path}/html/${rev}`, headers: gzip }, opts, { minRatio: 0.6 }));
    comparisons.push(await sideBySide(service, 'page by-tid HTML (gzip accepted)', { path: `${path}/html/${tid}`, headers: gzip }, opts, { minRatio: 0.6 }));
    comparisons.push(await sideBySide(service, 'page latest HTML (identity: gzip not accepted)', { path: `${path}/html`, headers: {} }, opts, { minRatio: 0.5 }));
    comparisons.push(await sideBySide(service, 'page by-revid HTML (identity)', { path: `${path}/html/${rev}`, headers: {} }, opts, { minRatio: 0.5 }));
    // Like for like: the bare server writing its answers as the service does (src/http/write-batch.ts).
    comparisons.push(await sideBySide(service, 'page latest HTML (gzip accepted), like for like', { path: `${path}/html`, headers: gzip }, opts, undefined, { batchedBare: true, sweep: false }));
    comparisons.push(await sideBySide(service, 'page listing', { path: `/${DOMAIN}/v1/page/`, headers: gzip }, opts, { minRatio: 0.5 }));
    // Display HTML (links marked by today's states, TOC, section edit links), cached per render.
    comparisons.push(await sideBySide(service, 'page latest display HTML (gzip accepted, cached)', { path: `${path}/display`, headers: gzip }, opts, { minRatio: 0.5 }));
    const display = await displayCompute(`${service.base}${path}/html`, wikiUrl);

    // Next to the wiki's own REST API for the same page (parser-cache hits; no keep-alive there).
    const wikiReq = { url: `${wikiUrl}/rest.php/v1/page/${encodeURIComponent(title)}/html`, headers: gzip };
    const serviceReq = { url: `${service.base}${path}/html`, headers: gzip };
    comparisons.push(await compare('page latest HTML vs the wiki rest.php/v1 html', opts.rounds, () => load(serviceReq, opts.seconds), 'wiki', () => load(wikiReq, opts.seconds, 8)));

    // rest_v1 (RESTBase's layout, 2.x HTML made once per render) next to /v1/ for the same page.
    const restReq = { url: `${service.base}/${DOMAIN}/rest_v1/page/html/${encodeURIComponent(title).replace(/%3A/g, ':')}`, headers: gzip };
    comparisons.push(await compare('rest_v1 page/html (2.x) vs /v1/ page html', opts.rounds, () => load(restReq, opts.seconds), '/v1/', () => load(serviceReq, opts.seconds), { minRatio: 0.9 }));

    // MediaWiki's REST API (rest.php/v1) from storage: against a bare server sending the same bytes
    // and headers, and against the wiki's own rest.php for the same page.
    const restPhp = `/${DOMAIN}/rest.php/v1/page/${encodeURIComponent(title)}`;
    comparisons.push(await sideBySide(service, 'rest.php/v1 page/html (gzip accepted)', { path: `${restPhp}/html`, headers: gzip }, opts, { minRatio: 0.8, maxP99Ratio: 2 }));
    comparisons.push(await sideBySide(service, 'rest.php/v1 page/with_html (gzip accepted)', { path: `${restPhp}/with_html`, headers: gzip }, opts, { minRatio: 0.8, maxP99Ratio: 2 }));
    const restPhpReq = { url: `${service.base}${restPhp}/html`, headers: gzip };
    comparisons.push(await compare('rest.php/v1 page/html vs the wiki\'s own rest.php/v1 html', opts.rounds, () => load(restPhpReq, opts.seconds), 'wiki', () => load(wikiReq, opts.seconds, 8)));

    const coldMiss = await coldMisses(service.base, wikiUrl);

    // Coalescing: 100 concurrent misses of one render.
    const before = await parsoidCount(service.base);
    const target = `${v1}/page/${encodeURIComponent('Mozilla Firefox'.replace(/ /g, '_'))}/html`;
    const results = await Promise.all(Array.from({ length: 100 }, () => fetch(target).then((r) => r.status)));
    if (results.some((s) => s !== 200)) throw new Error(`coalescing run saw statuses ${[...new Set(results)]}`);
    const parsoidRequests = (await parsoidCount(service.base)) - before;

    return {
      comparisons,
      article: { title, htmlBytes: bytes },
      coldMiss,
      coalescing: { concurrent: 100, parsoidRequests },
      display,
      rss: { idleMb, underLoadPeakMb: rssMb(service.child.pid!).peak },
    };
  } finally {
    await service.stop();
  }
}

import { compare, load, median, quartiles, rssMb, type Comparison } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { sideBySide } from '../side-by-side.js';
import { displayCompute, type DisplayComputeReport } from './display.js';

const CANDIDATES = ['Arts_Club_of_Chicago', 'Allen_R._Morris', 'Bodmin', 'Raith_rovers', '2008_British_motorcycle_Grand_Prix', 'Antique_(band)'];
/**
 * Pages missed cold for the median. Parsoid renders each request anew, and its time for one page
 * varies by a tenth or more from one request to the next (several ms on a 70 ms page), so each
 * difference is noisy: 20 left the median swinging by several ms between runs of the same code.
 */
const COLD_MISSES = 40;

export interface PageReport {
  comparisons: Comparison[];
  article: { title: string; htmlBytes: number };
  coldMiss: { serviceMs: number; directUpstreamMs: number; overheadMs: number; samples: number; quartilesMs: [number, number] };
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

    // Cold misses: the service's time over the upstream chain it waits for (page info, then Parsoid),
    // a median of COLD_MISSES pages, alternating which of the two asks first.
    const diffs: number[] = [];
    const serviceTimes: number[] = [];
    const directTimes: number[] = [];
    const listing = (await (await fetch(`${wikiUrl}/api.php?action=query&list=allpages&apnamespace=0&apfilterredir=nonredirects&apfrom=L&aplimit=${COLD_MISSES}&format=json&formatversion=2`)).json()) as any;
    const coldPages = (listing.query.allpages as { title: string }[]).map((p) => p.title.replace(/ /g, '_'));
    const directChain = async (page: string) => {
      const t0 = performance.now();
      const info = (await (await fetch(`${wikiUrl}/api.php?action=query&prop=revisions|info&titles=${encodeURIComponent(page)}&rvprop=ids|timestamp|user|userid|size|sha1|comment|flags|contentmodel&rvslots=main&format=json&formatversion=2`)).json()) as any;
      const revid = info.query.pages[0].revisions[0].revid;
      await Promise.all([
        fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/pagebundle/${encodeURIComponent(page)}/${revid}`, { headers: { accept: 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/pagebundle/999.0.0"' } }).then((r) => r.arrayBuffer()),
        fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/wikitext/${encodeURIComponent(page)}/${revid}`).then((r) => r.arrayBuffer()),
      ]);
      return performance.now() - t0;
    };
    for (const [i, page] of coldPages.entries()) {
      // Alternate which goes first: the wiki's own caches (templates, Lua) favour the second caller.
      const directFirst = i % 2 === 0;
      const before = directFirst ? await directChain(page) : 0;
      const miss = await timed(`${v1}/page/${encodeURIComponent(page)}/html`);
      const direct = directFirst ? before : await directChain(page);
      if (miss.status !== 200) continue;
      serviceTimes.push(miss.ms);
      directTimes.push(direct);
      diffs.push(miss.ms - direct);
    }

    // Coalescing: 100 concurrent misses of one render.
    const before = await parsoidCount(service.base);
    const target = `${v1}/page/${encodeURIComponent('Mozilla Firefox'.replace(/ /g, '_'))}/html`;
    const results = await Promise.all(Array.from({ length: 100 }, () => fetch(target).then((r) => r.status)));
    if (results.some((s) => s !== 200)) throw new Error(`coalescing run saw statuses ${[...new Set(results)]}`);
    const parsoidRequests = (await parsoidCount(service.base)) - before;

    return {
      comparisons,
      article: { title, htmlBytes: bytes },
      coldMiss: { serviceMs: median(serviceTimes), directUpstreamMs: median(directTimes), overheadMs: median(diffs), samples: diffs.length, quartilesMs: quartiles(diffs) },
      coalescing: { concurrent: 100, parsoidRequests },
      display,
      rss: { idleMb, underLoadPeakMb: rssMb(service.child.pid!).peak },
    };
  } finally {
    await service.stop();
  }
}

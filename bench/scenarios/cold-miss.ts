import { median, quartiles } from '../harness.js';
import { DOMAIN } from '../service.js';

/**
 * Pages missed cold per kind. Parsoid renders each request anew, and its time for one page varies
 * by a tenth or more from one request to the next, so each ratio is noisy; the median of 30 is not.
 */
const PAGES_PER_KIND = 30;
const PAGEBUNDLE_ACCEPT = 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/pagebundle/999.0.0"';
const INFO_PROPS = 'ids|timestamp|user|userid|size|sha1|comment|flags|contentmodel';

/** One kind of cold miss: the service's time against the upstream requests it cannot do without. */
export interface ColdMissRow {
  kind: string;
  samples: number;
  serviceMs: number;
  /** Parsoid's page bundle of the revision alone: the slowest request any miss needs. */
  pagebundleMs: number;
  /** Median of the per-page ratios service / page bundle, with their quartiles. */
  ratio: number;
  ratioQuartiles: [number, number];
  /**
   * The requests the miss needs, made directly as the service makes them: for a page never seen,
   * its latest revision named (with its wikitext), then its page bundle (Parsoid's page routes
   * answer a title with a redirect to its latest revision: the wiki has no shorter way); for a
   * revision known, its page bundle alone (its readers are answered before the wikitext is asked
   * for); by revision id, the revision's metadata and its page bundle at once.
   */
  floor: string;
  floorMs: number;
  floorRatio: number;
  /**
   * A page never seen: Parsoid's page bundle asked for by title (its redirect to the latest
   * revision followed), what a client of Parsoid itself waits for the latest render; with the
   * service's time against it (median of the per-page ratios).
   */
  byTitle?: { ms: number; ratio: number };
}

interface Page {
  title: string;
  rev: number;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

async function ok(url: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
}

/** Content pages from `from` on, with their latest revision ids, asked of the wiki directly. */
async function pagesFrom(wikiUrl: string, from: string): Promise<Page[]> {
  const url = `${wikiUrl}/api.php?action=query&generator=allpages&gapnamespace=0&gapfilterredir=nonredirects&gapfrom=${from}&gaplimit=${PAGES_PER_KIND}&prop=revisions&rvprop=ids&format=json&formatversion=2`;
  const answer = (await (await fetch(url)).json()) as { query: { pages: { title: string; revisions: { revid: number }[] }[] } };
  return answer.query.pages.map((p) => ({ title: p.title.replace(/ /g, '_'), rev: p.revisions[0]!.revid }));
}

/**
 * Cold misses of three kinds, each page against the same requests made directly, in alternating
 * order (the wiki's own caches of templates and modules favour whoever asks second):
 * - a page never seen: the wiki must name its latest revision before Parsoid can render it;
 * - a page whose latest revision is known (listed by the follower, a backfill or an earlier
 *   metadata read) but not rendered: the render alone;
 * - a revision by id never seen: the render is asked for beside the revision's metadata.
 */
export async function coldMisses(serviceBase: string, wikiUrl: string): Promise<ColdMissRow[]> {
  const v1 = `${serviceBase}/${DOMAIN}/v1`;
  const rest = `${wikiUrl}/rest.php/127.0.0.1/v3/page`;
  const pagebundle = (p: Page) => ok(`${rest}/pagebundle/${encodeURIComponent(p.title)}/${p.rev}`, { accept: PAGEBUNDLE_ACCEPT });
  // A miss that asks the Action API anyway asks it for the wikitext too (not Parsoid).
  const infoWithText = (query: string) => fetch(`${wikiUrl}/api.php?action=query&prop=revisions|info&${query}&rvprop=${INFO_PROPS}|content&rvslots=main&format=json&formatversion=2`);
  const chain = async (p: Page) => {
    const answer = (await (await infoWithText(`titles=${encodeURIComponent(p.title)}`)).json()) as { query: { pages: { revisions: { revid: number }[] }[] } };
    await pagebundle({ ...p, rev: answer.query.pages[0]!.revisions[0]!.revid });
  };
  const byTitle = (p: Page) => ok(`${rest}/pagebundle/${encodeURIComponent(p.title)}`, { accept: PAGEBUNDLE_ACCEPT });
  const kinds: { kind: string; from: string; prepare?: (p: Page) => Promise<void>; miss: (p: Page) => Promise<void>; floor: string; direct: (p: Page) => Promise<unknown>; byTitle?: (p: Page) => Promise<void> }[] = [
    {
      kind: 'latest, page never seen', from: 'L', miss: (p) => ok(`${v1}/page/${encodeURIComponent(p.title)}/html`),
      floor: 'latest revision named with its wikitext, then page bundle', direct: chain, byTitle,
    },
    {
      kind: 'latest through rest.php/v1 page/{title}/html, page never seen', from: 'R', miss: (p) => ok(`${serviceBase}/${DOMAIN}/rest.php/v1/page/${encodeURIComponent(p.title)}/html`),
      floor: 'latest revision named with its wikitext, then page bundle', direct: chain, byTitle,
    },
    {
      kind: 'latest, revision known, not rendered', from: 'M', prepare: (p) => ok(`${v1}/page/${encodeURIComponent(p.title)}/`), miss: (p) => ok(`${v1}/page/${encodeURIComponent(p.title)}/html`),
      floor: 'page bundle (the wikitext is asked for after it, not waited for)', direct: pagebundle,
    },
    {
      kind: 'by revision id, never seen', from: 'P', miss: (p) => ok(`${v1}/page/${encodeURIComponent(p.title)}/html/${p.rev}`),
      floor: 'revision metadata with its wikitext, and page bundle, at once', direct: (p) => Promise.all([pagebundle(p), infoWithText(`revids=${p.rev}`).then((r) => r.arrayBuffer())]),
    },
  ];
  const rows: ColdMissRow[] = [];
  for (const k of kinds) {
    const service: number[] = [];
    const bundles: number[] = [];
    const floors: number[] = [];
    const ratios: number[] = [];
    const titled: number[] = [];
    for (const [i, page] of (await pagesFrom(wikiUrl, k.from)).entries()) {
      await k.prepare?.(page);
      const directFirst = i % 2 === 0;
      const direct = async () => {
        bundles.push(await timed(() => pagebundle(page)));
        floors.push(await timed(() => k.direct(page)));
        if (k.byTitle) titled.push(await timed(() => k.byTitle!(page)));
      };
      if (directFirst) await direct();
      service.push(await timed(() => k.miss(page)));
      if (!directFirst) await direct();
      ratios.push(service.at(-1)! / bundles.at(-1)!);
    }
    rows.push({
      kind: k.kind, samples: service.length, serviceMs: median(service), pagebundleMs: median(bundles), ratio: median(ratios), ratioQuartiles: quartiles(ratios),
      floor: k.floor, floorMs: median(floors), floorRatio: median(service.map((s, i) => s / floors[i]!)),
      byTitle: titled.length ? { ms: median(titled), ratio: median(service.map((s, i) => s / titled[i]!)) } : undefined,
    });
  }
  return rows;
}

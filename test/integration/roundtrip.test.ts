import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { roundTrip, type RoundTrip } from '../roundtrip.js';
import { startAgainstWiki, WIKI_URL, type AgainstWiki } from '../wiki.js';

/**
 * The editors' promise over the corpus: what the editor did not touch stays byte for byte.
 * Every article imported into the test wiki (or an even spread of `WIKISTORE_ROUNDTRIP_PAGES` of
 * them) goes through the round trip both surfaces' clients make.
 */
async function corpusArticles(): Promise<string[]> {
  const titles: string[] = [];
  let cont: Record<string, string> = {};
  for (;;) {
    const qs = new URLSearchParams({ action: 'query', format: 'json', formatversion: '2', generator: 'allpages', gapnamespace: '0', gaplimit: '500', gapfilterredir: 'nonredirects', prop: 'revisions', rvprop: 'user', ...cont });
    const json = (await (await fetch(`${WIKI_URL}/api.php?${qs}`)).json()) as { query?: { pages: { title: string; revisions?: { user: string }[] }[] }; continue?: Record<string, string> };
    // Only pages as the corpus left them: tests edit and create pages of their own.
    for (const p of json.query?.pages ?? []) if (p.revisions?.[0]?.user.startsWith('imported>')) titles.push(p.title.replace(/ /g, '_'));
    if (!json.continue) break;
    cont = json.continue;
  }
  titles.sort();
  const limit = Number(process.env.WIKISTORE_ROUNDTRIP_PAGES ?? 0);
  if (!limit || limit >= titles.length) return titles;
  return Array.from({ length: limit }, (_, i) => titles[Math.floor((i * titles.length) / limit)]!);
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  }));
  return results;
}

function report(surface: string, results: RoundTrip[]): { exact: number; edited: number; minimal: number } {
  const exact = results.filter((r) => r.exact).length;
  const edited = results.filter((r) => r.minimal !== undefined);
  const minimal = edited.filter((r) => r.minimal).length;
  console.log(`# ${surface}: no-op exact ${exact}/${results.length}; one-word edit minimal ${minimal}/${edited.length}`);
  for (const r of results.filter((r) => !r.exact || r.minimal === false).slice(0, 10)) console.log(`#   ${r.title}: exact=${r.exact} minimal=${r.minimal} ${r.error ?? ''}`);
  return { exact, edited: edited.length, minimal };
}

describe("editors' round trip over the corpus (rest_v1 as VisualEditor, and /v1/)", () => {
  let w: AgainstWiki;
  let titles: string[];
  const wikitexts = new Map<number, Promise<string>>();
  const wikitextOf = (rev: number) => {
    if (!wikitexts.has(rev)) wikitexts.set(rev, w.wiki.wikitext(rev));
    return wikitexts.get(rev)!;
  };
  before(async () => {
    w = await startAgainstWiki();
    titles = await corpusArticles();
  });
  after(() => w?.close());

  for (const surface of ['rest_v1', 'v1'] as const) {
    it(`${surface}: the unchanged HTML gives back the exact wikitext of every article, and a one-word edit changes one line of at least 97%`, async () => {
      assert.ok(titles.length >= Math.min(50, Number(process.env.WIKISTORE_ROUNDTRIP_PAGES || 50)), `corpus articles found: ${titles.length}`);
      const results = await pool(titles, 3, (title) => roundTrip(w.s.base, 'wiki.test', title, wikitextOf, surface));
      const { exact, edited, minimal } = report(surface, results);
      assert.equal(exact, results.length, 'every no-op round trip is exact');
      assert.ok(edited >= titles.length / 2, `most articles have a paragraph to edit (${edited})`);
      assert.ok(minimal >= Math.ceil(edited * 0.97), `${minimal} of ${edited} edits changed only their line`);
    });
  }
});

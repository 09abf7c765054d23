import { compare, load, type Comparison, type Sample } from '../harness.js';
import { DOMAIN, startService } from '../service.js';

/** Asked of the wiki for each revision, as the service asks when it checks a stored one. */
const RVPROP = 'ids|timestamp|user|userid|size|sha1|comment|flags|contentmodel|tags';

interface Revision {
  title: string;
  rev: number;
}

/** Revisions of the imported articles (plain titles), asked of the wiki directly. */
async function importedRevisions(wikiUrl: string): Promise<Revision[]> {
  const url = `${wikiUrl}/api.php?action=query&list=allrevisions&arvlimit=500&arvprop=ids|user&arvdir=newer&arvnamespace=0&format=json&formatversion=2`;
  const answer = (await (await fetch(url)).json()) as { query: { allrevisions: { title: string; revisions: { revid: number; user: string }[] }[] } };
  return answer.query.allrevisions
    .filter((page) => /^[A-Za-z0-9 ]+$/.test(page.title))
    .flatMap((page) => page.revisions.filter((r) => r.user.startsWith('imported>')).map((r) => ({ title: page.title.replace(/ /g, '_'), rev: r.revid })));
}

async function wikiRequests(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return [...text.matchAll(/^wiki_requests_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/**
 * Reads of stored revisions, each due for its check with the wiki (`revision_recheck_interval: 0`:
 * a store's long tail, where a revision is read less often than the interval), beside the wiki
 * answering one revision query per read at the same 50 connections: what a service that checks
 * each read with its own query could do at best. The note gives the wiki's requests per read and
 * the same reads with no check due.
 */
export async function recheckScenario(wikiUrl: string, opts: { seconds: number; rounds: number }): Promise<Comparison> {
  const revisions = await importedRevisions(wikiUrl);
  const paths = revisions.map((r) => `/${DOMAIN}/v1/page/${r.title}/html/${r.rev}`);
  const due = await startService('sqlite', wikiUrl, {}, 'revision_recheck_interval: 0\n');
  const notDue = await startService('sqlite', wikiUrl, {}, 'revision_recheck_interval: 86400\n');
  try {
    // Each revision stored (rendered once) in both, a few at a time.
    for (const base of [due.base, notDue.base]) {
      for (let i = 0; i < paths.length; i += 8) {
        await Promise.all(paths.slice(i, i + 8).map(async (path) => {
          const res = await fetch(`${base}${path}`);
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
        }));
      }
    }
    const reads = (base: string) => () => load({ url: `${base}${paths[0]}`, paths, headers: { 'accept-encoding': 'gzip' } }, opts.seconds);
    const queries = revisions.map((r) => `/api.php?action=query&format=json&formatversion=2&errorformat=plaintext&prop=revisions%7Cinfo&revids=${r.rev}&rvprop=${encodeURIComponent(RVPROP)}&rvslots=main`);
    let asked = 0;
    let served = 0;
    const counted = async () => {
      const before = await wikiRequests(due.base);
      const sample = await reads(due.base)();
      asked += (await wikiRequests(due.base)) - before;
      // The load's warm-up second is served and asks the wiki too.
      served += sample.rps * (opts.seconds + 1);
      return sample;
    };
    const comparison = await compare(
      `page by-revid HTML, every read due for its check with the wiki (${revisions.length} revisions)`,
      opts.rounds,
      counted,
      "the wiki's revision query, one per read",
      () => load({ url: `${wikiUrl}${queries[0]}`, paths: queries }, opts.seconds),
    );
    const unchecked: Sample[] = [];
    for (let i = 0; i < opts.rounds; i++) unchecked.push(await reads(notDue.base)());
    const none = unchecked.map((s) => s.rps).sort((a, b) => a - b)[Math.floor(unchecked.length / 2)]!;
    return { ...comparison, note: `wiki requests per read ${(asked / served).toFixed(3)}; the same reads with no check due ${none.toFixed(0)} req/s (${(comparison.service.rps / none).toFixed(2)} of it)` };
  } finally {
    await due.stop();
    await notDue.stop();
  }
}

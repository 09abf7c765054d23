import type { Comparison } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { sideBySide } from '../side-by-side.js';

/** One engine the page API is read on: its storage section for startService. */
export interface PageEngine {
  name: string;
  storage: Parameters<typeof startService>[0];
}

/**
 * The page API's reads of one stored article on each engine set up (SQLite, PostgreSQL, MariaDB,
 * Cassandra), each beside a bare server sending the same bytes and headers: /v1/ latest and by
 * revision, and MediaWiki's rest.php/v1 HTML.
 */
export async function pageEngineScenarios(wikiUrl: string, title: string, engines: PageEngine[], opts: { seconds: number; rounds: number }): Promise<Comparison[]> {
  const comparisons: Comparison[] = [];
  const gzip = { 'accept-encoding': 'gzip' };
  const segment = encodeURIComponent(title).replace(/%3A/g, ':');
  for (const engine of engines) {
    const service = await startService(engine.storage, wikiUrl);
    try {
      const path = `/${DOMAIN}/v1/page/${segment}`;
      const latest = await fetch(`${service.base}${path}/html`);
      await latest.arrayBuffer();
      if (latest.status !== 200) throw new Error(`${engine.name}: ${title} answered ${latest.status}`);
      const rev = latest.headers.get('etag')!.replace(/"/g, '').split('/')[0];
      await fetch(`${service.base}/${DOMAIN}/rest.php/v1/page/${segment}/html`).then((r) => r.arrayBuffer());
      const quiet = { sweep: false };
      comparisons.push(await sideBySide(service, `page latest HTML on ${engine.name} (gzip accepted)`, { path: `${path}/html`, headers: gzip }, opts, { minRatio: 0.7 }, quiet));
      comparisons.push(await sideBySide(service, `page by-revid HTML on ${engine.name} (gzip accepted)`, { path: `${path}/html/${rev}`, headers: gzip }, opts, { minRatio: 0.6 }, quiet));
      comparisons.push(await sideBySide(service, `rest.php/v1 page/html on ${engine.name} (gzip accepted)`, { path: `/${DOMAIN}/rest.php/v1/page/${segment}/html`, headers: gzip }, opts, { minRatio: 0.8 }, quiet));
    } finally {
      await service.stop();
    }
  }
  return comparisons;
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SnapshotWriter } from '../src/modules/page/snapshot/snapshot-writer.js';
import { inThread } from '../src/modules/page/snapshot/record-formatter.js';
import { workerFormatter } from '../src/modules/page/thread/page-thread.js';
import { toolApp, toolConfig } from '../src/bin/tool.js';

/**
 * One measured snapshot of a store, from storage alone (the store's config in CONFIG; argv: the
 * domain, the moment, perhaps the worker threads): pages/s and MB/s of NDJSON, peak RSS, the
 * page bodies made and copied; then the same pages' rows read
 * through the table API alone (the revision current then, its row, its render), the baseline.
 * With REMAKE_BODIES=1, the store's snapshot bodies are dropped first: the snapshot makes each
 * (a store whose renders were made with `snapshot_bodies: snapshot`, or before bodies were made
 * as renders are stored). Prints one JSON line.
 */
const [domain, atText, threadsText] = process.argv.slice(2);
// Worker threads making the records: as many as cores (the command's default), or 0 for none.
const threads = threadsText === undefined ? undefined : Number(threadsText);
const at = Date.parse(atText!);
const { app, ctx } = await toolApp(toolConfig(), 'snapshot-bench');
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-snapshot-bench-'));
let peakRss = 0;
// RSS counts the store's pages SQLite maps into memory (file-backed, given back under pressure)
// beside the process's own: the anonymous part alone is what the snapshot holds.
let peakAnon = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  peakAnon = Math.max(peakAnon, Number(/RssAnon:\s+(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024);
}, 100);
try {
  if (process.env.REMAKE_BODIES === '1') await app.storage.dropTable(domain!, 'snapshot_bodies');
  // The records as the previous release wrote them, without what the wiki says of each page: its facts' table emptied.
  if (process.env.WITHOUT_FACTS === '1') {
    await app.storage.dropTable(domain!, 'page_facts');
    await app.page.service.facts.create(ctx, domain!);
  }
  const formatter = threads === 0 ? inThread : workerFormatter(threads);
  const writer = new SnapshotWriter(app.page.service, domain!, formatter);

  /** One snapshot into `dir`: its rate, its phases, and the titles it wrote. */
  const snapshot = async (dir: string) => {
    const t0 = performance.now();
    // When the first and the last page were written: what comes before and after is the run's fixed cost.
    let firstPage: number | undefined;
    let lastPage = t0;
    const progress = () => {
      lastPage = performance.now();
      firstPage ??= lastPage;
    };
    const report = await writer.run(ctx, { at, namespaces: [0], out: dir, pagesPerChunk: 1000, concurrency: 4, storageOnly: true, progress });
    const seconds = (performance.now() - t0) / 1000;
    const phases = { beforeFirstPageMs: (firstPage ?? lastPage) - t0, afterLastPageMs: t0 + seconds * 1000 - lastPage };
    const counts = (report.manifest as { counts: Record<string, number> }).counts;
    const work = path.join(dir, '.work');
    const ndjsonBytes = fs.readdirSync(work).filter((f) => /^chunk-.*\.meta\.json$/.test(f)).reduce((n, f) => n + (JSON.parse(fs.readFileSync(path.join(work, f), 'utf8')) as { bytes: number }).bytes, 0);
    const titles = fs.readFileSync(path.join(work, 'titles-0.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { title: string }).title);
    return { pages: counts.written ?? 0, seconds, phases, ndjsonBytes, titles, bodies: report.bodies };
  };

  /** The baseline: the rows a snapshot needs of each page, through the table API, four at a time (pages/s). */
  const tableRead = async (titles: string[]) => {
    const t1 = performance.now();
    let read = 0;
    let next = 0;
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < titles.length) {
        const title = titles[next++]!;
        const { items } = await app.storage.get(domain!, { table: 'page_revisions', index: 'by_time', attributes: { title, timestamp: { le: at } }, proj: ['rev'], limit: 1 });
        const rev = items[0]?.rev;
        if (rev === undefined) continue;
        const row = (await app.storage.get(domain!, { table: 'page_revisions', attributes: { title, rev } })).items[0];
        if (!row?.tid || row.text_hidden || row.deleted) continue;
        const render = (await app.storage.get(domain!, { table: 'parsoid', attributes: { title, rev, tid: row.tid } })).items[0];
        if (render) read++;
      }
    }));
    return { pages: read, pagesPerSecond: read / ((performance.now() - t1) / 1000) };
  };

  const first = await snapshot(path.join(out, 'first'));
  const table = await tableRead(first.titles);
  // The same again in the same process: both with their code compiled and the store's pages in
  // memory. The first snapshot is the only one of its process, the table's read comes after it.
  const second = await snapshot(path.join(out, 'again'));
  const tableAgain = await tableRead(second.titles);
  await formatter.close();
  console.log(JSON.stringify({
    pages: first.pages, seconds: first.seconds, pagesPerSecond: first.pages / first.seconds, mbPerSecond: first.ndjsonBytes / 1e6 / first.seconds,
    peakRssMb: peakRss / 1e6, peakAnonMb: peakAnon / 1e6, ...first.phases, tablePages: table.pages, tablePagesPerSecond: table.pagesPerSecond, bodies: first.bodies,
    again: { pagesPerSecond: second.pages / second.seconds, tablePagesPerSecond: tableAgain.pagesPerSecond },
  }));
} finally {
  clearInterval(sampler);
  fs.rmSync(out, { recursive: true, force: true });
  await app.close();
}
process.exit(0);

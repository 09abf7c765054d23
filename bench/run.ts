import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Comparison } from './harness.js';
import { branchScenarios } from './scenarios/branches.js';
import { backfillScenario, dependentsScenario, followerScenario, type BackfillReport, type DependentsReport, type FollowerReport } from './scenarios/follower.js';
import { httpScenarios } from './scenarios/http.js';
import { invalidationScenario, type InvalidationReport } from './scenarios/display.js';
import { pageScenarios, type PageReport } from './scenarios/page.js';
import { recheckScenario } from './scenarios/rechecks.js';
import { pageEngineScenarios, type PageEngine } from './scenarios/page-engines.js';
import { saveScenario, type SaveReport } from './scenarios/save.js';
import { noticesScenario, type NoticesReport } from './scenarios/notices.js';
import { streamScenario, type StreamReport } from './scenarios/stream.js';
import { storageScenarios } from './scenarios/storage.js';
import { scaleScenario, type ScaleRow } from './scenarios/scale.js';
import { sweepScenario, type SweepRow } from './scenarios/transaction-sweep.js';
import { workerScenarios, type WorkersReport } from './scenarios/workers.js';
import { benchFlags } from './flags.js';
import { enterpriseScenarios } from './scenarios/enterprise.js';
import { cassandraFarm, farmScenario, mariadbFarm, postgresFarm, sqliteFarm } from './scenarios/farm.js';

const outDir = 'bench-results';
const flags = benchFlags(process.argv.slice(2));
if (flags.sweep) {
  // The transaction sweep as the store grows: `--sweep=1000,100000,1000000`, on each backend set up.
  await runSweep(flags.sweep);
  process.exit(0);
}

if (flags.farm) {
  // One service before a synthetic farm of each size in turn (`--farm=10,1000,10000`).
  // On SQLite, and on each server engine named in the environment (Cassandra: every node, comma-separated).
  const engines = [sqliteFarm];
  if (process.env.WIKISTORE_BENCH_PG_URL) engines.push(postgresFarm(process.env.WIKISTORE_BENCH_PG_URL));
  if (process.env.WIKISTORE_BENCH_MARIADB_URL) engines.push(mariadbFarm(process.env.WIKISTORE_BENCH_MARIADB_URL));
  if (process.env.WIKISTORE_BENCH_CASSANDRA) engines.push(cassandraFarm(process.env.WIKISTORE_BENCH_CASSANDRA.split(',')));
  const rows = await farmScenario(engines, flags.farm, flags.quick);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'farm.json'), JSON.stringify(rows, null, 2));
  console.log('\nengine | wikis | start-up ms | tables | idle RSS MB | idle farm req/s | idle store writes/s | served | RSS after MB | tables after | spread/one-wiki reads | flood: farm requests, RSS MB, tables');
  for (const r of rows) {
    console.log(`${r.engine} | ${r.wikis} | ${r.startupMs} | ${r.tables} | ${r.idleRssMb} | ${r.idleFarmRps} | ${r.idleStoreWritesPerS} | ${r.served} | ${r.servedRssMb} | ${r.tablesAfterServing} | ${r.spreadRps}/${r.oneWikiRps} = ${(r.spreadRps / r.oneWikiRps).toFixed(2)} | ${r.farmRequestsForFlood} of ${r.floodRequests} ${JSON.stringify(r.floodStatuses)}, ${r.floodRssMb}, ${r.tablesAfterFlood}`);
  }
  process.exit(0);
}

if (flags.enterprise) {
  // Enterprise's On-demand and Structured Contents beside their bare servers; the snapshot with the
  // complete records is the scale bench's (`--scale`).
  const wiki = process.env.WIKISTORE_BENCH_WIKI_URL;
  if (!wiki) throw new Error('--enterprise needs the wiki (WIKISTORE_BENCH_WIKI_URL)');
  const report = await enterpriseScenarios(wiki, { seconds: flags.quick ? 3 : 5, rounds: flags.quick ? 2 : 3 });
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'enterprise.json'), JSON.stringify(report, null, 2));
  for (const c of report.comparisons) {
    console.log(`${c.scenario}: ${c.service.rps.toFixed(0)} req/s, p99 ${c.service.p99Ms?.toFixed(2)} ms; bare ${c.baseline.rps.toFixed(0)} req/s, p99 ${c.baseline.p99Ms?.toFixed(2)} ms; ratio ${c.ratio.toFixed(2)}${c.target ? ` (${c.met ? 'met' : 'MISSED'})` : ''}`);
  }
  const r = report.perRender;
  console.log(`a render's record work (abstract, lead image from its HTML), ${r.pages} corpus renders: mean ${r.meanMs.toFixed(2)} ms, median ${r.medianMs.toFixed(2)} ms, max ${r.maxMs.toFixed(2)} ms`);
  process.exit(0);
}

const scaleSizes = flags.scale;
const cassandraScaleSizes = flags.scaleCassandra;
if (scaleSizes || cassandraScaleSizes) {
  // The store grown to each size in turn, on SQLite and PostgreSQL (`--scale=10000,100000`) and on
  // Cassandra (`--scale-cassandra=10000,100000`, on every node named in WIKISTORE_BENCH_CASSANDRA,
  // comma-separated: scripts/cassandra.sh start 3 makes three).
  await runScale(scaleSizes ?? [], cassandraScaleSizes ?? []);
  process.exit(0);
}

const quick = flags.quick;
// Bounded: the default run takes about 15 minutes, --quick about 6.
// Five shorter rounds where there is time: one round's swing moves a median of five less than one of three.
const opts = quick ? { seconds: 1, rounds: 3 } : { seconds: 2, rounds: 5 };
const pgUrl = process.env.WIKISTORE_BENCH_PG_URL;

const comparisons: Comparison[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-bench-'));
comparisons.push(...(await storageScenarios('sqlite', { backend: 'sqlite', path: path.join(dir, 'layer.sqlite3') }, opts)));
if (pgUrl) comparisons.push(...(await storageScenarios('postgres', { backend: 'postgres', url: pgUrl, pool_size: 10 }, opts)));
else console.warn('WIKISTORE_BENCH_PG_URL not set: PostgreSQL scenarios skipped');
const mariadbUrl = process.env.WIKISTORE_BENCH_MARIADB_URL;
if (mariadbUrl) comparisons.push(...(await storageScenarios('mariadb', { backend: 'mariadb', url: mariadbUrl, pool_size: 10 }, opts)));
else console.warn('WIKISTORE_BENCH_MARIADB_URL not set: MariaDB scenarios skipped');
const cassandraHost = process.env.WIKISTORE_BENCH_CASSANDRA;
if (cassandraHost) {
  comparisons.push(
    ...(await storageScenarios('cassandra', {
      backend: 'cassandra', contact_points: [cassandraHost], local_data_center: 'datacenter1', keyspace_prefix: 'bench',
      replication: { datacenter1: 1 }, consistency: { read: 'local_quorum', write: 'local_quorum', serial: 'serial' },
    }, opts)),
  );
} else console.warn('WIKISTORE_BENCH_CASSANDRA not set: Cassandra scenarios skipped');
const http = await httpScenarios(opts);
comparisons.push(...http.comparisons);
const wikiUrl = process.env.WIKISTORE_BENCH_WIKI_URL;
let page: PageReport | undefined;
let save: SaveReport | undefined;
let notices: NoticesReport | undefined;
let stream: StreamReport | undefined;
let follower: FollowerReport | undefined;
let backfill: BackfillReport | undefined;
let dependents: DependentsReport | undefined;
let invalidation: InvalidationReport | undefined;
let workers: WorkersReport | undefined;
if (wikiUrl) {
  page = await pageScenarios(wikiUrl, opts);
  comparisons.push(...page.comparisons);
  comparisons.push(await recheckScenario(wikiUrl, opts));
  // The same reads on every engine set up, each beside its bare server.
  const engines: PageEngine[] = [{ name: 'sqlite', storage: 'sqlite' }];
  if (pgUrl) engines.push({ name: 'postgres', storage: { yaml: `  backend: postgres\n  url: ${JSON.stringify(pgUrl)}` } });
  if (mariadbUrl) engines.push({ name: 'mariadb', storage: { yaml: `  backend: mariadb\n  url: ${JSON.stringify(mariadbUrl)}` } });
  if (cassandraHost) {
    engines.push({
      name: 'cassandra',
      storage: { yaml: `  backend: cassandra\n  contact_points: [${JSON.stringify(cassandraHost)}]\n  local_data_center: datacenter1\n  keyspace_prefix: benchpage\n  replication: { datacenter1: 1 }` },
    });
  }
  comparisons.push(...(await pageEngineScenarios(wikiUrl, page.article.title, engines, opts)));
  workers = await workerScenarios(wikiUrl, page.article.title, 'Mozilla_Firefox', opts);
  comparisons.push(workers.comparison);
  save = await saveScenario(wikiUrl, quick ? 6 : 20);
  notices = await noticesScenario(wikiUrl, quick ? 20 : 60);
  stream = await streamScenario(wikiUrl, quick ? 10 : 30, 1000);
  follower = await followerScenario(wikiUrl, quick ? 20 : 50);
  backfill = await backfillScenario(wikiUrl, quick ? 40 : 200);
  dependents = await dependentsScenario(wikiUrl, quick ? 100 : 1000);
  invalidation = await invalidationScenario(wikiUrl, 1000);
  comparisons.push(...(await branchScenarios(wikiUrl, opts)));
} else console.warn('WIKISTORE_BENCH_WIKI_URL not set: page scenarios skipped');

/** "≥0.5, p99 ≤2× bare": what a comparison is held to. */
function describeTarget(t: NonNullable<Comparison['target']>): string {
  return [t.minRatio === undefined ? undefined : `≥${t.minRatio}`, t.maxP99Ratio === undefined ? undefined : `p99 ≤${t.maxP99Ratio}× baseline`].filter(Boolean).join(', ');
}
const fmt = (n: number | undefined, digits = 0) => (n === undefined ? '-' : n.toFixed(digits));
const rows = comparisons.map((c) => [
  c.scenario,
  fmt(c.service.rps),
  fmt(c.service.p50Ms, 2),
  fmt(c.service.p99Ms, 2),
  fmt(c.service.p999Ms, 2),
  `${c.baselineName} ${fmt(c.baseline.rps)}`,
  fmt(c.baseline.p99Ms, 2),
  fmt(c.baseline.p999Ms, 2),
  c.ratioSpread && c.ratioSpread[0] !== c.ratioSpread[1] ? `${fmt(c.ratio, 2)} (${fmt(c.ratioSpread[0], 2)}–${fmt(c.ratioSpread[1], 2)})` : fmt(c.ratio, 2),
  c.target ? `${c.met ? 'met' : 'MISSED'} (${describeTarget(c.target)})` : '',
]);
const header = ['scenario', 'ops/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'baseline ops/s', 'base p99', 'base p99.9', 'ratio (rounds)', 'target'];
function table(head: string[], body: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of body) console.log(line(r));
}
table(header, rows);
for (const c of comparisons) if (c.note) console.log(`${c.scenario}: ${c.note}`);
// The storage layer and its driver run in this process: what each costs it, beside the throughput
// a server on the same cores makes noisy.
const inProcess = comparisons.filter((c) => c.scenario.startsWith('storage ') && c.service.cpuUsPerOp !== undefined && c.baseline.cpuUsPerOp !== undefined);
if (inProcess.length > 0) {
  console.log('\nthis process\'s CPU per operation (µs, median of the rounds): layer vs its driver');
  for (const c of inProcess) console.log(`  ${c.scenario}: ${fmt(c.service.cpuUsPerOp, 1)} vs ${fmt(c.baseline.cpuUsPerOp, 1)} (${fmt(c.service.cpuUsPerOp! - c.baseline.cpuUsPerOp!, 1)} more)`);
}
const swept = comparisons.filter((c) => c.sweep);
if (swept.length > 0) {
  console.log('\nby connections (one run each side): ops/s and p99 ms, service vs bare');
  const counts = swept[0]!.sweep!.map((s) => s.connections);
  table(
    ['scenario', ...counts.map((n) => `${n} conn: service`), ...counts.map((n) => `${n} conn: bare`)],
    swept.map((c) => [
      c.scenario,
      ...c.sweep!.map((s) => `${fmt(s.service.rps)} / ${fmt(s.service.p99Ms, 1)}`),
      ...c.sweep!.map((s) => `${fmt(s.baseline.rps)} / ${fmt(s.baseline.p99Ms, 1)}`),
    ]),
  );
}
const peakMb = Math.max(http.rss.underLoadPeakMb, page?.rss.underLoadPeakMb ?? 0);
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
console.log(`\nservice start to listening: ${http.startupMs.toFixed(0)} ms`);
console.log(`service RSS: idle ${http.rss.idleMb.toFixed(1)} MB, peak under load ${peakMb.toFixed(1)} MB (target ≤150 MB: ${verdict(peakMb <= 150)})`);
if (page) {
  const { coldMiss, coalescing, article } = page;
  console.log(`page article: ${article.title} (${(article.htmlBytes / 1024).toFixed(1)} KB of HTML)`);
  for (const c of coldMiss) {
    const chain = `; vs the requests it needs made directly (${c.floor}) ${c.floorMs.toFixed(1)} ms: ${c.floorRatio.toFixed(2)}×` +
      (c.byTitle ? `; vs Parsoid's page bundle by title (its redirect to the latest revision followed) ${c.byTitle.ms.toFixed(1)} ms: ${c.byTitle.ratio.toFixed(2)}×` : '');
    console.log(
      `cold miss, ${c.kind}: service ${c.serviceMs.toFixed(1)} ms vs Parsoid's page bundle alone ${c.pagebundleMs.toFixed(1)} ms: ${c.ratio.toFixed(2)}× ` +
        `(median of ${c.samples} pages, quartiles ${c.ratioQuartiles.map((q) => q.toFixed(2)).join('–')}; target ≤1.15×: ${verdict(c.ratio <= 1.15)})${chain}`,
    );
  }
  if (save) {
    console.log(
      `save: service ${save.serviceMs.toFixed(1)} ms vs the same edit made directly plus the render it stores ${save.directUpstreamMs.toFixed(1)} ms: ` +
        `${save.overheadMs.toFixed(1)} ms added (median of ${save.samples}; target ≤10 ms: ${verdict(save.overheadMs <= 10)}); ` +
        `slowest ${save.serviceMaxMs.toFixed(1)} ms vs ${save.directMaxMs.toFixed(1)} ms`,
    );
  }
  if (notices) {
    console.log(
      `edit on the wiki with the WikistoreNotify extension: median ${notices.withMs.median.toFixed(0)} ms, p99 ${notices.withMs.p99.toFixed(0)} ms vs without ` +
        `${notices.withoutMs.median.toFixed(0)} ms, p99 ${notices.withoutMs.p99.toFixed(0)} ms: ${notices.addedMedianMs.toFixed(0)} ms added (median), ${notices.addedP99Ms.toFixed(0)} ms (p99); ` +
        `reads right after the edit that showed it: ${notices.freshReads} of ${notices.samples} (target: all: ${verdict(notices.freshReads === notices.samples)})`,
    );
  }
  if (stream) {
    console.log(
      `change stream: an edit's event ${stream.latencyMs.median.toFixed(0)} ms (median), ${stream.latencyMs.p99.toFixed(0)} ms (p99) after the wiki answered it, the notice pushed ` +
        `(${stream.latencyMs.samples} edits; target p99 ≤ 100 ms: ${verdict(stream.latencyMs.p99 <= 100)}); with the follower alone (polling every ${stream.followedMs.pollSeconds} s) ` +
        `${stream.followedMs.median.toFixed(0)} ms (median), ${stream.followedMs.p99.toFixed(0)} ms (p99) (${stream.followedMs.samples} edits; target p99 ≤ 1 s: ${verdict(stream.followedMs.p99 <= 1000)}); ` +
        `RSS ${stream.rssMb.before.toFixed(0)} MB, ${stream.rssMb.after.toFixed(0)} MB with ${stream.rssMb.streams} idle streams open`,
    );
  }
  if (follower) {
    console.log(
      `follower lag over a burst of ${follower.edits} edits on ${follower.pages} pages (wiki's answer to stored and rendered, polling every ${follower.pollSeconds} s): ` +
        `median ${follower.lagMedianMs.toFixed(0)} ms, p99 ${follower.lagP99Ms.toFixed(0)} ms, max ${follower.lagMaxMs.toFixed(0)} ms (target: fresh within 3 s: ${verdict(follower.lagP99Ms <= 3000)})`,
    );
  }
  if (backfill) {
    console.log(
      `backfill: ${backfill.backfillPagesPerSecond.toFixed(1)} pages/s vs the wiki's Parsoid alone ${backfill.directPagesPerSecond.toFixed(1)} pages/s ` +
        `(${backfill.pages} pages, concurrency ${backfill.concurrency}; ratio ${(backfill.backfillPagesPerSecond / backfill.directPagesPerSecond).toFixed(2)})`,
    );
  }
  if (invalidation) {
    console.log(
      `display invalidation: ${invalidation.linking} pages linking to a page created on the wiki dropped and purged ${invalidation.seconds.toFixed(2)} s after the wiki's answer ` +
        `(no render; target ≤2 s: ${verdict(invalidation.seconds <= 2)})`,
    );
  }
  if (dependents) {
    console.log(
      `template dependents: ${dependents.dependents} stored pages re-rendered in ${dependents.seconds.toFixed(1)} s after the template's edit ` +
        `(${dependents.perSecond.toFixed(1)}/s vs the wiki's Parsoid alone ${dependents.directPerSecond.toFixed(1)}/s; target 1,000 in ≤60 s: ` +
        `${verdict(dependents.perSecond >= 1000 / 60)})`,
    );
  }
  const d = page.display;
  console.log(
    `display HTML computed from a stored render of ${Math.round(d.htmlBytes / 1024)} KB with ${d.links} links: median ${d.medianMs.toFixed(2)} ms, p99 ${d.p99Ms.toFixed(2)} ms ` +
      `(${d.samples} runs; target median ≤5 ms: ${verdict(d.medianMs <= 5)})`,
  );
  console.log(`coalescing: ${coalescing.concurrent} concurrent misses -> ${coalescing.parsoidRequests} Parsoid request(s) (target 1: ${verdict(coalescing.parsoidRequests === 1)})`);
  if (workers) {
    const w = workers.coalescing;
    console.log(`coalescing across ${w.workers} workers: ${w.concurrent} concurrent misses -> ${w.rendersStored} render(s) made and stored (target 1: ${verdict(w.rendersStored === 1)})`);
  }
}
for (const c of comparisons.filter((c) => c.met === false)) {
  console.log(`MISSED: ${c.scenario}: ratio ${c.ratio.toFixed(2)}, p99 ${fmt(c.service.p99Ms, 1)} ms vs ${fmt(c.baseline.p99Ms, 1)} ms (target ${describeTarget(c.target!)})`);
}

fs.mkdirSync(outDir, { recursive: true });
const file = path.join(outDir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), quick, comparisons, startupMs: http.startupMs, rss: http.rss, page, save, notices, stream, follower, backfill, workers }, null, 2));
console.log(`\nresults: ${file}`);

/** A ratio of two durations, or '-' when the smaller one is too short to divide by. */
function ratio(value: number, base: number): string {
  return base > 0.01 ? (value / base).toFixed(2) : '-';
}

async function runSweep(sizes: number[]): Promise<void> {
  const rows: SweepRow[] = [];
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-sweep-'));
  rows.push(...(await sweepScenario('sqlite', { backend: 'sqlite', path: path.join(scratch, 'sweep.sqlite3') }, sizes)));
  if (process.env.WIKISTORE_BENCH_PG_URL) rows.push(...(await sweepScenario('postgres', { backend: 'postgres', url: process.env.WIKISTORE_BENCH_PG_URL, pool_size: 10 }, sizes)));
  const host = process.env.WIKISTORE_BENCH_CASSANDRA;
  if (host) {
    rows.push(...(await sweepScenario('cassandra', {
      backend: 'cassandra', contact_points: host.split(','), local_data_center: 'datacenter1', keyspace_prefix: 'bench',
      replication: { datacenter1: host.split(',').length }, consistency: { read: 'local_quorum', write: 'local_quorum', serial: 'serial' },
    }, sizes)));
  }
  console.log('\nTransaction sweep as finished transactions pile up (20 of a dead process to finish; ratios against the smallest size):');
  console.log('backend    finished  fill s  finish 20 s  cold sweep ms  warm sweep ms  cold ×  warm ×');
  for (const r of rows) {
    const smallest = rows.find((x) => x.backend === r.backend)!;
    console.log([
      r.backend.padEnd(9), String(r.finished).padStart(9), r.fillSeconds.toFixed(1).padStart(7), r.recoverSeconds.toFixed(2).padStart(12),
      r.coldSweepMs.toFixed(2).padStart(14), r.warmSweepMs.toFixed(2).padStart(14),
      ratio(r.coldSweepMs, smallest.coldSweepMs).padStart(7), ratio(r.warmSweepMs, smallest.warmSweepMs).padStart(7),
    ].join(' '));
  }
}

/** `--scale`: what must stay flat as the store grows, each size against the smallest. */
async function runScale(sizes: number[], cassandraSizes: number[]): Promise<void> {
  const wiki = process.env.WIKISTORE_BENCH_WIKI_URL;
  if (!wiki) throw new Error('--scale needs the wiki (WIKISTORE_BENCH_WIKI_URL) for real renders');
  const rows: ScaleRow[] = [];
  const pg = process.env.WIKISTORE_BENCH_PG_URL;
  const cassandraHosts = process.env.WIKISTORE_BENCH_CASSANDRA?.split(',');
  const mariadb = process.env.WIKISTORE_BENCH_MARIADB_URL;
  // `--scale-on=postgres` (or sqlite, mariadb): that engine only.
  const on = (name: string) => flags.scaleOn === undefined || flags.scaleOn === name;
  if (sizes.length) {
    if (on('sqlite')) rows.push(...(await scaleScenario({ name: 'sqlite' }, sizes, wiki, 2)));
    if (pg && on('postgres')) rows.push(...(await scaleScenario({ name: 'postgres', pgUrl: pg }, sizes, wiki, 2)));
    if (mariadb && on('mariadb')) rows.push(...(await scaleScenario({ name: 'mariadb', mariadbUrl: mariadb }, sizes, wiki, 2)));
  }
  if (cassandraSizes.length) {
    if (!cassandraHosts) throw new Error('--scale-cassandra needs WIKISTORE_BENCH_CASSANDRA');
    rows.push(...(await scaleScenario({ name: 'cassandra', cassandraHosts }, cassandraSizes, wiki, 2)));
  }
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, `scale-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), machine: machine(), rows }, null, 2));
  const f = (n: number, d = 0) => n.toFixed(d);
  console.log(`\nresults: ${file}`);
  console.log('\nThe store grown (renders of real corpus pages, 1-20 revisions a page, 2% of pages deleted); ratios against the smallest size:');
  for (const backend of [...new Set(rows.map((r) => r.backend))]) {
    const mine = rows.filter((r) => r.backend === backend);
    const base = mine[0]!;
    console.log(`\n${backend}`);
    for (const r of mine) {
      console.log(`  ${r.renders} renders, ${r.pages} pages: fill ${f(r.fillRendersPerSecond)} renders/s (bare insert of the same bytes ${f(r.bareInsertsPerSecond)}/s, ${f(r.fillRendersPerSecond / r.bareInsertsPerSecond, 2)}); ` +
        `${f(r.bytesPerRender / 1024, 1)} KB on disk per render (its 4 properties gzipped: ${f(r.gzippedPartsPerRender / 1024, 1)} KB, ${f(r.bytesPerRender / r.gzippedPartsPerRender, 2)}x); ` +
        `start-up ${f(r.startupMs)} ms (${f(r.startupMs / base.startupMs, 2)}x), RSS ${f(r.rssMb)} MB`);
      for (const [name, s] of Object.entries(r.reads)) {
        const b = base.reads[name]!;
        const bare = r.bareReads[name];
        const both = r.bareWithRevisionReads?.[name];
        const beside = (bare ? `; the bare server reading the same row ${f(bare.rps)} req/s, p99 ${f(bare.p99Ms ?? 0, 2)} ms: ${f(s.rps / bare.rps, 2)} of it, p99 ${f((s.p99Ms ?? 0) / (bare.p99Ms ?? 1), 2)}x` : '') +
          (both ? `; reading the revision's row too ${f(both.rps)} req/s, p99 ${f(both.p99Ms ?? 0, 2)} ms: ${f(s.rps / both.rps, 2)} of it` : '');
        const fromStorage = r.storageReadsPerRequest?.[name];
        const readShares = fromStorage ? `; per request, the render read from storage ${f(fromStorage.renders, 2)} (the render cache's misses ${f(fromStorage.renderCacheMisses, 2)}), the revision's row ${f(fromStorage.revisions, 2)}` : '';
        console.log(`    ${name.padEnd(16)} ${f(s.rps)} req/s (${f(s.rps / b.rps, 2)}x), p50 ${f(s.p50Ms ?? 0, 2)} ms, p99 ${f(s.p99Ms ?? 0, 2)} ms (${f((s.p99Ms ?? 0) / (b.p99Ms ?? 1), 2)}x)${beside}${readShares}`);
      }
      const first = r.firstReads;
      if (first) {
        console.log(`    by revid, first reads (renders the service never read: ${f(first.renders, 2)} render and ${f(first.revisions, 2)} revision rows read from storage per request) ${f(first.service.rps)} req/s, p99 ${f(first.service.p99Ms ?? 0, 2)} ms, ` +
          `${f(first.cpuUsPerRequest)} us of CPU per request; the bare server reading both rows ${f(first.bare.rps)} req/s, p99 ${f(first.bare.p99Ms ?? 0, 2)} ms: ${f(first.service.rps / first.bare.rps, 2)} of it`);
      }
      console.log(`    page listing, ${r.listing.pages} pages of 1000: first ${f(r.listing.first, 1)} ms, middle ${f(r.listing.middle, 1)} ms, last ${f(r.listing.last, 1)} ms`);
      console.log(`    renders of a page with ${r.history.revisions} revisions, ${r.history.pages} pages of 100: first ${f(r.history.first, 1)} ms, middle ${f(r.history.middle, 1)} ms, last ${f(r.history.last, 1)} ms`);
      console.log(`    one of its renders by tid (median of five, each read once): newest ${f(r.historyByTid.newest, 2)} ms, halfway ${f(r.historyByTid.middle, 2)} ms, oldest ${f(r.historyByTid.oldest, 2)} ms`);
      if (r.vacuumMs !== undefined) console.log(`    VACUUM (ANALYZE) after the fill: ${f(r.vacuumMs / 1000, 1)} s`);
      const { withoutBodies: remade } = r.snapshot;
      console.log(`    snapshot from storage (median of three runs): ${f(r.snapshot.pages)} pages, ${f(r.snapshot.pagesPerSecond)} pages/s, ${f(r.snapshot.mbPerSecond, 1)} MB/s of NDJSON, peak RSS ${f(r.snapshot.peakRssMb)} MB (anonymous ${f(r.snapshot.peakAnonMb)} MB) ` +
        `(bodies: ${r.snapshot.bodies.stored} copied as stored, ${r.snapshot.bodies.made} made; ${f(r.snapshot.beforeFirstPageMs)} ms before the first page, ${f(r.snapshot.afterLastPageMs)} ms after the last); ` +
        `the same pages' rows by the table API alone ${f(r.snapshot.tablePagesPerSecond)} pages/s (${f(r.snapshot.pagesPerSecond / r.snapshot.tablePagesPerSecond, 2)}); ` +
        (r.snapshot.again ? `both again in the same process ${f(r.snapshot.again.pagesPerSecond)} and ${f(r.snapshot.again.tablePagesPerSecond)} pages/s (${f(r.snapshot.again.pagesPerSecond / r.snapshot.again.tablePagesPerSecond, 2)}); ` : '') +
        (r.snapshot.withoutFactsPagesPerSecond ? `without the pages' facts (the previous records) ${f(r.snapshot.withoutFactsPagesPerSecond)} pages/s (complete records ${f(r.snapshot.pagesPerSecond / r.snapshot.withoutFactsPagesPerSecond, 2)} of it); ` : '') +
        `the same store without its bodies (bodies: ${remade.bodies.made} made, ${remade.bodies.stored} copied) ${f(remade.pagesPerSecond)} pages/s, ${f(remade.mbPerSecond, 1)} MB/s, peak RSS ${f(remade.peakRssMb)} MB (anonymous ${f(remade.peakAnonMb)} MB); ` +
        `a body made as a render is stored: ${f(r.bodyOnRender.ms, 2)} ms, ${f(r.bodyOnRender.bodyKb, 1)} KB beside the render's ${f(r.bodyOnRender.renderKb, 1)} KB (means)`);
      console.log(`    TTL sweep ${f(r.ttlSweepMs, 1)} ms, transaction sweep ${f(r.transactionSweepMs, 1)} ms; wiki requests during the reads: ${r.wikiRequestsDuringReads}`);
    }
  }
}

/** The machine a result was measured on, written beside it. */
function machine(): Record<string, unknown> {
  return { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.type()} ${os.release()}` };
}

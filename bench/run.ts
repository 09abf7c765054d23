import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Comparison } from './harness.js';
import { httpScenarios } from './scenarios/http.js';
import { storageScenarios } from './scenarios/storage.js';

const quick = process.argv.includes('--quick');
const opts = quick ? { seconds: 2, rounds: 3 } : { seconds: 5, rounds: 5 };
const pgUrl = process.env.WIKISTORE_BENCH_PG_URL;

const comparisons: Comparison[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-bench-'));
comparisons.push(...(await storageScenarios('sqlite', { backend: 'sqlite', path: path.join(dir, 'layer.sqlite3') }, opts)));
if (pgUrl) comparisons.push(...(await storageScenarios('postgres', { backend: 'postgres', url: pgUrl, pool_size: 10 }, opts)));
else console.warn('WIKISTORE_BENCH_PG_URL not set: PostgreSQL scenarios skipped');
const http = await httpScenarios(opts);
comparisons.push(...http.comparisons);

const fmt = (n: number | undefined, digits = 0) => (n === undefined ? '-' : n.toFixed(digits));
const rows = comparisons.map((c) => [
  c.scenario,
  fmt(c.service.rps),
  fmt(c.service.p50Ms, 2),
  fmt(c.service.p99Ms, 2),
  `${c.baselineName} ${fmt(c.baseline.rps)}`,
  fmt(c.baseline.p99Ms, 2),
  fmt(c.ratio, 2),
  c.target ? `${c.met ? 'met' : 'MISSED'} (≥${c.target.minRatio ?? '-'}${c.target.maxP99Ratio ? `, p99 ≤${c.target.maxP99Ratio}×` : ''})` : '',
]);
const header = ['scenario', 'ops/s', 'p50 ms', 'p99 ms', 'baseline ops/s', 'base p99', 'ratio', 'target'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
const rssOk = http.rss.underLoadPeakMb <= 150;
console.log(`\nservice start to listening: ${http.startupMs.toFixed(0)} ms`);
console.log(`service RSS: idle ${http.rss.idleMb.toFixed(1)} MB, peak under load ${http.rss.underLoadPeakMb.toFixed(1)} MB (target ≤150 MB: ${rssOk ? 'met' : 'MISSED'})`);
for (const c of comparisons.filter((c) => c.met === false)) console.log(`MISSED: ${c.scenario}: ratio ${c.ratio.toFixed(2)} below target ${c.target?.minRatio}`);

const outDir = 'bench-results';
fs.mkdirSync(outDir, { recursive: true });
const file = path.join(outDir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify({ date: new Date().toISOString(), quick, comparisons, startupMs: http.startupMs, rss: http.rss }, null, 2));
console.log(`\nresults: ${file}`);

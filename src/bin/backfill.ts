import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { toolApp, toolConfig, toolDomain, usageOf } from './tool.js';
import { Backfill, type BackfillSource } from '../modules/page/follow/page-backfill.js';

const USAGE = `Stores and renders every page of a wiki, resumably.

  npm run backfill -- --domain DOMAIN (--all [--namespace N ...] | --titles-from FILE | --category NAME)
                      [--concurrency N] [--restart]

  --all             every page of the wiki's content namespaces (or of those given with --namespace)
  --titles-from     one title per line
  --category        the pages in a category
  --concurrency     pages stored and rendered side by side (default 4)
  --restart         start from the first page instead of where an unfinished run stopped

Pages whose latest revision is stored and rendered are skipped. Ctrl-C stops after the pages in
flight; running the same command again goes on where it stopped.`;

const usage: (message?: string) => never = usageOf(USAGE);

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        domain: { type: 'string' },
        all: { type: 'boolean' },
        namespace: { type: 'string', multiple: true },
        'titles-from': { type: 'string' },
        category: { type: 'string' },
        concurrency: { type: 'string', default: '4' },
        restart: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    usage((e as Error).message);
  }
})();
if (values.help) usage();
const sources = [values.all, values['titles-from'], values.category].filter((v) => v !== undefined);
if (sources.length !== 1) usage('Name exactly one of --all, --titles-from and --category.');
const concurrency = Number(values.concurrency);
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) usage('--concurrency must be an integer from 1 to 64.');

const config = toolConfig();
const domain = toolDomain(config, values.domain, usage);

let source: BackfillSource;
if (values.all) {
  const namespaces = (values.namespace ?? []).map(Number);
  if (namespaces.some((n) => !Number.isInteger(n) || n < 0)) usage('--namespace takes namespace numbers (0, 10, ...).');
  source = { kind: 'all', namespaces };
} else if (values.category !== undefined) {
  source = { kind: 'category', category: values.category };
} else {
  const file = values['titles-from']!;
  if (!fs.existsSync(file)) usage(`${file} does not exist.`);
  source = { kind: 'titles', titles: [...new Set(fs.readFileSync(file, 'utf8').split(/\r?\n/).map((t) => t.trim()).filter(Boolean))] };
}

const { app, ctx } = await toolApp(config, 'backfill');
const backfill = new Backfill(app.page.service, domain);

let stopping = false;
process.on('SIGINT', () => {
  if (stopping) process.exit(130);
  stopping = true;
  console.error('\nStopping after the pages in flight; run the same command again to go on.');
});

const { total, estimated } = await backfill.total(source);
app.metrics.backfillTotal.set({ domain }, total);
const bar = new SingleBar(
  {
    format: `${domain} {bar} {value}/{total}${estimated ? ' (estimated)' : ''} pages | {speed} pages/s | ETA {eta_formatted} | rendered {rendered}, skipped {skipped}, failed {failed}`,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    etaBuffer: 200,
    hideCursor: true,
  },
);
const counts = { rendered: 0, skipped: 0, failed: 0 };
const startedAt = Date.now();
let done = 0;
bar.start(total, 0, { ...counts, speed: '0.0' });
const report = await backfill.run(ctx, source, {
  concurrency,
  restart: values.restart,
  stopped: () => stopping,
  progress(outcome) {
    done++;
    counts[outcome]++;
    app.metrics.backfillPages.inc({ domain, outcome });
    if (done > bar.getTotal()) bar.setTotal(done);
    bar.update(done, { ...counts, speed: (done / Math.max(0.001, (Date.now() - startedAt) / 1000)).toFixed(1) });
  },
});
bar.stop();
await app.close();

const seconds = (Date.now() - startedAt) / 1000;
console.log(`${report.complete ? 'Done' : 'Stopped'}${report.resumed ? ' (resumed an earlier run)' : ''}: ${done} pages in ${seconds.toFixed(1)} s (${(done / Math.max(seconds, 0.001)).toFixed(1)} pages/s)`);
console.log(`  rendered ${counts.rendered}, skipped ${counts.skipped} (already stored), failed ${counts.failed}`);
// What the run cost the wiki, by endpoint: an operator's measure of the load it put there.
const asked = (await app.metrics.wikiRequests.get()).values.filter((v) => v.labels.domain === domain);
const byEndpoint = asked.map((v) => `${v.labels.endpoint} ${v.value}`).sort().join(', ');
console.log(`  asked the wiki ${asked.reduce((n, v) => n + v.value, 0)} times${byEndpoint ? ` (${byEndpoint})` : ''}`);
if (report.resumed) console.log(`  since the run began: rendered ${report.counts.rendered}, skipped ${report.counts.skipped}, failed ${report.counts.failed}`);
for (const [reason, { count, titles }] of [...report.failures].sort((a, b) => b[1].count - a[1].count)) {
  console.log(`  failed ${count}× ${reason} (${titles.join(', ')}${count > titles.length ? ', ...' : ''})`);
}
if (!report.complete) console.log('  run the same command again to go on where it stopped');
process.exit(report.complete ? (counts.failed > 0 ? 1 : 0) : 130);

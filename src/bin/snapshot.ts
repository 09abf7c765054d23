import path from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { toolApp, toolConfig, toolDomain, usageOf } from './tool.js';
import { SnapshotWriter, type Outcome } from '../modules/page/snapshot/snapshot-writer.js';
import { inThread } from '../modules/page/snapshot/record-formatter.js';
import { workerFormatter } from '../modules/page/thread/page-thread.js';
import { parseTime } from '../util/tid.js';
import { FarmWikis } from '../modules/page/tables/farm-wikis.js';
import { WikiEntries } from '../upstream/wiki-entries.js';

const USAGE = `Writes a wiki as it was at one moment, in Wikimedia Enterprise's HTML snapshot layout.

  npm run snapshot -- (--domain DOMAIN | --group NAME) [--at TIME] [--since TIME] [--namespace 0,4,...]
                      [--prefix TITLE_START] [--out DIR] [--pages N] [--concurrency N]
                      [--threads N] [--storage-only]

  --group        every wiki of a farm's storage group found so far, one folder each in --out
  --at           the moment (ISO 8601; default: now, fixed when the run starts)
  --since        only pages changed between --since and --at, with those deleted listed
  --namespace    namespaces, comma-separated (default 0)
  --prefix       only titles starting with this (underscores for spaces)
  --out          the folder written (default: snapshots.dir/{domain}/{time}, where the service
                 offers finished snapshots at /{domain}/enterprise/v2/snapshots)
  --pages        pages per NDJSON chunk (default 1000)
  --concurrency  pages read side by side (default 4)
  --threads      worker threads making the pages' bodies (default: one per core; 0: none)
  --storage-only the pages stored here, as storage knows them, asking the wiki nothing
                 (pages never stored are left out; the manifest says so)

Ctrl-C stops after the chunk under way; the same command goes on where it stopped (give --at
then, or the same --out: the folder remembers its options). Pages the store lacks are rendered
through the wiki first. Each page's body (its HTML and wikitext, escaped and compressed) is made
once per render and stored: a later snapshot copies it.`;

const usage: (message?: string) => never = usageOf(USAGE);

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        domain: { type: 'string' }, group: { type: 'string' }, at: { type: 'string' }, since: { type: 'string' }, namespace: { type: 'string', default: '0' }, prefix: { type: 'string' },
        out: { type: 'string' }, pages: { type: 'string', default: '1000' }, concurrency: { type: 'string', default: '4' }, threads: { type: 'string' }, 'storage-only': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    usage((e as Error).message);
  }
})();
if (values.help) usage();
const time = (flag: string, text: string) => {
  try {
    return parseTime(text);
  } catch (e) {
    usage(`--${flag}: ${(e as Error).message}`);
  }
};
const at = values.at === undefined ? Math.floor(Date.now() / 1000) * 1000 : time('at', values.at);
const since = values.since === undefined ? undefined : time('since', values.since);
if (since !== undefined && since >= at) usage('--since must come before --at.');
const namespaces = values.namespace!.split(',').map(Number);
if (namespaces.some((n) => !Number.isInteger(n) || n < 0)) usage('--namespace takes namespace numbers (0, 4, ...).');
const pages = Number(values.pages);
const concurrency = Number(values.concurrency);
if (!Number.isInteger(pages) || pages < 1) usage('--pages must be a positive integer.');
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) usage('--concurrency must be an integer from 1 to 64.');
const threads = values.threads === undefined ? undefined : Number(values.threads);
if (threads !== undefined && (!Number.isInteger(threads) || threads < 0 || threads > 64)) usage('--threads must be an integer from 0 to 64.');

const config = toolConfig();
if (values.group !== undefined && values.domain !== undefined) usage('--domain and --group: one or the other.');
const home = values.group === undefined ? undefined : new WikiEntries(config.wikis).homeOfGroup(values.group);
if (values.group !== undefined && home === undefined) usage(`--group must name the storage group of a pattern (by default its suffix): ${Object.keys(config.wikis).filter((k) => k.startsWith('*.')).map((k) => config.wikis[k]!.storage_group ?? k.slice(2)).join(', ') || 'none configured'}`);
const stamp = new Date(at).toISOString().replace(/[:.]/g, '');

const { app, ctx } = await toolApp(config, 'snapshot');
const domains = home === undefined ? [toolDomain(config, values.domain, usage)] : await groupWikis(home);

let stopping = false;
process.on('SIGINT', () => {
  if (stopping) process.exit(130);
  stopping = true;
  console.error('\nStopping after the chunk under way; run the same command again to go on.');
});

const formatter = threads === 0 ? inThread : workerFormatter(threads);
let code = 0;
for (const domain of domains) {
  if (stopping) break;
  const out = values.out === undefined ? path.join(config.snapshots.dir, domain, stamp) : home === undefined ? values.out : path.join(values.out, domain);
  if (!(await snapshotOf(domain, out))) code = 1;
}

/** The wikis of a storage group its poller knows (found by any process since the group began). */
async function groupWikis(groupHome: string): Promise<string[]> {
  const found: string[] = [];
  for await (const wiki of new FarmWikis(groupHome).all(ctx)) found.push(wiki);
  return found.sort();
}

/** One wiki's snapshot into `out`, its progress shown; false if it failed. */
async function snapshotOf(domain: string, out: string): Promise<boolean> {
  const bar = new SingleBar({
    format: `${domain} at ${new Date(at).toISOString()} {value} pages | {speed} pages/s | written {written}, absent {absent}, hidden {hidden}, unchanged {unchanged}, lacking {lacking}, failed {failed}`,
    noTTYOutput: true, notTTYSchedule: 2000, hideCursor: true,
  });
  const counts: Record<Outcome, number> = { written: 0, absent: 0, hidden: 0, unchanged: 0, lacking: 0, failed: 0 };
  const startedAt = Date.now();
  let done = 0;
  bar.start(0, 0, { ...counts, speed: '0.0' });
  const writer = new SnapshotWriter(app.page.service, domain, formatter);
  try {
    const report = await writer.run(ctx, {
      at, since, namespaces, prefix: values.prefix?.replace(/ /g, '_'), out, pagesPerChunk: pages, concurrency,
      storageOnly: values['storage-only'] === true,
      stopped: () => stopping,
      progress(outcome) {
        done++;
        counts[outcome]++;
        bar.setTotal(done);
        bar.update(done, { ...counts, speed: (done / Math.max(0.001, (Date.now() - startedAt) / 1000)).toFixed(1) });
      },
    });
    bar.stop();
    console.log(report.complete ? `Done${report.resumed ? ' (resumed)' : ''}: ${out}/manifest.json` : `Stopped: run the same command again to go on (${out}).`);
    console.log(`Page bodies: ${report.bodies.stored} as stored by an earlier snapshot, ${report.bodies.made} made from their renders (and stored for the next).`);
    return true;
  } catch (err) {
    bar.stop();
    console.error(`${domain}: ${(err as Error).message}`);
    return false;
  }
}
await formatter.close();
await app.close();
process.exit(code);

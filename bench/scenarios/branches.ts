import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newTid } from '../../src/util/tid.js';
import { compare, throughput, type Comparison } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startService } from '../service.js';
import { sideBySide } from '../side-by-side.js';

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const json = { 'content-type': 'application/json' };
const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/corpus/wtf_wikipedia');
/** Writers at once, each on its own branch (or row): CAS per branch never makes them wait on each other. */
const WRITERS = 8;

async function call(url: string, init: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return res;
}

/**
 * Drafts on SQLite against the real wiki: a branch's latest wikitext read against a bare server
 * sending the same bytes, and branch updates (CAS on the branch's latest version) against the
 * same conditional write made directly through the table API, both over HTTP.
 */
export async function branchScenarios(wikiUrl: string, opts: { seconds: number; rounds: number }): Promise<Comparison[]> {
  const service = await startService('sqlite', wikiUrl);
  const v1 = `${service.base}/${DOMAIN}/v1`;
  try {
    const article = fs.readFileSync(path.join(CORPUS, 'rnli_stations.txt'), 'utf8');
    const title = `Bench draft ${Date.now().toString(36)}`.replace(/ /g, '_');
    const made = (await (await call(`${v1}/page/${title}/branches/`, { method: 'POST', headers: json, body: JSON.stringify({ wikitext: article }) })).json()) as { branch: string };
    const comparisons: Comparison[] = [];
    const read = `/${DOMAIN}/v1/page/${title}/branches/${made.branch}/wikitext`;
    comparisons.push(await sideBySide(service, `branch latest wikitext ${Math.round(article.length / 1024)} KB (sqlite)`, { path: read }, opts, { minRatio: 0.5 }, { sweep: false }));

    // Updates of 2 KB drafts: each writer chains its own branch, If-Match the ETag of its last write.
    const draft = article.slice(0, 2048);
    const branches: { url: string; etag: string }[] = [];
    for (let i = 0; i < WRITERS; i++) {
      const res = await call(`${v1}/page/${title}_${i}/branches/`, { method: 'POST', headers: json, body: JSON.stringify({ wikitext: draft }) });
      const { branch } = (await res.json()) as { branch: string };
      branches.push({ url: `${v1}/page/${title}_${i}/branches/${branch}`, etag: res.headers.get('etag')! });
    }
    // The bare side: the same conditional write (a new row over the partition's latest, a static column) through the table API.
    const table = `${service.base}/${DOMAIN}/sys/table/cas_bench`;
    await call(table, { method: 'PUT', headers: { ...auth, ...json }, body: JSON.stringify({
      attributes: { key: 'string', tid: 'timeuuid', latest: 'timeuuid', wikitext: 'string' },
      index: [{ attribute: 'key', type: 'hash' }, { attribute: 'latest', type: 'static' }, { attribute: 'tid', type: 'range', order: 'desc' }],
    }) });
    const rows: { key: string; latest: string }[] = [];
    for (let i = 0; i < WRITERS; i++) {
      const tid = newTid();
      await call(`${table}/`, { method: 'PUT', headers: { ...auth, ...json }, body: JSON.stringify({ attributes: { key: `k${i}`, tid, latest: tid, wikitext: draft } }) });
      rows.push({ key: `k${i}`, latest: tid });
    }
    const pooled = <T>(pool: T[], op: (item: T) => Promise<void>) => async () => {
      const item = pool.pop()!;
      try {
        await op(item);
      } finally {
        pool.push(item);
      }
    };
    let n = 0;
    comparisons.push(
      await compare(
        'branch update (CAS per branch, 2 KB wikitext; sqlite, updates/s)',
        opts.rounds,
        () => throughput(opts.seconds, WRITERS, pooled(branches, async (b) => {
          const res = await call(b.url, { method: 'PUT', headers: { ...json, 'if-match': b.etag }, body: JSON.stringify({ wikitext: `${draft} ${n++}` }) });
          b.etag = res.headers.get('etag')!;
          await res.arrayBuffer();
        })),
        'the same conditional write through the table API',
        () => throughput(opts.seconds, WRITERS, pooled(rows, async (r) => {
          const tid = newTid();
          const res = await call(`${table}/`, { method: 'PUT', headers: { ...auth, ...json }, body: JSON.stringify({ attributes: { key: r.key, tid, latest: tid, wikitext: `${draft} ${n++}` }, if: { latest: { eq: r.latest } } }) });
          r.latest = tid;
          await res.arrayBuffer();
        })),
        { minRatio: 0.8 },
      ),
    );
    return comparisons;
  } finally {
    await service.stop();
  }
}

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { newTid } from '../../src/util/tid.js';
import { compare, rssMb, throughput, type Comparison } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startService } from '../service.js';
import { sideBySide } from '../side-by-side.js';

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/corpus/wtf_wikipedia');

async function call(base: string, method: string, uri: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/${DOMAIN}${uri}`, { method, headers: { ...auth, ...headers }, body });
  if (res.status >= 400) throw new Error(`${method} ${uri}: ${res.status} ${await res.text()}`);
  return res;
}

/** A ~50 KB HTML document made of a real article's text (compressible like real pages). */
function article50k(): string {
  const text = fs.readFileSync(path.join(CORPUS, 'rnli_stations.txt'), 'utf8');
  const paragraphs = text.split('\n').filter(Boolean).map((line) => `<p>${line.replace(/[<>&]/g, ' ')}</p>`);
  let html = '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>';
  for (let i = 0; html.length < 50 * 1024; i++) html += paragraphs[i % paragraphs.length];
  return `${html}</body></html>`;
}

export interface HttpReport {
  comparisons: Comparison[];
  startupMs: number;
  rss: { idleMb: number; underLoadPeakMb: number };
}

/** HTTP scenarios against the service on SQLite: table rows and bucket revisions of 50 KB. */
export async function httpScenarios(opts: { seconds: number; rounds: number }): Promise<HttpReport> {
  const service = await startService('sqlite');
  const idleMb = rssMb(service.child.pid!).rss;
  const comparisons: Comparison[] = [];
  try {
    const json = { 'content-type': 'application/json' };
    const value = crypto.randomBytes(50 * 1024).toString('base64');
    await call(service.base, 'PUT', '/sys/table/bench', JSON.stringify({ attributes: { key: 'string', value: 'blob' }, index: [{ attribute: 'key', type: 'hash' }] }), json);
    await call(service.base, 'PUT', '/sys/table/bench/', JSON.stringify({ attributes: { key: 'k', value } }), json);
    comparisons.push(
      await sideBySide(service, 'table API point read 50 KB over HTTP (sqlite)', { path: `/${DOMAIN}/sys/table/bench/_query`, method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify({ attributes: { key: 'k' } }) }, opts, { minRatio: 0.5 }),
    );

    // GET by secondary index: a user's 50 most recent rows, spread over 50 partitions.
    await call(service.base, 'PUT', '/sys/table/events', JSON.stringify({
      attributes: { page: 'string', at: 'int', user: 'string', size: 'int', comment: 'string' },
      index: [{ attribute: 'page', type: 'hash' }, { attribute: 'at', type: 'range', order: 'desc' }],
      secondaryIndexes: { by_user: [{ attribute: 'user', type: 'hash' }, { attribute: 'at', type: 'range', order: 'desc' }] },
    }), json);
    for (let at = 0; at < 200; at++) {
      const row = { page: `Page ${at % 50}`, at, user: at % 4 === 0 ? 'Alice' : `User ${at % 7}`, size: at * 17, comment: `edit ${at} of page ${at % 50}` };
      await call(service.base, 'PUT', '/sys/table/events/', JSON.stringify({ attributes: row }), json);
    }
    comparisons.push(
      await sideBySide(service, 'table GET //{index}/{value}, 50 rows (sqlite)', { path: `/${DOMAIN}/sys/table/events//by_user/Alice?limit=50`, headers: auth }, opts, { minRatio: 0.5 }),
    );

    await call(service.base, 'PUT', '/sys/key_rev_value/bench');
    const html = article50k();
    await call(service.base, 'PUT', '/sys/key_rev_value/bench/page', html, { 'content-type': 'text/html; charset=utf-8' });
    const { tid } = (await (await call(service.base, 'PUT', '/sys/key_rev_value/bench/page', html, { 'content-type': 'text/html; charset=utf-8' })).json()) as { tid: string };
    const gzip = { ...auth, 'accept-encoding': 'gzip' };
    comparisons.push(await sideBySide(service, 'bucket latest GET 50 KB HTML (gzip accepted)', { path: `/${DOMAIN}/sys/key_rev_value/bench/page`, headers: gzip }, opts, { minRatio: 0.5 }));
    comparisons.push(await sideBySide(service, 'bucket by-tid GET 50 KB HTML (gzip accepted)', { path: `/${DOMAIN}/sys/key_rev_value/bench/page/${tid}`, headers: gzip }, opts, { minRatio: 0.5 }));
    comparisons.push(await sideBySide(service, 'bucket latest GET 50 KB HTML (identity)', { path: `/${DOMAIN}/sys/key_rev_value/bench/page`, headers: auth }, opts));

    // A transaction of 4 small writes (primary + 3 dependents) next to the same 4 writes sent directly.
    await call(service.base, 'PUT', '/sys/key_rev_value/tx');
    const write = (key: string, t: string) => ({ method: 'PUT', uri: `/${DOMAIN}/sys/key_rev_value/tx/${key}/${t}`, headers: { 'content-type': 'text/plain' }, body: 'x' });
    const keys = ['primary', 'a', 'b', 'c'];
    comparisons.push(
      await compare(
        'transaction: primary + 3 dependents (writes/s)',
        opts.rounds,
        () =>
          throughput(opts.seconds, 8, async () => {
            const t = newTid();
            const [primary, ...then] = keys.map((k) => write(k, t));
            await call(service.base, 'PUT', `/sys/transactions/${t}`, JSON.stringify({ ...primary, then }), { 'content-type': 'application/json' });
          }),
        'the same 4 writes sent directly',
        () =>
          throughput(opts.seconds, 8, async () => {
            const t = newTid();
            for (const k of keys) await call(service.base, 'PUT', `/sys/key_rev_value/tx/${k}/${t}`, 'x', { 'content-type': 'text/plain' });
          }),
      ),
    );
    return { comparisons, startupMs: service.startupMs, rss: { idleMb, underLoadPeakMb: rssMb(service.child.pid!).peak } };
  } finally {
    await service.stop();
  }
}

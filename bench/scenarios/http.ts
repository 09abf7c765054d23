import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compare, rssMb, wrk, type Comparison, type WrkRequest } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startBare, startService, type Running } from '../service.js';

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

/** Measures one service request against a bare server sending the same bytes and headers. */
async function sideBySide(service: Running, name: string, req: Omit<WrkRequest, 'url'> & { path: string }, opts: { seconds: number; rounds: number }, target?: Comparison['target']): Promise<Comparison> {
  const sample = await fetch(`${service.base}${req.path}`, { method: req.method ?? 'GET', headers: req.headers, body: req.body });
  if (sample.status !== 200) throw new Error(`${name}: ${sample.status} ${await sample.text()}`);
  const body = Buffer.from(await sample.arrayBuffer());
  // fetch decompresses: ask again for the raw bytes when the response was encoded.
  const encoding = sample.headers.get('content-encoding');
  const raw = encoding ? await rawBytes(`${service.base}${req.path}`, req) : body;
  const headers: Record<string, string> = {};
  sample.headers.forEach((v, k) => {
    if (!['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)) headers[k] = v;
  });
  const bare = await startBare(headers, raw);
  try {
    const serviceReq = { ...req, url: `${service.base}${req.path}` };
    const bareReq = { ...req, url: `${bare.base}/` };
    await wrk(serviceReq, 1);
    await wrk(bareReq, 1);
    return await compare(name, opts.rounds, () => wrk(serviceReq, opts.seconds), 'bare', () => wrk(bareReq, opts.seconds), target);
  } finally {
    await bare.stop();
  }
}

async function rawBytes(url: string, req: Omit<WrkRequest, 'url'>): Promise<Buffer> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const r = http.request(url, { method: req.method ?? 'GET', headers: req.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    });
    r.on('error', reject);
    r.end(req.body);
  });
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
      await sideBySide(service, 'table API point read 50 KB over HTTP (sqlite)', { path: `/${DOMAIN}/sys/table/bench/_query`, method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify({ attributes: { key: 'k' } }) }, opts),
    );

    await call(service.base, 'PUT', '/sys/key_rev_value/bench');
    const html = article50k();
    await call(service.base, 'PUT', '/sys/key_rev_value/bench/page', html, { 'content-type': 'text/html; charset=utf-8' });
    const { tid } = (await (await call(service.base, 'PUT', '/sys/key_rev_value/bench/page', html, { 'content-type': 'text/html; charset=utf-8' })).json()) as { tid: string };
    const gzip = { ...auth, 'accept-encoding': 'gzip' };
    comparisons.push(await sideBySide(service, 'bucket latest GET 50 KB HTML (gzip accepted)', { path: `/${DOMAIN}/sys/key_rev_value/bench/page`, headers: gzip }, opts));
    comparisons.push(await sideBySide(service, 'bucket by-tid GET 50 KB HTML (gzip accepted)', { path: `/${DOMAIN}/sys/key_rev_value/bench/page/${tid}`, headers: gzip }, opts));
    comparisons.push(await sideBySide(service, 'bucket latest GET 50 KB HTML (identity)', { path: `/${DOMAIN}/sys/key_rev_value/bench/page`, headers: auth }, opts));
    return { comparisons, startupMs: service.startupMs, rss: { idleMb, underLoadPeakMb: rssMb(service.child.pid!).peak } };
  } finally {
    await service.stop();
  }
}

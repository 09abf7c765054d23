import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import { load, median } from './harness.js';
import { ADMIN_TOKEN, DOMAIN, startBare, startService, type Running } from './service.js';

/**
 * The load generator checked against wrk (Debian's package) on two scenarios: each generator runs
 * service and bare server back to back, three rounds; the ratios they report should agree.
 * Run: `node dist/bench/wrk-check.js` (needs wrk on the PATH; the README says how to install it).
 */
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SECONDS = 5;

function wrk(url: string, headers: Record<string, string>): number {
  const args = ['-c', '1', 'wrk', '-t1', '-c50', `-d${SECONDS}s`, ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  const out = execFileSync('taskset', args, { encoding: 'utf8' });
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]);
}

function raw(url: string, headers: Record<string, string>): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

async function check(name: string, service: Running, path: string, headers: Record<string, string>): Promise<void> {
  const sample = await raw(`${service.base}${path}`, headers);
  const copied = Object.fromEntries(Object.entries(sample.headers).filter(([k]) => !['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)).map(([k, v]) => [k, String(v)]));
  const bare = await startBare(copied, sample.body);
  try {
    const ours: number[] = [];
    const theirs: number[] = [];
    const rps: string[] = [];
    for (let round = 0; round < 3; round++) {
      const s = (await load({ url: `${service.base}${path}`, headers }, SECONDS)).rps;
      const b = (await load({ url: `${bare.base}/`, headers }, SECONDS)).rps;
      ours.push(s / b);
      const ws = wrk(`${service.base}${path}`, headers);
      const wb = wrk(`${bare.base}/`, headers);
      theirs.push(ws / wb);
      rps.push(`load.ts ${s.toFixed(0)}/${b.toFixed(0)}, wrk ${ws.toFixed(0)}/${wb.toFixed(0)}`);
    }
    const f = (xs: number[]) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
    console.log(`${name}: bench/load.ts ${f(ours)}; wrk ${f(theirs)}\n  req/s service/bare per round: ${rps.join('; ')}`);
  } finally {
    await bare.stop();
  }
}

const service = await startService('sqlite');
try {
  const put = (uri: string, body: string | undefined, type?: string) =>
    fetch(`${service.base}/${DOMAIN}${uri}`, { method: 'PUT', headers: { ...auth, ...(type ? { 'content-type': type } : {}) }, body });
  await put('/sys/key_rev_value/wrk', undefined);
  const html = `<!DOCTYPE html><html><body>${Array.from({ length: 800 }, (_, i) => `<p>Paragraph ${i}: ${crypto.randomBytes(24).toString('hex')}</p>`).join('')}</body></html>`;
  await put('/sys/key_rev_value/wrk/page', html, 'text/html; charset=utf-8');
  await check('bucket latest GET (gzip accepted)', service, `/${DOMAIN}/sys/key_rev_value/wrk/page`, { ...auth, 'accept-encoding': 'gzip' });
  await check('bucket latest GET (identity)', service, `/${DOMAIN}/sys/key_rev_value/wrk/page`, auth);
} finally {
  await service.stop();
}

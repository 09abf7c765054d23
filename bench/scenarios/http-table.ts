import crypto from 'node:crypto';
import { compare, rssMb, wrk, type Comparison } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startBare, startService } from '../service.js';

const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/${DOMAIN}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

export interface HttpReport {
  comparisons: Comparison[];
  startupMs: number;
  rss: { idleMb: number; underLoadPeakMb: number };
}

/** A 50 KB row read through the table API over HTTP, next to a bare server with the same bytes. */
export async function httpTableScenarios(opts: { seconds: number; rounds: number }): Promise<HttpReport> {
  const service = await startService('sqlite');
  try {
    const value = crypto.randomBytes(50 * 1024).toString('base64');
    await call(service.base, 'PUT', '/sys/table/bench', { attributes: { key: 'string', value: 'blob' }, index: [{ attribute: 'key', type: 'hash' }] });
    await call(service.base, 'PUT', '/sys/table/bench/', { attributes: { key: 'k', value } });
    const query = JSON.stringify({ attributes: { key: 'k' } });
    const res = await call(service.base, 'POST', '/sys/table/bench/_query', JSON.parse(query));
    const body = Buffer.from(await res.arrayBuffer());
    const headers = { 'content-type': res.headers.get('content-type')!, vary: 'Accept-Encoding', 'x-request-id': crypto.randomUUID() };
    const bare = await startBare(headers, body);
    const idleMb = rssMb(service.child.pid!).rss;
    try {
      const request = { method: 'POST', headers: auth, body: query };
      await wrk({ ...request, url: `${service.base}/${DOMAIN}/sys/table/bench/_query` }, 1);
      await wrk({ ...request, url: `${bare.base}/` }, 1);
      const comparison = await compare(
        'table API point read 50 KB over HTTP (sqlite)',
        opts.rounds,
        () => wrk({ ...request, url: `${service.base}/${DOMAIN}/sys/table/bench/_query` }, opts.seconds),
        'bare',
        () => wrk({ ...request, url: `${bare.base}/` }, opts.seconds),
      );
      return { comparisons: [comparison], startupMs: service.startupMs, rss: { idleMb, underLoadPeakMb: rssMb(service.child.pid!).peak } };
    } finally {
      await bare.stop();
    }
  } finally {
    await service.stop();
  }
}

import http from 'node:http';
import { compare, wrk, type Comparison, type WrkRequest } from './harness.js';
import { startBare, type Running } from './service.js';

/** Measures one service request against a bare server sending the same bytes and headers. */
export async function sideBySide(service: Running, name: string, req: Omit<WrkRequest, 'url'> & { path: string }, opts: { seconds: number; rounds: number; warmup?: boolean }, target?: Comparison['target']): Promise<Comparison> {
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
    if (opts.warmup !== false) {
      await wrk(serviceReq, 1);
      await wrk(bareReq, 1);
    }
    return await compare(name, opts.rounds, () => wrk(serviceReq, opts.seconds), 'bare', () => wrk(bareReq, opts.seconds), target);
  } finally {
    await bare.stop();
  }
}

async function rawBytes(url: string, req: Omit<WrkRequest, 'url'>): Promise<Buffer> {
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


import http from 'node:http';
import { compare, load, type Comparison, type LoadRequest } from './harness.js';
import { startBare, type Running } from './service.js';

/** Connection counts each read scenario also runs at (50 is the main measurement). */
const SWEEP = [1, 50, 500];

/** Measures one service request against a bare server sending the same bytes and headers. */
export async function sideBySide(
  service: Running,
  name: string,
  req: Omit<LoadRequest, 'url'> & { path: string },
  opts: { seconds: number; rounds: number },
  target?: Comparison['target'],
  /** `batchedBare`: the bare server writes its answers as the service does (like for like); `sweep`: also at 1 and 500 connections. */
  { batchedBare = false, sweep = true }: { batchedBare?: boolean; sweep?: boolean } = {},
): Promise<Comparison> {
  // One raw request, as the load generator sends it: the bare server gets these very bytes and the
  // headers that came with them (a fetch() would ask for gzip on its own and decompress, so the
  // bytes and the content-encoding copied could disagree).
  const sample = await rawResponse(`${service.base}${req.path}`, req);
  if (sample.status !== 200) throw new Error(`${name}: ${sample.status} ${sample.body.toString('utf8').slice(0, 500)}`);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(sample.headers)) {
    if (v !== undefined && !['content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding'].includes(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const raw = sample.body;
  const bare = await startBare(headers, raw, batchedBare);
  try {
    const serviceReq = { ...req, url: `${service.base}${req.path}` };
    const bareReq = { ...req, url: `${bare.base}/` };
    // Every read's tail is held to twice the bare server's, whatever its throughput target.
    const targets = { maxP99Ratio: 2, ...target };
    const result = await compare(name, opts.rounds, () => load(serviceReq, opts.seconds), batchedBare ? 'bare, batched writes' : 'bare', () => load(bareReq, opts.seconds), targets);
    if (!sweep) return result;
    // How throughput and p99 move with concurrency: a regression under many connections shows here.
    result.sweep = [];
    for (const connections of SWEEP) {
      const s = connections === 50 ? result.service : await load(serviceReq, opts.seconds, connections);
      const b = connections === 50 ? result.baseline : await load(bareReq, opts.seconds, connections);
      result.sweep.push({ connections, service: s, baseline: b });
    }
    return result;
  } finally {
    await bare.stop();
  }
}

async function rawResponse(url: string, req: Omit<LoadRequest, 'url'>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const r = http.request(url, { method: req.method ?? 'GET', headers: req.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

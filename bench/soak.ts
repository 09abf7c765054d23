import http from 'node:http';
import net from 'node:net';
import { median, rssMb } from './harness.js';
import { DOMAIN, startService } from './service.js';

/**
 * Hostile load, bounded in count and time, against the service as `npm start` runs it:
 * memory after 20,000 distinct hostile titles, and service to normal clients while 5,000 slow
 * connections are held open. Prints what it measured; the service must stay up and bounded.
 */
const wikiUrl = process.env.WIKISTORE_BENCH_WIKI_URL;
if (!wikiUrl) throw new Error('WIKISTORE_BENCH_WIKI_URL must name the wiki (scripts/soak.sh starts it)');
const TITLES = 20_000;
const SLOW = 5_000;
const HOLD_SECONDS = 20;

const service = await startService('sqlite', wikiUrl);
const port = Number(new URL(service.base).port);
const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });

function get(path: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }));
    req.setTimeout(10_000, () => req.destroy());
  });
}

async function metric(name: string): Promise<number> {
  const text = await new Promise<string>((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve(body));
    });
  });
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
try {
  // Warm up: site info, one stored page.
  await get(`/${DOMAIN}/v1/page/Bodmin/html`);
  const rssBefore = rssMb(service.child.pid!).rss;
  const heapBefore = await metric('nodejs_heap_size_used_bytes');

  // 1. Distinct long titles, each a 301 to its normalised form: no wiki call, only memory.
  let next = 0;
  const statuses = new Map<number, number>();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < TITLES) {
        const i = next++;
        // Valid (at most 255 bytes) but not normalised (lower-case first letter): a 301, no wiki call.
        const title = `hostile_title_${i}_${'ẍ'.repeat(40)}${'y'.repeat(100)}`;
        const { status } = await get(`/${DOMAIN}/v1/page/${encodeURIComponent(title)}/html`);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const rssAfter = rssMb(service.child.pid!);
  const heapAfter = await metric('nodejs_heap_size_used_bytes');
  console.log(`hostile titles: ${TITLES} distinct, answers ${JSON.stringify(Object.fromEntries(statuses))}`);
  console.log(
    `memory: RSS ${rssBefore.toFixed(1)} -> ${rssAfter.rss.toFixed(1)} MB (peak ${rssAfter.peak.toFixed(1)} MB), heap used ${mb(heapBefore)} -> ${mb(heapAfter)} MB ` +
      `(bound: RSS peak ≤ 200 MB: ${rssAfter.peak <= 200 ? 'met' : 'MISSED'})`,
  );

  // 2. Slow connections: each sends part of its headers and stalls; one that the server cuts is
  // opened again, so SLOW stay open, while a normal client asks for a stored page.
  let open = 0;
  let cut = 0;
  let holding = true;
  const sockets = new Set<net.Socket>();
  const openSlow = () => {
    if (!holding) return;
    const socket = net.connect(port, '127.0.0.1');
    sockets.add(socket);
    socket.on('connect', () => {
      open++;
      socket.write(`GET /${DOMAIN}/v1/page/Bodmin/html HTTP/1.1\r\nHost: x\r\nX-Slow: `);
    });
    socket.on('error', () => {});
    // Read what the server says (its 408), so its close is seen.
    socket.on('data', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (socket.connecting === false && open > 0) open--;
      cut++;
      setTimeout(openSlow, 50);
    });
  };
  for (let i = 0; i < SLOW; i++) {
    openSlow();
    if (i % 500 === 499) await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let minOpen = Infinity;
  const until = Date.now() + HOLD_SECONDS * 1000;
  while (Date.now() < until) {
    minOpen = Math.min(minOpen, open);
    const batch = await Promise.all(Array.from({ length: 10 }, () => get(`/${DOMAIN}/v1/page/Bodmin/html`)));
    for (const r of batch) {
      if (r.status === 200) ok++;
      else failed++;
      latencies.push(r.ms);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  holding = false;
  for (const s of sockets) s.destroy();
  latencies.sort((a, b) => a - b);
  const p99 = latencies[Math.floor(latencies.length * 0.99)] ?? NaN;
  console.log(
    `slow connections: ${SLOW} held for ${HOLD_SECONDS} s (at least ${minOpen} open at once; ${cut} cut by the server's header timeout and reopened)`,
  );
  console.log(
    `normal requests meanwhile: ${ok} answered 200, ${failed} not (${((100 * ok) / Math.max(1, ok + failed)).toFixed(2)}%), ` +
      `p50 ${median(latencies).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target: all answered: ${failed === 0 ? 'met' : 'MISSED'})`,
  );
  console.log(`service RSS after: ${rssMb(service.child.pid!).rss.toFixed(1)} MB; still up: ${(await get('/_health')).status === 200 ? 'yes' : 'NO'}`);
} finally {
  agent.destroy();
  await service.stop();
}

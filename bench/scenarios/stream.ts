import http from 'node:http';
import { median, rssMb } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { api } from '../wiki-api.js';

const SECRET = 'bench-stream-secret-0123456789';

export interface StreamReport {
  /** From the wiki's answer to an edit to the event on an open stream (the notice pushed at once). */
  latencyMs: { median: number; p99: number; samples: number };
  /** The service's RSS with no stream, and with `streams` idle streams open. */
  rssMb: { before: number; after: number; streams: number };
}

/**
 * The change stream: how long after the wiki answers an edit its event reaches a client (the
 * notice sent as the WikistoreNotify extension sends it, the event recorded once the new revision
 * is rendered and stored), and what idle streams cost in memory.
 */
export async function streamScenario(wikiUrl: string, edits: number, idle: number): Promise<StreamReport> {
  const service = await startService('sqlite', wikiUrl, {}, '', 0, `    notice_secret: ${SECRET}\n`);
  const title = `Bench stream ${Date.now().toString(36)}`;
  const key = title.replace(/ /g, '_');
  const sockets: http.ClientRequest[] = [];
  try {
    await api(wikiUrl, { action: 'edit', title, text: 'Stream, version 0.', token: '+\\' }, true);
    await fetch(`${service.base}/${DOMAIN}/v1/page/${encodeURIComponent(key)}/html`).then((r) => r.arrayBuffer());
    // One client listening; the time each edit's event arrives.
    const arrived = new Map<number, number>();
    const listener = http.get(`${service.base}/${DOMAIN}/v1/changes?prefix=${encodeURIComponent(key)}`, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const m of chunk.matchAll(/"rev":(\d+)/g)) if (!arrived.has(Number(m[1]))) arrived.set(Number(m[1]), performance.now());
      });
    });
    sockets.push(listener);
    await new Promise((r) => setTimeout(r, 300));
    const latencies: number[] = [];
    for (let i = 0; i < edits; i++) {
      const rev = (await api(wikiUrl, { action: 'edit', title, text: `Stream, edit ${i}.`, token: '+\\' }, true)).edit.newrevid as number;
      const answered = performance.now();
      await fetch(`${service.base}/${DOMAIN}/v1/changes`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` },
        body: JSON.stringify([{ page_change_kind: 'edit', page: { page_title: key, namespace_id: 0 }, revision: { rev_id: rev } }]),
      }).then((r) => r.arrayBuffer());
      for (let waited = 0; !arrived.has(rev) && waited < 10_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      if (arrived.has(rev)) latencies.push(arrived.get(rev)! - answered);
    }
    const before = rssMb(service.child.pid!).rss;
    for (let i = 0; i < idle; i++) sockets.push(http.get(`${service.base}/${DOMAIN}/v1/changes`, (res) => res.resume()));
    await new Promise((r) => setTimeout(r, 3000));
    const after = rssMb(service.child.pid!).rss;
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      latencyMs: { median: median(latencies), p99: sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))] ?? NaN, samples: latencies.length },
      rssMb: { before, after, streams: idle },
    };
  } finally {
    for (const s of sockets) s.destroy();
    await service.stop();
  }
}

import http from 'node:http';
import { median, rssMb } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { api } from '../wiki-api.js';

const SECRET = 'bench-stream-secret-0123456789';
/** The follower's poll in the followed run: the setting an operator who wants events within a second picks. */
const FOLLOWER_POLL_SECONDS = 0.5;

interface Latency {
  median: number;
  p99: number;
  samples: number;
}

export interface StreamReport {
  /** From the wiki's answer to an edit to the event on an open stream (the notice pushed at once). */
  latencyMs: Latency;
  /** The same with no notice: the follower finds the edit by polling the wiki's recent changes. */
  followedMs: Latency & { pollSeconds: number };
  /** The service's RSS with no stream, and with `streams` idle streams open. */
  rssMb: { before: number; after: number; streams: number };
}

const latency = (samples: number[]): Latency => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: median(samples), p99: sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))] ?? NaN, samples: samples.length };
};

/**
 * `edits` edits of one page on the wiki, each waited for on a stream of the service at `base`:
 * the time from the wiki's answer to its event (`notify`: the notice pushed as the WikistoreNotify
 * extension pushes it; else the follower's to find).
 */
async function editLatencies(base: string, wikiUrl: string, edits: number, notify: boolean, sockets: http.ClientRequest[]): Promise<number[]> {
  const title = `Bench stream ${notify ? 'pushed' : 'followed'} ${Date.now().toString(36)}`;
  const key = title.replace(/ /g, '_');
  await api(wikiUrl, { action: 'edit', title, text: 'Stream, version 0.', token: '+\\' }, true);
  await fetch(`${base}/${DOMAIN}/v1/page/${encodeURIComponent(key)}/html`).then((r) => r.arrayBuffer());
  // One client listening; the time each edit's event arrives.
  const arrived = new Map<number, number>();
  const listener = http.get(`${base}/${DOMAIN}/v1/changes?prefix=${encodeURIComponent(key)}`, (res) => {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      for (const m of chunk.matchAll(/"rev":(\d+)/g)) if (!arrived.has(Number(m[1]))) arrived.set(Number(m[1]), performance.now());
    });
  });
  sockets.push(listener);
  await new Promise((r) => setTimeout(r, 300));
  const latencies: number[] = [];
  for (let i = 0; i < edits; i++) {
    // Followed edits land at any moment of the poll's cycle, not in step with it.
    if (!notify) await new Promise((r) => setTimeout(r, Math.random() * FOLLOWER_POLL_SECONDS * 1000));
    const rev = (await api(wikiUrl, { action: 'edit', title, text: `Stream, edit ${i}.`, token: '+\\' }, true)).edit.newrevid as number;
    const answered = performance.now();
    if (notify) {
      await fetch(`${base}/${DOMAIN}/v1/changes`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` },
        body: JSON.stringify([{ page_change_kind: 'edit', page: { page_title: key, namespace_id: 0 }, revision: { rev_id: rev } }]),
      }).then((r) => r.arrayBuffer());
    }
    for (let waited = 0; !arrived.has(rev) && waited < 10_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    if (arrived.has(rev)) latencies.push(arrived.get(rev)! - answered);
  }
  return latencies;
}

/**
 * The change stream: how long after the wiki answers an edit its event reaches a client (the
 * event recorded once the new revision is rendered and stored), with the notice pushed and with
 * the follower alone, and what idle streams cost in memory.
 */
export async function streamScenario(wikiUrl: string, edits: number, idle: number): Promise<StreamReport> {
  const sockets: http.ClientRequest[] = [];
  const followed = await startService('sqlite', wikiUrl, {}, `follow_changes: true\nfollower:\n  poll_interval: ${FOLLOWER_POLL_SECONDS}\n`);
  let followedMs: number[];
  try {
    followedMs = await editLatencies(followed.base, wikiUrl, edits, false, sockets);
  } finally {
    for (const s of sockets.splice(0)) s.destroy();
    await followed.stop();
  }
  const service = await startService('sqlite', wikiUrl, {}, '', 0, `    notice_secret: ${SECRET}\n`);
  try {
    const latencies = await editLatencies(service.base, wikiUrl, edits, true, sockets);
    const before = rssMb(service.child.pid!).rss;
    for (let i = 0; i < idle; i++) sockets.push(http.get(`${service.base}/${DOMAIN}/v1/changes`, (res) => res.resume()));
    await new Promise((r) => setTimeout(r, 3000));
    const after = rssMb(service.child.pid!).rss;
    return { latencyMs: latency(latencies), followedMs: { ...latency(followedMs), pollSeconds: FOLLOWER_POLL_SECONDS }, rssMb: { before, after, streams: idle } };
  } finally {
    for (const s of sockets) s.destroy();
    await service.stop();
  }
}

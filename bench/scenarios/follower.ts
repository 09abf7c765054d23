import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PQueue from 'p-queue';
import { median } from '../harness.js';
import { ADMIN_TOKEN, DOMAIN, startService } from '../service.js';
import { api, PAGEBUNDLE_999 } from '../wiki-api.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface FollowerReport {
  edits: number;
  pages: number;
  pollSeconds: number;
  lagMedianMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
}

export interface DependentsReport {
  dependents: number;
  seconds: number;
  perSecond: number;
  /** The same pages rendered by the wiki's Parsoid directly, one after another at the follower's concurrency. */
  directPerSecond: number;
}

export interface BackfillReport {
  pages: number;
  concurrency: number;
  backfillPagesPerSecond: number;
  /** The same pages rendered by the wiki's Parsoid directly (HTML and wikitext), at the same concurrency. */
  directPagesPerSecond: number;
}

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)]!;


/**
 * Follower lag: a burst of edits across pages, made on the wiki as fast as it takes them; each
 * edit's lag is from the wiki's answer to the first moment the service's storage holds that
 * revision (or a later one) as the page's latest, rendered. Default follower settings.
 */
export async function followerScenario(wikiUrl: string, edits: number): Promise<FollowerReport> {
  const service = await startService('sqlite', wikiUrl, {}, 'follow_changes: true\n');
  const run = Date.now().toString(36);
  const titles = Array.from({ length: 10 }, (_, i) => `Bench follow ${run} ${i}`);
  const stored = new Map<string, number>();
  const pending: { title: string; rev: number; at: number }[] = [];
  const lags: number[] = [];
  try {
    const metrics = async () => (await fetch(`${service.base}/metrics`)).text();
    for (let i = 0; !/^follower_leading\{domain="bench.example"\} 1$/m.test(await metrics()); i++) {
      if (i > 100) throw new Error('the follower did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    let polling = true;
    const poll = (async () => {
      while (polling || pending.length > 0) {
        await Promise.all(
          titles.map(async (title) => {
            const res = await fetch(`${service.base}/${DOMAIN}/sys/table/page_revisions/_query`, {
              method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
              body: JSON.stringify({ attributes: { title: title.replace(/ /g, '_') }, limit: 1 }),
            });
            const row = ((await res.json()) as { items: { latest_rev: number | null; latest_tid: string | null }[] }).items[0];
            if (row?.latest_rev && row.latest_tid) stored.set(title, row.latest_rev);
          }),
        );
        const now = performance.now();
        for (let i = pending.length - 1; i >= 0; i--) {
          const p = pending[i]!;
          if ((stored.get(p.title) ?? 0) >= p.rev) {
            lags.push(now - p.at);
            pending.splice(i, 1);
          }
        }
        if (!polling && pending.length > 0 && performance.now() - Math.max(...pending.map((p) => p.at)) > 60_000) throw new Error(`${pending.length} edits not followed within a minute`);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    for (let i = 0; i < edits; i++) {
      const title = titles[i % titles.length]!;
      const edit = await api(wikiUrl, { action: 'edit', title, text: `Edit ${i} of ${title}.`, token: '+\\' }, true);
      pending.push({ title, rev: edit.edit.newrevid as number, at: performance.now() });
    }
    polling = false;
    await poll;
    return { edits, pages: titles.length, pollSeconds: 1, lagMedianMs: median(lags), lagP99Ms: p99(lags), lagMaxMs: Math.max(...lags) };
  } finally {
    await service.stop();
  }
}

/**
 * Backfill throughput: the backfill command over `count` pages of the wiki into empty storage,
 * next to the same pages rendered by the wiki's Parsoid directly at the same concurrency (the
 * rate the wiki allows; the backfill adds metadata, storage and compression).
 */
export async function backfillScenario(wikiUrl: string, count: number, concurrency = 4): Promise<BackfillReport> {
  const list = await api(wikiUrl, { action: 'query', list: 'allpages', apnamespace: '0', aplimit: String(count) });
  const titles = (list.query.allpages as { title: string }[]).map((p) => p.title);
  const service = await startService('sqlite', wikiUrl);
  await service.stop(); // only its data dir and config are used
  const file = path.join(service.dir, 'titles.txt');
  fs.writeFileSync(file, titles.join('\n'));

  const direct = async () => {
    const queue = new PQueue({ concurrency });
    const t0 = performance.now();
    await Promise.all(
      titles.map((title) =>
        queue.add(async () => {
          const key = encodeURIComponent(title.replace(/ /g, '_'));
          const info = await api(wikiUrl, { action: 'query', prop: 'info', titles: title });
          const rev = info.query.pages[0].lastrevid as number;
          await Promise.all([
            fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/pagebundle/${key}/${rev}`, { headers: { accept: PAGEBUNDLE_999 } }).then((r) => r.arrayBuffer()),
            fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/wikitext/${key}/${rev}`).then((r) => r.arrayBuffer()),
          ]);
        }),
      ),
    );
    return titles.length / ((performance.now() - t0) / 1000);
  };
  const backfill = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      const child = spawn(process.execPath, [path.join(HERE, '../../src/bin/backfill.js'), '--domain', DOMAIN, '--titles-from', file, '--concurrency', String(concurrency)], {
        env: { ...process.env, CONFIG: service.config }, stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c));
      child.on('exit', (code) => {
        if (code !== 0) return reject(new Error(`backfill exited ${code}: ${out}`));
        resolve(titles.length / ((performance.now() - t0) / 1000));
      });
    });
  const directPagesPerSecond = await direct();
  const backfillPagesPerSecond = await backfill();
  return { pages: titles.length, concurrency, backfillPagesPerSecond, directPagesPerSecond };
}

/**
 * A template used by `count` stored pages changes: the time from the edit on the wiki to the last
 * of them re-rendered and stored (the follower's default settings), next to the rate at which the
 * wiki's Parsoid renders the same pages when asked directly at the same concurrency. The pages
 * are made once and kept on the wiki for later runs.
 */
export async function dependentsScenario(wikiUrl: string, count: number, concurrency = 4): Promise<DependentsReport> {
  const template = 'Template:Bench dependents box';
  // Outside the content namespaces, so the wiki's articles (and a backfill of them) stay as they are.
  const titles = Array.from({ length: count }, (_, i) => `Project:Bench dependent ${i}`);
  const made = new PQueue({ concurrency: 4 });
  await api(wikiUrl, { action: 'edit', title: template, text: 'Box, before.', token: '+\\' }, true);
  await Promise.all(titles.map((title, i) => made.add(() => api(wikiUrl, { action: 'edit', title, text: `{{Bench dependents box}} Page ${i}.`, token: '+\\' }, true))));
  const service = await startService('sqlite', wikiUrl, {}, 'follow_changes: stored\n');
  try {
    const reads = new PQueue({ concurrency: 8 });
    await Promise.all(titles.map((title) => reads.add(async () => {
      const res = await fetch(`${service.base}/${DOMAIN}/v1/page/${encodeURIComponent(title.replace(/ /g, '_')).replace(/%3A/g, ':')}/html`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${title}: ${res.status}`);
    })));
    const metrics = async () => (await fetch(`${service.base}/metrics`)).text();
    const done = async () => Number(/^follower_tasks_total\{domain="bench\.example",task="dependent",outcome="done"\} (\d+)/m.exec(await metrics())?.[1] ?? 0);
    for (let i = 0; !/^follower_leading\{domain="bench.example"\} 1$/m.test(await metrics()); i++) {
      if (i > 100) throw new Error('the follower did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = await done();
    const t0 = performance.now();
    await api(wikiUrl, { action: 'edit', title: template, text: `Box, after ${Date.now()}.`, token: '+\\' }, true);
    while ((await done()) - before < count) {
      if (performance.now() - t0 > 600_000) throw new Error('the dependents were not re-rendered within 10 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t0) / 1000;
    const direct = new PQueue({ concurrency });
    const d0 = performance.now();
    await Promise.all(titles.map((title) => direct.add(async () => {
      const key = encodeURIComponent(title.replace(/ /g, '_'));
      await fetch(`${wikiUrl}/rest.php/127.0.0.1/v3/page/pagebundle/${key}`, { headers: { accept: PAGEBUNDLE_999 } }).then((r) => r.arrayBuffer());
    })));
    return { dependents: count, seconds, perSecond: count / seconds, directPerSecond: count / ((performance.now() - d0) / 1000) };
  } finally {
    await service.stop();
  }
}


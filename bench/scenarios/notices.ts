import fs from 'node:fs';
import path from 'node:path';
import { median } from '../harness.js';
import { DOMAIN, startService } from '../service.js';
import { api } from '../wiki-api.js';

/** Where the bench wiki reads where its notices go (scripts/wiki.sh includes it when present). */
const NOTIFY_SETTINGS = path.resolve(process.env.WIKISTORE_BENCH_WIKI_DIR ?? '.wiki', 'NotifySettings.php');
const SECRET = 'bench-notice-secret-0123456789';
/** Edits per block; blocks alternate between notices off and on, so drift of the wiki's speed falls on both. */
const BLOCK = 10;

export interface NoticesReport {
  samples: number;
  withoutMs: { median: number; p99: number };
  withMs: { median: number; p99: number };
  /** What the extension adds to an edit (median and p99 of the two sets). */
  addedMedianMs: number;
  addedP99Ms: number;
  /** Reads made right after the edit returned that showed it. */
  freshReads: number;
}

const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(0.99 * values.length))]!;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function notices(url: string | undefined): Promise<void> {
  if (url === undefined) fs.rmSync(NOTIFY_SETTINGS, { force: true });
  else fs.writeFileSync(NOTIFY_SETTINGS, `<?php\n$wgWikistoreNotifyUrl = '${url}';\n$wgWikistoreNotifySecret = '${SECRET}';\n$wgWikistoreNotifyTimeout = 2;\n`);
  // PHP's opcache looks at an included file's time stamp every 2 s, counted in whole seconds: up
  // to 2.8 s was seen before the wiki read a rewritten one.
  await pause(3100);
}

/**
 * The WikistoreNotify extension's cost to an editor: edits made on the wiki (as one editor makes
 * them, one after another) with notices to the service and without, and whether a read through
 * rest.php/v1 right after each edit with notices shows it.
 */
export async function noticesScenario(wikiUrl: string, edits: number): Promise<NoticesReport> {
  const service = await startService('sqlite', wikiUrl, {}, '', 0, `    notice_secret: ${SECRET}\n`);
  const title = `Bench notices ${Date.now().toString(36)}`;
  const key = encodeURIComponent(title.replace(/ /g, '_'));
  const without: number[] = [];
  const withNotices: number[] = [];
  let fresh = 0;
  try {
    await api(wikiUrl, { action: 'edit', title, text: 'Notices, version 0.', token: '+\\' }, true);
    await fetch(`${service.base}/${DOMAIN}/rest.php/v1/page/${key}/bare`).then((r) => r.arrayBuffer());
    for (let block = 0; without.length + withNotices.length < edits; block++) {
      const on = block % 2 === 1;
      await notices(on ? `${service.base}/${DOMAIN}/v1/changes` : undefined);
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        const rev = (await api(wikiUrl, { action: 'edit', title, text: `Notices, block ${block} edit ${i}.`, token: '+\\' }, true)).edit.newrevid as number;
        (on ? withNotices : without).push(performance.now() - t0);
        if (!on) continue;
        const read = (await (await fetch(`${service.base}/${DOMAIN}/rest.php/v1/page/${key}/bare`)).json()) as { latest?: { id: number } };
        if (read.latest?.id === rev) fresh++;
      }
    }
  } finally {
    await notices(undefined);
    await service.stop();
  }
  return {
    samples: withNotices.length,
    withoutMs: { median: median(without), p99: p99(without) },
    withMs: { median: median(withNotices), p99: p99(withNotices) },
    addedMedianMs: median(withNotices) - median(without),
    addedP99Ms: p99(withNotices) - p99(without),
    freshReads: fresh,
  };
}

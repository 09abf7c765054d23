import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { createApp, type App } from '../../src/app.js';
import { defaultConfig, type Config, type StorageConfig } from '../../src/config.js';
import { storeAbandoned, storeFinished } from '../../test/transaction-load.js';

export interface SweepRow {
  backend: string;
  finished: number;
  fillSeconds: number;
  /** From a new process's start to a dead process's 20 transactions finished. */
  recoverSeconds: number;
  /** The first sweep of a new process (reads every minute of the lifetime once). */
  coldSweepMs: number;
  /** Later sweeps: the open minutes and those still holding entries. */
  warmSweepMs: number;
}

const ADMIN = 'bench-admin-token';

async function open(storage: StorageConfig, domain: string, sweepSeconds: number): Promise<App> {
  const config: Config = {
    ...defaultConfig(fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-sweep-'))),
    storage,
    wikis: { [domain]: { action_api: 'http://127.0.0.1:1/api.php', rest_api: 'http://127.0.0.1:1/rest.php' } },
    admin_token: ADMIN, log_level: 'silent', ttl_sweep_interval: 0, follow_changes: false,
    transaction_sweep_interval: sweepSeconds,
  };
  config.listen = { host: '127.0.0.1', port: 0 };
  const app = await createApp(config, { log: pino({ level: 'silent' }) });
  await app.listen();
  return app;
}

async function gauge(app: App, name: string): Promise<number> {
  const metric = await app.metrics.registry.getSingleMetric(name)?.get();
  return Number(metric?.values[0]?.value ?? 0);
}

async function sweepsDone(app: App): Promise<number> {
  const metric = await app.metrics.registry.getSingleMetric('transactions_sweeps_total')?.get();
  return metric?.values.filter((v) => v.labels.outcome === 'done').reduce((n, v) => n + v.value, 0) ?? 0;
}

/**
 * The transaction sweep as the store grows: `finished` transactions stored (spread over the
 * lifetime), then a dead process's 20 left unfinished, and a new process started on it.
 */
export async function sweepScenario(backend: string, storage: StorageConfig, sizes: number[]): Promise<SweepRow[]> {
  const rows: SweepRow[] = [];
  for (const finished of sizes) {
    const domain = `sweep-${finished}-${Date.now().toString(36)}.bench`;
    const first = await open(storage, domain, 0);
    const filling = Date.now();
    await storeFinished(first.storage, domain, finished, { concurrency: backend === 'sqlite' ? 8 : 128 });
    const fillSeconds = (Date.now() - filling) / 1000;
    const bucketUri = `/${domain}/sys/key_rev_value/swept`;
    await fetch(`http://127.0.0.1:${(first.server.address() as { port: number }).port}${bucketUri}`, { method: 'PUT', headers: { authorization: `Bearer ${ADMIN}` } });
    const requests = Array.from({ length: 20 }, (_, i) => ({ method: 'PUT', uri: `${bucketUri}/k${i}`, headers: { 'content-type': 'text/plain' }, body: `abandoned ${i}` }));
    const tids = await storeAbandoned(first.storage, domain, requests);
    await first.close();

    const started = Date.now();
    const second = await open(storage, domain, 0.2);
    const unfinished = new Set(tids);
    let coldSweepMs = 0;
    while (unfinished.size > 0 && Date.now() - started < 120_000) {
      if (!coldSweepMs && (await sweepsDone(second)) >= 1) coldSweepMs = (await gauge(second, 'transactions_sweep_seconds')) * 1000;
      // Read from storage, not GET: a GET of an unfinished transaction would take it over itself.
      for (const tid of unfinished) {
        const [row] = (await second.storage.get(domain, { table: 'transactions', attributes: { tid } })).items;
        if (row?.state === 'done') unfinished.delete(tid);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const recoverSeconds = (Date.now() - started) / 1000;
    if (unfinished.size > 0) throw new Error(`${unfinished.size} abandoned transactions left unfinished with ${finished} stored (${backend})`);
    const done = await sweepsDone(second);
    while ((await sweepsDone(second)) < done + 3) await new Promise((r) => setTimeout(r, 50));
    const warmSweepMs = (await gauge(second, 'transactions_sweep_seconds')) * 1000;
    await second.close();
    rows.push({ backend, finished, fillSeconds, recoverSeconds, coldSweepMs, warmSweepMs });
    console.log(`sweep ${backend} ${finished}: filled in ${fillSeconds.toFixed(1)} s; finished 20 in ${recoverSeconds.toFixed(2)} s; sweeps ${coldSweepMs.toFixed(1)} ms cold, ${warmSweepMs.toFixed(1)} ms warm`);
  }
  return rows;
}

import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Module, RequestContext } from '../../../router/types.js';
import { SnapshotWriter } from '../snapshot/snapshot-writer.js';
import type { SnapshotShelf } from './snapshot-shelf.js';
import { BatchMaker, type BatchSources } from './batch-maker.js';

export interface ScheduleOptions {
  /** Full snapshots this often (none if absent). */
  everyMs?: number;
  /** Each day's batch (the pages its changes named, at their newest) made anew this often (none if absent). */
  batchEveryMs?: number;
  keep: number;
  namespaces: number[];
  /** The wikis snapshotted (those listed by name: a farm's are taken with `npm run snapshot -- --group`). */
  domains: () => string[];
}

/** How often the schedule looks whether a snapshot is due. */
const LOOK_MS = 60_000;
/** A claim on a wiki's next snapshot older than this is a dead process's: taken over. */
const STALE_CLAIM_MS = 6 * 3600_000;
/** A batch (a day's changes) takes minutes: its claim is a dead process's sooner. */
const STALE_BATCH_CLAIM_MS = 3600_000;

/**
 * Snapshots made on a schedule (`snapshots.every`), for the HTTP snapshot API: each wiki's next one
 * once its newest finished one is `every` old, written beside the others on the shelf while reads
 * go on (two pages at a time, bodies copied from storage), then all but the newest `keep` dropped.
 * One process of those sharing the shelf makes each (a claim file, taken atomically); one that
 * stopped half way is resumed by the next look (its folder remembers its moment).
 */
export function snapshotScheduleModule(sources: BatchSources, shelf: SnapshotShelf, options: ScheduleOptions, log: Logger): Module {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopping = false;
  const claimFile = (domain: string) => path.join(shelf.dir, domain, '.making');

  /** The moment of the snapshot due now, or undefined if none is: an unfinished one's, else now if the newest finished is old enough. */
  const due = (domain: string): { at: number; out: string } | undefined => {
    if (options.everyMs === undefined) return undefined;
    const newestRun = shelf.runs(domain, { finished: false })[0];
    if (newestRun && !fs.existsSync(path.join(newestRun, 'manifest.json'))) {
      const at = JSON.parse(fs.readFileSync(path.join(newestRun, '.work', 'options.json'), 'utf8') || '{}').at as number | undefined;
      if (at) return { at, out: newestRun };
    }
    const finished = shelf.runs(domain)[0];
    const last = finished ? JSON.parse(fs.readFileSync(path.join(finished, 'manifest.json'), 'utf8')).date_modified as string : undefined;
    if (last && Date.parse(last) + options.everyMs > Date.now()) return undefined;
    const at = Math.floor(Date.now() / 1000) * 1000;
    return { at, out: shelf.folderFor(domain, at) };
  };

  const claim = (domain: string, file = claimFile(domain), staleMs = STALE_CLAIM_MS): boolean => {
    fs.mkdirSync(path.join(shelf.dir, domain), { recursive: true });
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      const age = Date.now() - fs.statSync(file).mtimeMs;
      if (age < staleMs) return false;
      fs.rmSync(file, { force: true });
      return claim(domain, file, staleMs);
    }
  };

  const makeDue = async (ctx: RequestContext) => {
    for (const domain of options.domains()) {
      if (stopping) return;
      const next = due(domain);
      if (!next || !claim(domain)) continue;
      try {
        const report = await new SnapshotWriter(sources, domain).run(ctx, {
          at: next.at, namespaces: options.namespaces, out: next.out, pagesPerChunk: 1000, concurrency: 2, stopped: () => stopping,
        });
        if (report.complete) shelf.prune(domain, options.keep);
        log.info({ domain, at: new Date(next.at).toISOString(), complete: report.complete, bodies: report.bodies }, 'scheduled snapshot');
      } catch (err) {
        log.warn({ err, domain }, 'a scheduled snapshot failed; the next look tries again');
      } finally {
        fs.rmSync(claimFile(domain), { force: true });
      }
    }
  };

  const batches = options.batchEveryMs === undefined ? undefined : new BatchMaker(sources, shelf, { everyMs: options.batchEveryMs, namespaces: options.namespaces }, log);
  let batching: Promise<void> | undefined;
  /** Each wiki's batches due (its own claim, apart from full snapshots': an hourly batch does not wait for a day's snapshot). */
  const makeBatches = async (ctx: RequestContext) => {
    for (const domain of options.domains()) {
      if (stopping) return;
      const file = path.join(shelf.dir, domain, '.batching');
      if (!batches!.due(domain) || !claim(domain, file, STALE_BATCH_CLAIM_MS)) continue;
      try {
        await batches!.make(ctx, domain, () => stopping);
      } catch (err) {
        log.warn({ err, domain }, 'a batch failed; the next look tries again');
      } finally {
        fs.rmSync(file, { force: true });
      }
    }
  };

  return {
    name: 'enterprise-snapshot-schedule',
    api: 'sys',
    routes: [],
    async setup(ctx) {
      const look = () => {
        if (stopping) return;
        if (!running && options.everyMs !== undefined) running = makeDue(ctx).finally(() => (running = undefined));
        if (!batching && batches) batching = makeBatches(ctx).finally(() => (batching = undefined));
      };
      timer = setInterval(look, LOOK_MS);
      timer.unref();
      setTimeout(look, 5_000).unref();
    },
    async close() {
      stopping = true;
      clearInterval(timer);
      await running;
      await batching;
    },
  };
}

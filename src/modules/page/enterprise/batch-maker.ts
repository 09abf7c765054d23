import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { RequestContext } from '../../../router/types.js';
import { tidTime } from '../../../util/tid.js';
import { ChangeLog } from '../tables/change-log.js';
import { SnapshotWriter, type SnapshotSources } from '../snapshot/snapshot-writer.js';
import type { PageService } from '../read/page-service.js';
import type { SnapshotShelf } from './snapshot-shelf.js';

/** What a batch is made from: a snapshot's sources, and the change log naming the day's pages. */
export type BatchSources = SnapshotSources & Pick<PageService, 'changes'>;

const DAY_MS = 86_400_000;
/** Events read from the change log at once. */
const LOG_PAGE = 1000;

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const startOfDay = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** A batch to make: its day, its moment, its folder. */
interface Due {
  day: string;
  at: number;
  out: string;
}

/**
 * Wikimedia Enterprise's batches for a wiki: per day (UTC), every page its changes named, each at
 * its newest then (a page gone or hidden since as a line without text saying so), made anew every
 * `everyMs` through the day and once more at its end, so the day's last batch holds all of its
 * changes. The pages are those the day's change log names (the work is the day's changes, not
 * the wiki), each read as a scheduled snapshot reads it: its facts asked of the wiki where not
 * yet stored, so a page edited a moment before has its editor and lists as On-demand gives them.
 * Offered at `/v2/batches/{day}`; a day's newest finished batch is kept, for `BATCH_DAYS`.
 */
export class BatchMaker {
  constructor(
    private readonly sources: BatchSources,
    private readonly shelf: SnapshotShelf,
    private readonly options: { everyMs: number; namespaces: number[] },
    private readonly log: Logger,
  ) {}

  /** The batch due now, if any: one stopped half way; yesterday's last, once the day is over; today's, once its newest is `everyMs` old. */
  due(domain: string, now = Date.now()): Due | undefined {
    const today = dayOf(now);
    const yesterday = dayOf(now - DAY_MS);
    for (const day of [yesterday, today]) {
      const newest = this.shelf.runs(domain, { finished: false }, day)[0];
      if (newest && !fs.existsSync(path.join(newest, 'manifest.json'))) {
        const at = (JSON.parse(fs.readFileSync(path.join(newest, '.work', 'options.json'), 'utf8') || '{}') as { at?: number }).at;
        if (at) return { day, at, out: newest };
      }
    }
    const madeAt = (day: string) => {
      const finished = this.shelf.runs(domain, {}, day)[0];
      return finished ? Date.parse((JSON.parse(fs.readFileSync(path.join(finished, 'manifest.json'), 'utf8')) as { date_modified: string }).date_modified) : undefined;
    };
    // Yesterday's changes whole, once: only where a batch of it was begun (a wiki first served today has none to finish).
    const endOfYesterday = startOfDay(today) - 1;
    const yesterdays = madeAt(yesterday);
    if (yesterdays !== undefined && yesterdays < endOfYesterday) return { day: yesterday, at: endOfYesterday, out: this.shelf.folderFor(domain, endOfYesterday, yesterday) };
    const todays = madeAt(today);
    if (todays !== undefined && todays + this.options.everyMs > now) return undefined;
    const at = Math.floor(now / 1000) * 1000;
    return { day: today, at, out: this.shelf.folderFor(domain, at, today) };
  }

  /** Makes the batch due (if one still is), then drops the day's older batches and the days past keeping. */
  async make(ctx: RequestContext, domain: string, stopped: () => boolean): Promise<void> {
    const due = this.due(domain);
    if (!due) return;
    // (A run resumed reads the titles it listed, where it listed them.)
    const titles = await this.changedTitles(ctx, domain, startOfDay(due.day), due.at);
    const report = await new SnapshotWriter(this.sources, domain).run(ctx, {
      at: due.at, namespaces: this.options.namespaces, out: due.out, pagesPerChunk: 1000, concurrency: 2, titles, goneLines: true, stopped,
    });
    if (report.complete) this.shelf.pruneBatches(domain, dayOf(Date.now()));
    this.log.info({ domain, day: due.day, at: new Date(due.at).toISOString(), complete: report.complete, pages: titles.length }, 'batch');
  }

  /** The titles the change log names from `from` to `to` (ms): pages changed, and those moved to. */
  private async changedTitles(ctx: RequestContext, domain: string, from: number, to: number): Promise<string[]> {
    const log = this.sources.changes.of(domain);
    const titles = new Set<string>();
    let cursor = ChangeLog.idBefore(from);
    for (;;) {
      const events = await log.after(ctx, cursor, LOG_PAGE);
      for (const event of events) {
        if (tidTime(event.id) > to) return [...titles];
        titles.add(event.title);
        if (event.to) titles.add(event.to);
      }
      if (events.length < LOG_PAGE) return [...titles];
      cursor = events.at(-1)!.id;
    }
  }
}

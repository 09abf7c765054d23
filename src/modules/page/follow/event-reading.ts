import { HttpError } from '../../../util/errors.js';
import type { RequestContext } from '../../../router/types.js';
import { gunzip } from '../../../util/compression.js';
import type { BoundedMap } from '../../../util/bounded-map.js';
import type { PageService } from '../read/page-service.js';
import type { ChangeEvent, ChangeLog } from '../tables/change-log.js';

/** A page's Enterprise record now, as On-demand answers it (a JSON line; a 404 if it has no visible revision). */
export interface RecordReader {
  article(ctx: RequestContext, domain: string, name: string): Promise<string>;
}

/** Events after which a page has a record to carry (deletions and visibility changes carry no text). */
export const RECORD_KINDS = new Set<ChangeEvent['kind']>(['edit', 'rerender', 'undelete', 'move', 'record']);

/**
 * How a stream writes its events: Server-Sent Events for `/v1/changes`, record lines for
 * Enterprise's Realtime (realtime-lines.ts).
 */
export interface EventWriter {
  /** Sent first (SSE's reconnection delay). */
  readonly opening?: string;
  /** Sent every so often while idle (an SSE comment); none where the format has no line that says nothing. */
  readonly keepAlive?: string;
  /** One event as the client reads it, or undefined when the client's filters leave it out. */
  write(event: ChangeEvent): Promise<string | undefined>;
}

export type EventSources = Pick<PageService, 'changes' | 'renders' | 'revisions' | 'wiki'>;

/**
 * What a stream reads to write its events, for one client (its context): the event's wiki and
 * namespace, the render's HTML and the page's record, each only while the text may be shown now.
 */
export class EventReading {
  constructor(
    readonly ctx: RequestContext,
    private readonly log: ChangeLog,
    private readonly service: EventSources,
    private readonly records: RecordReader | undefined,
    /** Records read for events, shared by the streams of this process (each event's record read once). */
    private readonly recordsRead: BoundedMap<string, Promise<unknown>>,
  ) {}

  /** A group's log holds every wiki's events: each is read on its own wiki. */
  domainOf(event: ChangeEvent): string {
    return event.domain ?? this.log.domain;
  }

  siteInfo(domain: string) {
    return this.service.wiki(domain).siteInfo();
  }

  async namespaceOf(domain: string, title: string): Promise<number> {
    return (await this.service.wiki(domain).describe(title).catch(() => ({ ns: 0 }))).ns;
  }

  /** The HTML of an event's render, if it has one and its revision may be shown now. */
  async html(domain: string, event: ChangeEvent): Promise<string | undefined> {
    if (!event.tid || event.rev === undefined || !(await this.visibleNow(domain, event.title, event.rev))) return undefined;
    const render = await this.service.renders.byTid(this.ctx, domain, event.title, event.tid, event.rev).catch(() => undefined);
    return render ? (await gunzip(render.parts.html)).toString('utf8') : undefined;
  }

  /**
   * The page's record as on-demand answers it now; none if it has no visible revision now
   * (deleted, hidden since). Read once per event for every stream sending it (`recordsRead`).
   */
  record(domain: string, title: string, eventId: string): Promise<Record<string, unknown> | undefined> {
    if (!this.records) return Promise.resolve(undefined);
    const records = this.records;
    const key = `${domain}\u0000${title}\u0000${eventId}`;
    return this.recordsRead.remember(key, () => records.article(this.ctx, domain, title).then((line) => JSON.parse(line) as Record<string, unknown>, (e: unknown) => {
      if (e instanceof HttpError && (e.status === 404 || e.status === 403 || e.status === 410)) return undefined;
      // A failure is not kept: the stream's client resumes, and the record is read anew.
      this.recordsRead.delete(key);
      throw e;
    })) as Promise<Record<string, unknown> | undefined>;
  }

  /**
   * Whether a revision's text may be shown now: an event is read back for as long as the log keeps
   * it, and its revision may have been hidden, or its page deleted, since (a client resuming from
   * yesterday gets the event, not the text).
   */
  private async visibleNow(domain: string, title: string, rev: number): Promise<boolean> {
    const row = await this.service.revisions.table(domain).get(this.ctx, title, rev);
    return !!row && !row.text_hidden && !row.deleted;
  }

  /** What of a revision may be shown now (Enterprise's `visibility`), if it is stored. */
  async visibility(domain: string, title: string, rev: number): Promise<{ text: boolean; editor: boolean; comment: boolean } | undefined> {
    const row = await this.service.revisions.table(domain).get(this.ctx, title, rev);
    return row ? { text: !row.text_hidden, editor: !row.user_hidden, comment: !row.comment_hidden } : undefined;
  }
}

import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { badRequest } from '../../../util/errors.js';
import { ARTICLE_FIELDS, checkFields, selectFields } from '../model/record-fields.js';
import type { Module, RequestContext, RouteRequest } from '../../../router/types.js';
import { isTid, parseTime, tidTime } from '../../../util/tid.js';
import { TIMEUUID_EPOCH_MS } from '../../../util/timeuuid.js';
import { BoundedMap } from '../../../util/bounded-map.js';
import { ChangeLog, type ChangeEvent } from '../tables/change-log.js';
import { ChangeFeed, isAfter } from './change-feed.js';
import { EventReading, RECORD_KINDS, type EventSources, type EventWriter, type RecordReader } from './event-reading.js';
import { realtimeWriter, type RealtimeOptions } from './realtime-lines.js';

/** Events' records kept for the streams still to send them (a few hundred: the feed's recent events). */
const RECORDS_KEPT = 256;

/** A comment line every so often keeps an idle stream open through proxies that close silent connections. */
const HEARTBEAT_MS = 15_000;
/** Events read from the log at once while a stream catches up. */
const CATCH_UP_PAGE = 200;
/** Events from the feed held for a stream still catching up; past this it reads them from the log. */
const MAX_HELD = 1000;
/**
 * One client's events: the change log from its position on, then the feed. It reads the log only
 * when the client takes what it was given (backpressure), so a slow client holds a bounded buffer;
 * one that takes nothing for `stallMs` is cut, and resumes where it stopped.
 */
class ChangeEventStream extends Readable {
  private held: ChangeEvent[] = [];
  /** Behind the feed: the log is read until this stream reaches the feed's position. */
  private catchingUp = true;
  private pumping = false;
  /** The client has not taken what it was given: nothing more is pushed until it asks (`_read`). */
  private waiting = false;
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private stall: NodeJS.Timeout | undefined;

  constructor(
    private cursor: string,
    feed: ChangeFeed,
    private readonly log: ChangeLog,
    private readonly ctx: RequestContext,
    private readonly writer: EventWriter,
    private readonly stallMs: number,
    private readonly logger: Logger,
  ) {
    super({ highWaterMark: 64 * 1024 });
    if (writer.opening) this.push(writer.opening);
    this.unsubscribe = feed.subscribe((events) => this.fromFeed(events));
    const keepAlive = writer.keepAlive;
    if (keepAlive) this.heartbeat = setInterval(() => this.push(keepAlive), HEARTBEAT_MS);
  }

  private fromFeed(events: ChangeEvent[]): void {
    this.held.push(...events);
    // Too many waiting for a slow or catching-up client: read from the log instead, later.
    if (this.held.length > MAX_HELD) {
      this.held = [];
      this.catchingUp = true;
    }
    if (!this.pumping && !this.waiting) void this.pump();
  }

  override _read(): void {
    clearTimeout(this.stall);
    this.stall = undefined;
    this.waiting = false;
    if (!this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      for (;;) {
        if (this.destroyed) return;
        let events: ChangeEvent[];
        if (this.catchingUp) {
          events = await this.log.after(this.ctx, this.cursor, CATCH_UP_PAGE);
          if (events.length < CATCH_UP_PAGE) {
            // Caught up: what the feed hands out from its position on follows what was read here.
            this.catchingUp = false;
          }
        } else {
          events = this.held.filter((e) => isAfter(e.id, this.cursor));
          this.held = [];
        }
        if (events.length === 0) return;
        let more = true;
        for (const event of events) {
          this.cursor = event.id;
          const text = await this.writer.write(event);
          if (text !== undefined && !this.push(text)) {
            more = false;
            break;
          }
        }
        if (!more) {
          // The client has not taken what it was given: wait for it, not longer than stallMs. What
          // was not pushed is read from the log after the cursor once it takes it: a slow client
          // holds one buffer's worth, not a page of events with their HTML, and is cut as soon as
          // it has stopped taking that long.
          this.catchingUp = true;
          this.waiting = true;
          this.stall = setTimeout(() => this.destroy(), this.stallMs);
          this.stall.unref();
          return;
        }
      }
    } catch (err) {
      this.logger.warn({ err }, 'a change stream failed; the client resumes where it stopped');
      this.destroy();
    } finally {
      this.pumping = false;
    }
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    clearInterval(this.heartbeat);
    clearTimeout(this.stall);
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    callback(err);
  }
}

interface SseOptions {
  namespaces?: Set<number>;
  prefix?: string;
  includeHtml: boolean;
  /** Each event carries its page's Enterprise record now (`include=record`), with only these fields if any. */
  includeRecord?: { fields: string[][] };
}

/** `/v1/changes`' Server-Sent Events: each event its id, its kind and its data (the event, its namespace and time, what was included). */
function sseWriter(reading: EventReading, options: SseOptions): EventWriter {
  return {
    opening: 'retry: 2000\n\n',
    keepAlive: ': keep-alive\n\n',
    async write(event) {
      const domain = reading.domainOf(event);
      const ns = await reading.namespaceOf(domain, event.title);
      if (options.namespaces && !options.namespaces.has(ns)) return undefined;
      if (options.prefix !== undefined && !event.title.startsWith(options.prefix) && !(event.to ?? '').startsWith(options.prefix)) return undefined;
      const data: Record<string, unknown> = { ...event, namespace: ns, dt: new Date(tidTime(event.id)).toISOString() };
      if (options.includeHtml) {
        const html = await reading.html(domain, event);
        if (html !== undefined) data.html = html;
      }
      if (options.includeRecord && RECORD_KINDS.has(event.kind)) {
        const record = await reading.record(domain, event.to ?? event.title, event.id);
        if (record) data.record = options.includeRecord.fields.length ? selectFields(record, options.includeRecord.fields) : record;
      }
      return `id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(data)}\n\n`;
    },
  };
}

/** Where a client starts: after the event it names (Last-Event-ID, or `since` an id), from a time (`since`), or from now. */
export function startOf(since: string | undefined): string {
  if (since === undefined) return ChangeLog.idBefore(Date.now());
  if (isTid(since)) return since.toLowerCase();
  const invalid = () => badRequest('since (or Last-Event-ID) is an event id or a time (ISO 8601) from 1582-10-15 on, not in the future.', 'invalid-since');
  if (!/^\d{4}-?\d{2}-?\d{2}T/.test(since)) throw invalid();
  let at: number;
  try {
    at = parseTime(since);
  } catch {
    throw invalid();
  }
  // A time-uuid names no time before the Gregorian calendar began: no event id can come after it.
  if (at <= TIMEUUID_EPOCH_MS) throw invalid();
  return ChangeLog.idBefore(at);
}

/** The change streams of this process: `/v1/changes`' module, and Enterprise's Realtime on the same feeds. */
export interface ChangeStreams {
  readonly module: Module;
  /** A wiki's changes from `start` (an event id, see `startOf`) on, as Enterprise's Realtime lines. */
  realtime(ctx: RequestContext, domain: string, start: string, options: RealtimeOptions): Readable;
}

/**
 * `GET /{domain}/v1/changes`: every change to what the service stores of a page, as Server-Sent
 * Events (an EventSource), in order, each with its id; `Last-Event-ID` (or `since`) resumes after
 * an event or from a time within the change log's keeping period. `namespace=0,4` and `prefix`
 * filter; `include=html` carries the new render's HTML. The same feeds serve Enterprise's Realtime.
 */
export function changeStreams(
  service: EventSources, log: Logger, stallMs: number, homeOf: (domain: string) => string | undefined = () => undefined,
  records?: RecordReader,
): ChangeStreams {
  const feeds = new Map<ChangeLog, ChangeFeed>();
  const recordsRead = new BoundedMap<string, Promise<unknown>>(RECORDS_KEPT);
  let setupCtx: RequestContext | undefined;
  const feedOf = (changes: ChangeLog) => {
    let feed = feeds.get(changes);
    if (!feed) feeds.set(changes, (feed = new ChangeFeed(changes, service.changes, setupCtx!, log)));
    return feed;
  };
  /** The log a client asked for: its wiki's, or (`scope=group`) its storage group's. */
  const logOf = (req: RouteRequest): ChangeLog => {
    if (req.query.get('scope') !== 'group') return service.changes.of(req.domain);
    const home = homeOf(req.domain);
    if (home === undefined) throw badRequest(`${req.domain} is in no storage group of a pattern: scope=group is for a farm's wikis.`, 'no-group');
    return service.changes.ofGroup(home);
  };
  /** A stream of one log's events from `start`, written by `writerOf`, in the client's own context (its request id in the logs): the shared feed alone runs as the service. */
  const open = (ctx: RequestContext, changes: ChangeLog, start: string, writerOf: (reading: EventReading) => EventWriter) =>
    new ChangeEventStream(start, feedOf(changes), changes, ctx, writerOf(new EventReading(ctx, changes, service, records, recordsRead)), stallMs, log);
  const module: Module = {
    name: 'page-change-stream',
    api: 'v1',
    async setup(ctx) {
      setupCtx = ctx;
    },
    routes: [{
      method: 'GET',
      path: '/changes',
      spec: {
        summary: 'Every change to the stored pages, as Server-Sent Events (resume with Last-Event-ID)',
        tags: ['changes'],
        parameters: [
          { name: 'since', in: 'query', schema: { type: 'string' }, description: 'An event id to resume after, or a time (ISO 8601) to start from' },
          { name: 'namespace', in: 'query', schema: { type: 'string', pattern: '^-?\\d+(,-?\\d+)*$' }, description: 'Namespace ids, comma-separated' },
          { name: 'prefix', in: 'query', schema: { type: 'string' }, description: 'Only titles starting with this (underscores for spaces)' },
          { name: 'include', in: 'query', schema: { type: 'string', enum: ['html', 'record'] }, description: "html: each edit carries its render; record: each event after which the page has a visible revision carries its Wikimedia Enterprise record (Realtime's)" },
          { name: 'fields', in: 'query', schema: { type: 'string' }, description: 'With include=record: only these fields of the record (dotted, * for any; comma-separated)' },
          { name: 'scope', in: 'query', schema: { type: 'string', enum: ['group'] }, description: "group: the changes of every wiki of this wiki's storage group (a farm's), each naming its wiki" },
          { name: 'last-event-id', in: 'header', schema: { type: 'string' } },
        ],
        responses: { 200: { description: 'text/event-stream: id, event (edit, rerender, delete, undelete, move, visibility), data (JSON)', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
      },
      handler: (req, ctx) => {
        const start = startOf(req.headers['last-event-id'] || req.query.get('since') || undefined);
        const changes = logOf(req);
        const namespace = req.query.get('namespace');
        const include = req.query.get('include');
        const fields = req.query.get('fields');
        if (fields !== null && include !== 'record') throw badRequest('fields selects fields of the record: it goes with include=record.', 'invalid-fields');
        const options: SseOptions = {
          namespaces: namespace ? new Set(namespace.split(',').map(Number)) : undefined,
          prefix: req.query.get('prefix')?.replace(/ /g, '_') ?? undefined,
          includeHtml: include === 'html',
          ...(include === 'record' ? { includeRecord: { fields: checkFields(ARTICLE_FIELDS, fields ? fields.split(',').map((f) => f.trim()) : []) } } : {}),
        };
        return {
          status: 200,
          // Never kept by a cache: each client's stream is its own.
          headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
          body: open(ctx, changes, start, (reading) => sseWriter(reading, options)),
        };
      },
    }],
  };
  return {
    module,
    realtime: (ctx, domain, start, options) => open(ctx, service.changes.of(domain), start, (reading) => realtimeWriter(reading, options)),
  };
}

import { EventEmitter } from 'node:events';
import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';
import { maxTidAt, newTid, tidTime } from '../../../util/tid.js';

/** What changed in what the service stores of a page. */
/** `record`: the page's Enterprise record changed with no revision of its own (a redirect to it, its protection). */
export type ChangeKind = 'edit' | 'rerender' | 'delete' | 'undelete' | 'move' | 'visibility' | 'record';

/** One change, as the change stream sends it. */
export interface ChangeEvent {
  /** Time-ordered (a v1 timeuuid): the stream's event id, and where a client resumes from. */
  id: string;
  kind: ChangeKind;
  title: string;
  rev?: number;
  /** The render of `rev` (edit, rerender), if made. */
  tid?: string;
  /** Where a moved page went. */
  to?: string;
  /** The wiki it happened on (in a storage group's log, which holds all its wikis'). */
  domain?: string;
}

const SCHEMA = {
  version: 1,
  attributes: { hour: 'string', id: 'timeuuid', kind: 'string', title: 'string', rev: 'varint', tid: 'string', to: 'string' },
  index: [
    { attribute: 'hour', type: 'hash' },
    { attribute: 'id', type: 'range', order: 'asc' },
  ],
};

/** A storage group's log: every wiki's events, each naming its wiki. */
const GROUP_SCHEMA = { ...SCHEMA, attributes: { ...SCHEMA.attributes, domain: 'string' } };
const GROUP_TABLE = 'group_changes';

/** Events are kept in one partition per hour: bounded on every engine, read in order hour by hour. */
const HOUR_MS = 3600_000;
const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/**
 * The change log of one wiki: every change to what the service stores of a page (a new latest
 * revision and its render, a render made anew, a deletion, an undeletion, a move, a revision's
 * visibility), recorded where the stored state changes, so each is recorded once whatever told
 * the service (its follower, the wiki's notice, a save through it, a read). Kept `keepSeconds`
 * (TTL, on every engine); read in order after an event's id by the change stream.
 */
export class ChangeLog {
  private readonly table: TableClient;

  /**
   * `group`: the log of the wiki's storage group (a farm's wiki), which records each event too.
   * `ofGroup`: this is such a log (kept under the group's home domain).
   */
  constructor(
    readonly domain: string, private readonly keepSeconds: number, private readonly recorded: EventEmitter,
    private readonly options: { group?: ChangeLog; ofGroup?: boolean } = {},
  ) {
    this.table = new TableClient(domain, options.ofGroup ? GROUP_TABLE : 'page_changes');
  }

  /** Whether this is a storage group's log (its events name their wikis). */
  get ofGroup(): boolean {
    return this.options.ofGroup === true;
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, this.options.ofGroup ? GROUP_SCHEMA : SCHEMA);
  }

  async record(ctx: RequestContext, event: Omit<ChangeEvent, 'id'>): Promise<void> {
    const id = newTid();
    await this.table.put(ctx, { attributes: { hour: hourOf(tidTime(id)), id, ...event, _ttl: this.keepSeconds } });
    // The group's log under the same id: its order is the order of every wiki's.
    await this.options.group?.recordAs(ctx, id, { ...event, domain: this.domain });
    this.recorded.emit('recorded', this.domain);
  }

  private async recordAs(ctx: RequestContext, id: string, event: Omit<ChangeEvent, 'id'>): Promise<void> {
    await this.table.put(ctx, { attributes: { hour: hourOf(tidTime(id)), id, ...event, _ttl: this.keepSeconds } });
    this.recorded.emit('recorded', this.domain);
  }

  /** The id before every event of `ms` and later: where a client asking `since` a time starts. */
  static idBefore(ms: number): string {
    return maxTidAt(ms - 1);
  }

  /** How far back events are kept (ms since the epoch). */
  oldest(): number {
    return Date.now() - this.keepSeconds * 1000;
  }

  /** Up to `limit` events after `after` (an event id), oldest first, hour by hour up to now. */
  async after(ctx: RequestContext, after: string, limit: number): Promise<ChangeEvent[]> {
    const events: ChangeEvent[] = [];
    const now = Date.now();
    let hour = Math.max(tidTime(after), this.oldest());
    for (let cursor = after; events.length < limit && hourOf(hour) <= hourOf(now); hour = (Math.floor(hour / HOUR_MS) + 1) * HOUR_MS) {
      const { items } = await this.table.query(ctx, { attributes: { hour: hourOf(hour), id: { gt: cursor } }, limit: limit - events.length });
      for (const row of items) {
        events.push({
          id: row.id as string, kind: row.kind as ChangeKind, title: row.title as string,
          ...(row.rev !== null && row.rev !== undefined ? { rev: Number(row.rev) } : {}),
          ...(row.tid ? { tid: row.tid as string } : {}),
          ...(row.to ? { to: row.to as string } : {}),
          ...(row.domain ? { domain: row.domain as string } : {}),
        });
      }
      if (events.length) cursor = events.at(-1)!.id;
    }
    return events;
  }
}

/** The change logs of every wiki, and a signal when one records (the streams of this process wake at once). */
export class ChangeLogs {
  readonly recorded = new EventEmitter().setMaxListeners(0);
  private readonly logs = new Map<string, ChangeLog>();
  private readonly groups = new Map<string, ChangeLog>();

  /** `homeOf`: the home domain of a farm's wiki's storage group (none for a wiki of its own). */
  constructor(private readonly keepSeconds: number, private readonly homeOf: (domain: string) => string | undefined = () => undefined) {}

  of(domain: string): ChangeLog {
    let log = this.logs.get(domain);
    if (!log) {
      const home = this.homeOf(domain);
      const group = home !== undefined && home !== domain ? this.ofGroup(home) : undefined;
      this.logs.set(domain, (log = new ChangeLog(domain, this.keepSeconds, this.recorded, { group })));
    }
    return log;
  }

  /** The log of the storage group whose home is `home`: every event of its wikis. */
  ofGroup(home: string): ChangeLog {
    let log = this.groups.get(home);
    if (!log) this.groups.set(home, (log = new ChangeLog(home, this.keepSeconds, this.recorded, { ofGroup: true })));
    return log;
  }
}

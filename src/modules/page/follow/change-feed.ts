import type { Logger } from 'pino';
import type { RequestContext } from '../../../router/types.js';
import { compareTids } from '../../../util/tid.js';
import { ChangeLog, type ChangeEvent, type ChangeLogs } from '../tables/change-log.js';

/** How often the log is read for changes other processes recorded, while anyone listens. */
const POLL_MS = 1000;
/** Events read at once. */
const PAGE = 500;

type Listener = (events: ChangeEvent[]) => void;

/**
 * The newest changes of one wiki, read from its change log once per process and handed to every
 * stream that has caught up: a thousand open streams cost one read a second (and one at once when
 * this process records a change), not a thousand.
 */
export class ChangeFeed {
  private readonly listeners = new Set<Listener>();
  /** The last event handed out: every stream that caught up to it is fed from here. */
  private cursor: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private readonly wake = (domain: string) => {
    if (domain === this.log.domain) void this.read();
  };

  constructor(private readonly log: ChangeLog, private readonly logs: ChangeLogs, private readonly ctx: RequestContext, private readonly logger: Logger) {}

  /** Where the feed is: a stream that has read up to here is fed from now on. */
  position(): string {
    this.cursor ??= ChangeLog.idBefore(Date.now());
    return this.cursor;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) {
      this.position();
      this.logs.recorded.on('recorded', this.wake);
      this.timer = setInterval(() => void this.read(), POLL_MS);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        clearInterval(this.timer);
        this.logs.recorded.off('recorded', this.wake);
        // Nobody listens: the next listener starts from its own position, not a stale one.
        this.cursor = undefined;
      }
    };
  }

  /** Reads what was recorded after the cursor and hands it out; a read asked for meanwhile runs after. */
  private read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        for (;;) {
          if (!this.cursor || this.listeners.size === 0) return;
          const events = await this.log.after(this.ctx, this.cursor, PAGE);
          if (events.length === 0) break;
          this.cursor = events.at(-1)!.id;
          for (const listener of this.listeners) listener(events);
          if (events.length < PAGE) break;
        }
      } while (this.again);
    })()
      .catch((err) => this.logger.warn({ err, domain: this.log.domain }, 'reading the change log failed; trying again'))
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}

/** Whether event id `a` comes after `b`. */
export const isAfter = (a: string, b: string) => compareTids(a, b) > 0;

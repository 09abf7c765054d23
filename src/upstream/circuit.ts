import { HttpError } from '../util/errors.js';

export interface CircuitOptions {
  /** Consecutive stalls (timeouts) that open the circuit. */
  threshold: number;
  /** How often an open circuit asks the wiki whether it answers again. */
  probeIntervalMs: number;
  /** A cheap request that does not pass through the circuit; resolves if the wiki answered. */
  probe: () => Promise<void>;
  /** Told when the circuit opens (true) or closes (false). */
  onChange?: (open: boolean) => void;
}

/**
 * A wiki that does not answer in time, or cannot be reached after the retries (a refused
 * connection is refused at once, but its retries cost each caller half a second): what opens
 * the circuit.
 */
const STALLS = new Set(['urn:problem:upstream-timeout', 'urn:problem:upstream-unavailable']);
const isStall = (e: unknown) => e instanceof HttpError && STALLS.has(e.problemType);

/**
 * A circuit per wiki: after `threshold` requests in a row stalled (the wiki black-holed, hung, down),
 * requests fail at once with 503 and Retry-After instead of each waiting out its timeout, so
 * callers fall back to what is stored without delay. A probe in the background, never a client's
 * request, finds out when the wiki answers again and closes it. A wiki that answers, even with
 * an error, is reachable: only stalls count.
 */
export class Circuit {
  private stalls = 0;
  private opened = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CircuitOptions) {}

  get isOpen(): boolean {
    return this.opened;
  }

  /**
   * `counts: false`: a request nobody waits for (a page's facts asked in the background) is sent
   * only while the circuit is closed, and its stall does not open it: a brief outage that stalled
   * background work too would otherwise fail the next reader's request at once.
   */
  async run<T>(request: () => Promise<T>, { counts = true }: { counts?: boolean } = {}): Promise<T> {
    if (this.opened) throw this.failFast();
    if (!counts) return request();
    try {
      const answer = await request();
      this.stalls = 0;
      return answer;
    } catch (e) {
      if (isStall(e)) {
        if (++this.stalls >= this.options.threshold) this.open();
      } else if (e instanceof HttpError) {
        this.stalls = 0;
      }
      throw e;
    }
  }

  private failFast(): HttpError {
    const seconds = Math.max(1, Math.ceil(this.options.probeIntervalMs / 1000));
    return new HttpError(503, 'upstream-unavailable', 'The wiki has not been answering; asked again in the background.', { headers: { 'retry-after': String(seconds) } });
  }

  private open(): void {
    if (this.opened) return;
    this.opened = true;
    this.options.onChange?.(true);
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    this.timer = setTimeout(() => {
      this.options.probe().then(
        () => this.close(),
        () => this.scheduleProbe(),
      );
    }, this.options.probeIntervalMs);
    // A circuit never keeps a process alive on its own.
    this.timer.unref();
  }

  private close(): void {
    this.opened = false;
    this.stalls = 0;
    this.options.onChange?.(false);
  }

  /** Stops probing (the process is shutting down). */
  stop(): void {
    clearTimeout(this.timer);
  }
}

import { HttpError } from '../util/errors.js';

/** How soon a refused client is told to try again: streams end when their clients go. */
const RETRY_AFTER_S = '30';

/**
 * Streamed answers (change streams, Enterprise's Realtime, downloads) each hold a connection for
 * as long as their client reads, unlike every other answer: without a bound one client could hold
 * every connection `max_connections` allows, and each request after it would be shed. A client
 * (see `ClientAddress.clientOf`) holds at most `perClient` at once (429), and all clients together
 * at most `total` (503), which leaves room for every other request.
 */
export class StreamGate {
  private readonly held = new Map<string, number>();
  private open = 0;

  constructor(private readonly perClient: number, private readonly total: number) {}

  /** Streams open now. */
  get size(): number {
    return this.open;
  }

  /**
   * A stream for `client`: the function that gives its place back (once, however often called),
   * or the error to answer instead.
   */
  take(client: string): (() => void) | HttpError {
    const mine = this.held.get(client) ?? 0;
    if (mine >= this.perClient) {
      return new HttpError(429, 'too-many-streams', `At most ${this.perClient} streams at once from one client; close one first (change streams of a farm's wikis: one with scope=group).`, { headers: { 'retry-after': RETRY_AFTER_S } });
    }
    if (this.open >= this.total) {
      return new HttpError(503, 'streams-full', `The service holds ${this.total} streams already; try again later.`, { headers: { 'retry-after': RETRY_AFTER_S } });
    }
    this.held.set(client, mine + 1);
    this.open++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.open--;
      const left = this.held.get(client)! - 1;
      if (left === 0) this.held.delete(client);
      else this.held.set(client, left);
    };
  }
}

import { BoundedMap } from '../../../util/bounded-map.js';

/** One of the wiki's rate limits: at most `hits` in `seconds`. */
export interface RateLimit {
  hits: number;
  seconds: number;
}

/**
 * The wiki's rate limits of one action (`edit`, `stashbasehtml`) that apply to a caller, by
 * category, as `meta=userinfo&uiprop=ratelimits` gives them (`anon`, `user`, `newbie`, `ip`,
 * `subnet`, a group's name); empty for a caller the wiki exempts (`noratelimit`).
 */
export type ActionLimits = Record<string, RateLimit>;

/** Categories counted by something other than the user account. */
const NOT_PER_USER = new Set(['anon', 'ip', 'subnet', 'ip-all', 'subnet-all', 'user-global']);

/** An IPv4 client's /24, as MediaWiki's subnet limit counts it; an IPv6 client is already its /64. */
function subnetOf(client: string): string {
  const v4 = /^(\d+\.\d+\.\d+)\.\d+$/.exec(client);
  return v4 ? `${v4[1]}.0/24` : client;
}

/**
 * What a caller's writes are counted under, with the limit of each, as MediaWiki's RateLimiter
 * keys them: all anonymous callers together (`anon`), the client's address (`ip`) and /24
 * (`subnet`) where the wiki names them (for anonymous and new users), and the account: its
 * `newbie` limit, else the most generous of `user` and its groups'.
 */
export function countedUnder(user: string | null, client: string | undefined, limits: ActionLimits): [string, RateLimit][] {
  const counted: [string, RateLimit][] = [];
  if (user === null && limits.anon) counted.push(['anon', limits.anon]);
  if (client && limits.ip) counted.push([`ip:${client}`, limits.ip]);
  if (client && limits.subnet) counted.push([`subnet:${subnetOf(client)}`, limits.subnet]);
  if (user !== null) {
    let own = limits.newbie;
    if (!own) {
      for (const [category, limit] of Object.entries(limits)) {
        if (!NOT_PER_USER.has(category) && (!own || limit.hits / limit.seconds > own.hits / own.seconds)) own = limit;
      }
    }
    if (own) counted.push([`user:${user}`, own]);
  }
  return counted;
}

interface Window {
  /** When the current window began (ms), a multiple of its length. */
  start: number;
  current: number;
  previous: number;
}

/**
 * Actions counted against rate limits, per wiki (or any scope) and per what `countedUnder` names,
 * in a sliding window (the last whole window weighed by how much of it still overlaps): an action
 * that would take any count past its limit is refused, and counts nowhere. Kept per process, in
 * bounded memory (the least recently counted forgotten first).
 */
export class RateLimits {
  private readonly windows = new BoundedMap<string, Window>(100_000);

  /** Counts one action under `counted` in `scope`; refused, the whole seconds until one would pass instead. */
  take(scope: string, counted: [string, RateLimit][], now = Date.now()): number | undefined {
    const seen = counted.map(([key, limit]) => {
      const length = limit.seconds * 1000;
      const at = `${scope}\u0000${limit.seconds}\u0000${key}`;
      const window = this.advanced(this.windows.get(at), length, now);
      const into = (now - window.start) / length;
      const used = window.previous * (1 - into) + window.current;
      return { at, window, limit, length, into, used };
    });
    const over = seen.filter(({ used, limit }) => used + 1 > limit.hits);
    if (over.length > 0) {
      const wait = Math.max(...over.map(({ window, limit, length, into }) => {
        // Until the previous window's weight has fallen enough, or, when the current one is full, until it ends.
        const fromPrevious = window.previous > 0 ? (1 - (limit.hits - 1 - window.current) / window.previous - into) * length : 0;
        return window.current + 1 > limit.hits ? (1 - into) * length + (1 - (limit.hits - 1) / window.current) * length : fromPrevious;
      }));
      return Math.max(1, Math.ceil(wait / 1000));
    }
    for (const { at, window } of seen) {
      window.current++;
      this.windows.set(at, window);
    }
    return undefined;
  }

  private advanced(window: Window | undefined, length: number, now: number): Window {
    const start = now - (now % length);
    if (!window || window.start + length < start) return { start, current: 0, previous: 0 };
    if (window.start < start) return { start, current: 0, previous: window.current };
    return window;
  }
}

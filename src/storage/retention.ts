import type { RetentionPolicy } from './types.js';

/**
 * Which of a partition's rows (newest first, with their render time) a policy lets go; `written`
 * is the index of the row just written. Rows let go are not deleted at once: they get a grace
 * TTL, so readers of a just-superseded revision are not cut off.
 */
export function rowsToExpire(policy: RetentionPolicy, times: number[], written: number): number[] {
  if (policy.type === 'latest') return times.map((_, i) => i).slice(policy.count);
  if (policy.type === 'latest_hash') return times.map((_, i) => i).filter((i) => i !== written);
  if (policy.type !== 'interval') return [];
  return intervalExpiries(policy.interval * 1000, policy.count, times, written);
}

/**
 * RESTBase's `interval` policy, applied when a row is written: below it (older rows, newest
 * first), the `count - 1` next ones are kept; then the rows within one interval before the
 * written row's time are let go, but only once an older row lies beyond that interval: the
 * oldest row of a run is kept (the first render ever is never let go), so a page keeps at most
 * `count` renders in any interval but the oldest.
 */
function intervalExpiries(intervalMs: number, count: number, times: number[], written: number): number[] {
  if (written < 0) return [];
  const since = times[written]! - intervalMs;
  const candidates: number[] = [];
  for (let i = written + 1 + Math.max(0, count - 1); i < times.length; i++) {
    if (times[i]! > since) candidates.push(i);
    else return candidates;
  }
  return [];
}

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
  const intervalMs = policy.interval * 1000;
  const keptBuckets = new Set<number>();
  const expire: number[] = [];
  times.forEach((t, i) => {
    const bucket = Math.floor(t / intervalMs);
    if (i < policy.count || !keptBuckets.has(bucket)) keptBuckets.add(bucket);
    else expire.push(i);
  });
  return expire;
}

import type { RetentionPolicy } from './types.js';

/** A live row of a partition as retention sees it: which version group it is of, and its tid's time. */
export interface RetainedRow {
  /**
   * The row's key without its timeuuid (the hash key is the partition's): the versions of one
   * entity share it. Any text that is equal for equal keys.
   */
  group: string;
  /** Milliseconds of its timeuuid (0 in a table keyed by none). */
  time: number;
}

/**
 * The order a policy looks at a partition's rows in: `latest_hash` in the table's own order (each
 * range key in its declared direction), every other policy newest first (every range key descending).
 */
export const retentionOrder = (policy: RetentionPolicy): 'declared' | 'newest-first' => (policy.type === 'latest_hash' ? 'declared' : 'newest-first');

/**
 * Which of a partition's live rows (in `retentionOrder`) a policy lets go, as RESTBase defined
 * them. Rows let go are not deleted at once: they get the grace TTL, so readers of a just
 * superseded version are not cut off.
 * - `latest`: the newest `count` rows stay.
 * - `latest_hash`: the partition's first row in the table's own order stays (the first range key
 *   in its declared order, then the newest tid), every other row of the hash key goes.
 * - `interval`: each version group's versions fall into windows of `interval` seconds aligned on
 *   multiples of it since the Unix epoch (UTC days for 86400), by their tid's time; in each window
 *   the newest `count` stay. Windows are independent.
 */
export function rowsToExpire(policy: RetentionPolicy, rows: readonly RetainedRow[]): number[] {
  if (policy.type === 'latest') return rows.map((_, i) => i).slice(policy.count);
  if (policy.type === 'latest_hash') return rows.map((_, i) => i).slice(1);
  if (policy.type !== 'interval') return [];
  const windowMs = policy.interval * 1000;
  const kept = new Map<string, number>();
  const expired: number[] = [];
  // Newest first: the first `count` seen of each group and window are its newest.
  rows.forEach((row, i) => {
    const window = `${row.group}\u0000${Math.floor(row.time / windowMs)}`;
    const seen = kept.get(window) ?? 0;
    if (seen < policy.count) kept.set(window, seen + 1);
    else expired.push(i);
  });
  return expired;
}

import type { Metrics } from '../../../util/metrics.js';
import type { RequestContext } from '../../../router/types.js';
import { dayOf, KEPT_DAYS } from '../tables/branch-expiry.js';
import type { Branches } from './branches.js';

/**
 * The clean-up of expired branches (the design's "maintenance job with notifications"): their
 * rows expire by TTL on every engine; this removes what is left of them (their list entries, and
 * the static columns engines without native TTL keep), counts them, and counts those that expire
 * within a week. It reads only the expiry index's partitions of the days since its last run.
 */
export class BranchExpirySweep {
  /** Per domain: the first day not swept to its end. */
  private readonly sweptTo = new Map<string, number>();

  constructor(private readonly branches: Branches, private readonly metrics: Metrics) {}

  async run(ctx: RequestContext, domain: string): Promise<{ expired: number; expiring: number }> {
    const t = this.branches.tablesOf(domain);
    const expiresAt = (updated: string) => this.branches.expiresAt(updated);
    const now = Date.now();
    const today = dayOf(now);
    let expired = 0;
    let day = this.sweptTo.get(domain) ?? today - KEPT_DAYS;
    for (; day <= today; day++) {
      let left = 0;
      for await (const entry of t.expiry.day(ctx, day)) {
        if (entry.expires > now) {
          left++;
          continue;
        }
        const head = await t.branches.head(ctx, entry.branch);
        if (head && expiresAt(head.updated) > now) {
          // Updated since: within the day it stays; past it, its entry sits in a later day.
          if (dayOf(expiresAt(head.updated)) === day) left++;
          else await t.expiry.remove(ctx, day, entry.branch);
          continue;
        }
        await t.lists.forget(ctx, entry.lists, entry.branch);
        await t.branches.remove(ctx, entry.branch);
        await t.expiry.remove(ctx, day, entry.branch);
        expired++;
      }
      if (left > 0 || day === today) break;
      this.sweptTo.set(domain, day + 1);
    }
    let expiring = 0;
    const week = now + 7 * 86_400_000;
    for (let d = today; d <= dayOf(week); d++) {
      for await (const entry of t.expiry.day(ctx, d)) if (entry.expires > now && entry.expires <= week) expiring++;
    }
    if (expired) this.metrics.branchesExpired.inc({ domain: this.metrics.wikiLabel(domain) }, expired);
    this.metrics.branchesExpiring.set({ domain }, expiring);
    return { expired, expiring };
  }
}

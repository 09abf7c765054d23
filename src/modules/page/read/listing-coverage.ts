import type { RequestContext } from '../../../router/types.js';
import { completedContentRun } from '../tables/backfill-runs.js';
import { FollowerState } from '../tables/follower-state.js';

/** How long the coverage read from storage is kept in memory. */
const CACHE_MS = 10_000;

/**
 * Whether the stored page listing holds every page of the wiki's content namespaces, and since
 * when: once a backfill of them finished that began while the change follower was already
 * following (pages there before it are the backfill's; pages created, deleted or moved after it
 * began are the follower's). Before that the listing holds only the pages stored so far.
 */
export class ListingCoverage {
  private cached = new Map<string, { at: number; since: number | undefined }>();

  /** Wiki time from which listings are complete, if they are. */
  async completeSince(ctx: RequestContext, domain: string): Promise<number | undefined> {
    const hit = this.cached.get(domain);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.since;
    const [began, cursor] = await Promise.all([
      completedContentRun(ctx, domain).catch(() => undefined),
      new FollowerState(domain).cursor(ctx).catch(() => undefined),
    ]);
    const following = cursor?.since;
    const since = began !== undefined && following !== undefined && Date.parse(following) <= began ? began : undefined;
    this.cached.set(domain, { at: Date.now(), since });
    return since;
  }
}

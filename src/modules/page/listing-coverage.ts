import { TableClient } from '../../internal/table-client.js';
import type { RequestContext } from '../../router/types.js';

/** How long the coverage read from storage is kept in memory. */
const CACHE_MS = 10_000;

/** The backfill's record of a finished run over every content page, and when it began. */
export const COMPLETE_RUN = 'complete:content';

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
    const [backfill, cursor] = await Promise.all([
      new TableClient(domain, 'page_backfill').query(ctx, { attributes: { run: COMPLETE_RUN } }).then((r) => r.items[0], () => undefined),
      new TableClient(domain, 'page_follower').query(ctx, { attributes: { key: 'cursor' } }).then((r) => r.items[0], () => undefined),
    ]);
    const began = backfill?.started ? Date.parse(backfill.started as string) : undefined;
    const following = (cursor?.cursor as { since?: string } | null | undefined)?.since;
    const since = began !== undefined && following !== undefined && Date.parse(following) <= began ? began : undefined;
    this.cached.set(domain, { at: Date.now(), since });
    return since;
  }
}

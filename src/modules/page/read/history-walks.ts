import { BoundedMap } from '../../../util/bounded-map.js';

/** Two reads of one page's revisions due for their check this close together are a walk through its history. */
const WALK_WINDOW_MS = 30_000;
/** Revisions checked ahead of a walk: with the one read, a full query of the wiki's (50 ids without `apihighlimits`). */
export const CHECK_AHEAD = 49;
/** Checks ahead under way per wiki at most: they share the wiki's queue with readers' own checks. */
const MOST_AHEAD = 200;

/**
 * Readers walking a page's history one revision at a time (a bot, a researcher, a diff tool),
 * seen from the reads that find a revision due for its check with the wiki. Each such read waits
 * for the wiki's answer; read one after the other, they cannot share a query as reads arriving
 * together do (upstream/revision-batches.ts). The second due read of a page in a short while says
 * which way the walk goes, and the revisions stored next in that direction are checked with it.
 */
export class HistoryWalks {
  private readonly lastDue = new BoundedMap<string, { rev: number; at: number }>(10_000);
  /** Checks ahead under way, per wiki: how many, and of which revisions (a walk's next read does not start another). */
  private readonly ahead = new Map<string, number>();
  private readonly revisions = new Set<string>();

  /** A read found `rev` due for its check: whether it continues a walk, and towards older or newer revisions. */
  walked(domain: string, title: string, rev: number, now = Date.now()): 'older' | 'newer' | undefined {
    const key = `${domain}\u0000${title}`;
    const last = this.lastDue.get(key);
    this.lastDue.set(key, { rev, at: now });
    if (!last || last.rev === rev || now - last.at > WALK_WINDOW_MS) return undefined;
    return rev < last.rev ? 'older' : 'newer';
  }

  /**
   * Takes a place for a check ahead of the revision, if the wiki has one left and the revision is
   * not being checked ahead already (give it back with `done`).
   */
  begin(domain: string, title: string, rev: number): boolean {
    const under = this.ahead.get(domain) ?? 0;
    const key = `${domain}\u0000${title}\u0000${rev}`;
    if (under >= MOST_AHEAD || this.revisions.has(key)) return false;
    this.revisions.add(key);
    this.ahead.set(domain, under + 1);
    return true;
  }

  done(domain: string, title: string, rev: number): void {
    this.revisions.delete(`${domain}\u0000${title}\u0000${rev}`);
    const under = (this.ahead.get(domain) ?? 1) - 1;
    if (under <= 0) this.ahead.delete(domain);
    else this.ahead.set(domain, under);
  }
}

import type { ActionApi } from '../../../upstream/action-api.js';

/**
 * A title to write, with the page's latest revision when the wiki listed it (the listing is made
 * after the snapshot's moment): what lets a page unchanged since be read from storage alone.
 */
export interface Listed {
  title: string;
  latest?: { rev: number; timestamp: string; hidden: boolean };
  /** Its title at the snapshot's moment, where it was moved since: what it is written under. */
  titleThen?: string;
  /** A title a page moved away from since the moment: that page's line stands for it. */
  movedAway?: boolean;
  /** Deleted at the moment (and restored since): when (see deletions-then.ts). */
  deletedThen?: string;
  /** Deleted since the moment, listed neither by the wiki nor by storage. */
  deletedSince?: boolean;
}

/**
 * Each page's title at `at` where it was moved since, by its title now (moves logged after `at`,
 * followed in order: A to B then B to C gives C: A), from one listing of the wiki's move log.
 */
export async function titlesThen(api: Pick<ActionApi, 'movesAfter'>, at: number): Promise<Map<string, string>> {
  const then = new Map<string, string>();
  let cont: Record<string, string> | undefined;
  do {
    const page = await api.movesAfter(new Date(at).toISOString(), cont);
    for (const { from, to } of page.moves) {
      const [before, after] = [from.replace(/ /g, '_'), to.replace(/ /g, '_')];
      const original = then.get(before) ?? before;
      then.delete(before);
      then.set(after, original);
    }
    cont = page.cont;
  } while (cont);
  return then;
}

/** The listing's entries with the titles moves after `at` changed: each moved page under its title then. */
export function withTitlesThen(entries: Listed[], then: Map<string, string>): Listed[] {
  const left = new Set(then.values());
  return entries.map((entry) => {
    const titleThen = then.get(entry.title);
    if (titleThen !== undefined && titleThen !== entry.title) return { ...entry, titleThen };
    return left.has(entry.title) && !then.has(entry.title) ? { ...entry, movedAway: true } : entry;
  });
}

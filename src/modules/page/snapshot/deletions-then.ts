import type { ActionApi } from '../../../upstream/action-api.js';
import type { Listed } from './titles-then.js';

/**
 * What the wiki's deletion log after a snapshot's moment says of one namespace's pages: the wiki's
 * page listing, made later, shows a page restored since as if it had never been deleted, and does
 * not show a page deleted since at all.
 */
export interface DeletionsThen {
  /** Pages deleted at the moment and restored since, with when they were deleted. */
  deletedThen: Map<string, string>;
  /** Pages deleted since the moment (and not restored since). */
  deletedSince: Set<string>;
}

/** Reads the deletion log after `at` once, and asks the state at `at` of each page restored since. */
export async function deletionsThen(api: Pick<ActionApi, 'deletionsAfter' | 'deletionStateAt'>, at: number, ns: number): Promise<DeletionsThen> {
  const lastAction = new Map<string, 'delete' | 'restore'>();
  const restored = new Set<string>();
  let cont: Record<string, string> | undefined;
  do {
    const page = await api.deletionsAfter(new Date(at).toISOString(), cont);
    for (const event of page.events) {
      if (event.ns !== ns) continue;
      lastAction.set(event.title, event.action);
      if (event.action === 'restore') restored.add(event.title);
    }
    cont = page.cont;
  } while (cont);
  const deletedThen = new Map<string, string>();
  for (const title of restored) {
    const then = await api.deletionStateAt(title, new Date(at).toISOString());
    if (then?.action === 'delete') deletedThen.set(title.replace(/ /g, '_'), then.timestamp);
  }
  const deletedSince = new Set([...lastAction].filter(([, action]) => action === 'delete').map(([title]) => title.replace(/ /g, '_')));
  return { deletedThen, deletedSince };
}

/**
 * The listing's entries with what the deletion log says: a page deleted at the moment is marked
 * so (its revisions from before the deletion were not there then), and a page deleted since that
 * neither the wiki nor storage lists is added, so that the snapshot names it among what it lacks.
 */
export function withDeletions(entries: Listed[], deletions: DeletionsThen, inScope: (title: string) => boolean): Listed[] {
  const listed = new Set(entries.map((e) => e.title));
  const marked = entries.map((entry) => {
    const deletedThen = deletions.deletedThen.get(entry.title);
    return deletedThen === undefined ? entry : { ...entry, deletedThen };
  });
  const unlisted = [...deletions.deletedSince].filter((title) => !listed.has(title) && inScope(title));
  return [...marked, ...unlisted.map((title) => ({ title, deletedSince: true }))];
}

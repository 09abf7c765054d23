import type { RecentChange } from '../../../upstream/action-api.js';

/** Namespaces whose pages are transcluded by others: Template and Module (Scribunto). */
const DEPENDENCY_NAMESPACES = new Set([10, 828]);

/** What one batch of the wiki's changes asks of the service, each thing once. */
export interface ChangePlan {
  /** Pages whose state (latest revision, deleted, moved) is asked of the wiki again, in change order. */
  refresh: string[];
  /** Stored revisions whose visibility changed (revision deletion, suppression). */
  recheck: { title: string; revid: number }[];
  /** Templates and modules whose transcluding pages are rendered again. */
  dependencies: string[];
  /** Each title's newest change time, for the lag it was followed with. */
  changedAt: Map<string, number>;
  /** Changes by kind (edit, new, delete, restore, move, ...), for metrics. */
  kinds: Map<string, number>;
  /** Pages moved, in change order (what goes with a page, its branches, follows these). */
  moves: PageMove[];
  /** Pages whose protection changed (their records change with no revision). */
  protections: string[];
}

export interface PageMove {
  from: string;
  to: string;
}

/** Log events that change a page's content, existence or place; others (blocks, user rights) do not. */
const PAGE_LOGS = new Set(['delete', 'move', 'protect', 'import', 'merge', 'upload', 'suppress', 'pagelang', 'contentmodel']);

const kindOf = (c: RecentChange) => (c.type === 'log' ? `${c.logtype}/${c.logaction}` : c.type);

/**
 * Turns changes (oldest first, titles already normalized) into what to do. Every touched page is
 * refreshed from the wiki's current state rather than replayed event by event: a batch that holds
 * an edit and then a deletion of one page ends with the page deleted either way, and replaying a
 * batch after a crash does no harm.
 */
export function planChanges(changes: RecentChange[]): ChangePlan {
  const refresh = new Set<string>();
  const recheck = new Map<string, { title: string; revid: number }>();
  const dependencies = new Set<string>();
  const changedAt = new Map<string, number>();
  const kinds = new Map<string, number>();
  const moves: PageMove[] = [];
  const protections = new Set<string>();
  const touch = (title: string, ns: number, at: number) => {
    // Moved to the end: pages are refreshed in the order of their last change.
    refresh.delete(title);
    refresh.add(title);
    changedAt.set(title, Math.max(changedAt.get(title) ?? 0, at));
    if (DEPENDENCY_NAMESPACES.has(ns)) dependencies.add(title);
  };
  for (const change of changes) {
    if (!change.title) continue; // a log entry whose target is hidden, or a title nothing is kept for
    const at = Date.parse(change.timestamp);
    const kind = kindOf(change);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    if (change.type === 'edit' || change.type === 'new') {
      touch(change.title, change.ns, at);
      continue;
    }
    if (change.type !== 'log' || !PAGE_LOGS.has(change.logtype ?? '')) continue;
    const params = change.logparams ?? {};
    if ((change.logtype === 'delete' || change.logtype === 'suppress') && (change.logaction === 'revision' || params.type === 'revision')) {
      for (const id of (params.ids as unknown[] | undefined) ?? []) {
        const revid = Number(id);
        if (Number.isInteger(revid) && revid > 0) recheck.set(`${change.title}\u0000${revid}`, { title: change.title, revid });
      }
      continue;
    }
    if (change.logaction === 'event') continue; // log entries hidden: no page changed
    touch(change.title, change.ns, at);
    // A move or merge changes a second page too: where the page went, or what it was merged into.
    const other = (params.target_title ?? params.dest_title) as string | undefined;
    if (typeof other === 'string' && other) touch(other, Number(params.target_ns ?? params.dest_ns ?? change.ns), at);
    if (change.logtype === 'move' && typeof params.target_title === 'string' && params.target_title) moves.push({ from: change.title, to: params.target_title });
    if (change.logtype === 'protect') protections.add(change.title);
  }
  return { refresh: [...refresh], recheck: [...recheck.values()], dependencies: [...dependencies], changedAt, kinds, moves, protections: [...protections] };
}

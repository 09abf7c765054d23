import { titleSegment } from '../model/title-url.js';

/** A step of a transaction: its name in the result, its method, and its URI. */
export interface SaveStep {
  name: string;
  method: 'PUT' | 'DELETE';
  uri: string;
}

/** A step's route under `/{domain}/sys`, declared once: the serving module routes its `path`, the builder fills it in. */
export interface StepRoute {
  method: 'PUT' | 'DELETE';
  path: string;
}

/**
 * The steps of a save's transaction (run by the transactions module), served by save-records.ts:
 * the primary records the revision as the page's latest (over the one the save started from),
 * then the page's save lock is freed, the revision's render and exact metadata are stored (its
 * answer names the render's tid), and the caches in front purged.
 */
export const SAVE_STEPS = {
  record: { method: 'PUT', path: '/page_saves/{title}/{rev}' },
  release: { method: 'DELETE', path: '/page_saves/{title}/lock/{lock}' },
  render: { method: 'PUT', path: '/page_renders/{title}/{rev}' },
  purge: { method: 'PUT', path: '/page_purges/{title}' },
} as const satisfies Record<string, StepRoute>;

/** A step named `name` on `route`, its parameters filled in (a title as a path segment, the rest encoded). */
export function step(domain: string, name: string, route: StepRoute, params: Record<string, string | number>): SaveStep {
  const path = route.path.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`step ${name}: no value for {${key}}`);
    return key === 'title' ? titleSegment(String(value)) : encodeURIComponent(String(value));
  });
  return { name, method: route.method, uri: `/${domain}/sys${path}` };
}

export interface SaveRecord {
  domain: string;
  title: string;
  rev: number;
  /** The latest revision the save started from (null: it created the page). */
  from: number | null;
  row: Record<string, unknown>;
  lock: string;
  purge: boolean;
  /** Steps of other modules' records of the save (a branch marked merged), before the purge. */
  more?: SaveStep[];
}

export function saveTransaction({ domain, title, rev, from, row, lock, purge, more = [] }: SaveRecord) {
  const then: SaveStep[] = [
    step(domain, 'release', SAVE_STEPS.release, { title, lock }),
    step(domain, 'render', SAVE_STEPS.render, { title, rev }),
    ...more,
    // Last: caches forget the old answers once the new ones are stored.
    ...(purge ? [step(domain, 'purge', SAVE_STEPS.purge, { title })] : []),
  ];
  const { method, uri } = step(domain, 'record', SAVE_STEPS.record, { title, rev });
  return { method, uri, body: { from, row }, then };
}

/** The tid of the render the save's `render` step stored: the step's answer names it. */
export function renderedTid(result: unknown): string | null {
  const steps = (result as { then?: { name?: string; body?: { tid?: unknown } }[] } | undefined)?.then ?? [];
  const tid = steps.find((s) => s.name === 'render')?.body?.tid;
  return typeof tid === 'string' ? tid : null;
}

import { titleSegment } from '../model/title-url.js';

/**
 * A save's transaction (run by the transactions module, whose steps are the routes of
 * save-records.ts), with each step named so its result is read by name: the primary records the
 * revision as the page's latest (over the one the save started from), then the page's save lock
 * is freed, the revision's render and exact metadata are stored, and the caches in front purged.
 */
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

export interface SaveStep {
  name: string;
  method: 'PUT' | 'DELETE';
  uri: string;
}

/** Where the steps are served (save-records.ts): one place that spells their URIs. */
const saveStepUris = (domain: string, title: string) => {
  const page = titleSegment(title);
  return {
    record: (rev: number) => `/${domain}/sys/page_saves/${page}/${rev}`,
    release: (lock: string) => `/${domain}/sys/page_saves/${page}/lock/${lock}`,
    render: (rev: number) => `/${domain}/sys/page_renders/${page}/${rev}`,
    purge: () => `/${domain}/sys/page_purges/${page}`,
  };
};

export function saveTransaction({ domain, title, rev, from, row, lock, purge, more = [] }: SaveRecord) {
  const uris = saveStepUris(domain, title);
  const then: SaveStep[] = [
    { name: 'release', method: 'DELETE', uri: uris.release(lock) },
    { name: 'render', method: 'PUT', uri: uris.render(rev) },
    ...more,
    // Last: caches forget the old answers once the new ones are stored.
    ...(purge ? [{ name: 'purge', method: 'PUT' as const, uri: uris.purge() }] : []),
  ];
  return { method: 'PUT', uri: uris.record(rev), body: { from, row }, then };
}

/** The tid of the render the save's `render` step stored, from its ETag `"{rev}/{tid}"`. */
export function renderedTid(result: unknown): string | null {
  const steps = (result as { then?: { name?: string; headers?: Record<string, string> }[] } | undefined)?.then ?? [];
  const etag = steps.find((s) => s.name === 'render')?.headers?.etag;
  return /^"\d+\/([0-9a-f-]+)"$/.exec(etag ?? '')?.[1] ?? null;
}

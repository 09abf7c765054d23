import type { ActionApi } from './action-api.js';

/** A page's Enterprise fields that the wiki knows and its render does not show: asked of the wiki in batches. */
export interface PageFacts {
  /** The revision they were asked for. */
  rev: number;
  /** The page's latest revision when they were asked: the lists are that revision's. */
  latest: number;
  /** When they were asked (ISO 8601). */
  asked: string;
  /** The wiki changed the page or what points at it since: asked anew by the next record that may ask. */
  stale?: boolean;
  categories: { name: string; hidden: boolean }[];
  templates: string[];
  /** Pages redirecting here. */
  redirects: string[];
  /** Where this page redirects to, if it is a redirect (its target's record lists it). */
  redirectTo?: string;
  protection: { type: string; level: string; expiry: string }[];
  /** The short description (Wikibase client's page prop), where the wiki has one. */
  description?: string;
  /** The Wikidata item, where the wiki is a Wikibase client. */
  wikidataItem?: string;
  /** The page image PageImages chose (free first), with its file's URL and size. */
  image?: { name: string; url: string; width: number; height: number };
  /** The revision's editor as the wiki lists users (absent for anonymous or hidden editors). */
  editor?: EditorFacts;
  /** The parent revision's time and length in characters. */
  previous?: { timestamp: string; characters: number };
  /** The page's first revision's time ('' when asked and not given; absent when not asked yet). */
  created?: string;
}

export interface EditorFacts {
  editCount: number;
  groups: string[];
  rights: string[];
  registration?: string;
}

/** What the facts are asked for: a page's latest revision, its editor and parent. */
export interface FactsRequest {
  title: string;
  rev: number;
  parent?: number;
  /** The editor's name, if registered and visible. */
  user?: string;
  /** The creation time already known (it never changes): not asked again. */
  created?: string;
  /** The revision's time (the page's creation, if it has no parent). */
  timestamp?: string;
}

/** Titles, users and revisions per request: the Action API's limit for clients without apihighlimits. */
export const FACTS_BATCH = 50;

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * The facts of up to 50 pages in one request whatever their number (the pages with their lists,
 * protection, page props and page image, and their editors: `action=query` takes a `list` beside
 * its `prop`s), and one more for the parents' lengths (revisions by id cannot share a request with
 * pages by title). The creation time is asked only with `askCreated` (the Action API gives a
 * page's first revision one page at a time: asked once in a page's life, where a reader needs it);
 * a page whose revision has no parent was created by it. Keyed by the title asked for. A page
 * missing now gets no entry.
 */
export async function askFacts(api: ActionApi, requests: FactsRequest[], options: { askCreated: boolean; background?: boolean }): Promise<Map<string, PageFacts>> {
  const asking = { endpoint: FACTS_ENDPOINT, background: options.background ?? false };
  const asked = new Date().toISOString();
  const byTitle = new Map(requests.map((r) => [r.title.replace(/_/g, ' '), r]));
  const users = [...new Set(requests.map((r) => r.user).filter((u): u is string => !!u))];
  const { pages, normalized, users: listed } = await api.queryPages({
    action: 'query', prop: 'categories|templates|redirects|info|pageprops|pageimages', titles: [...byTitle.keys()].join('|'),
    clprop: 'hidden', cllimit: 'max', tllimit: 'max', rdlimit: 'max', rdprop: 'title', inprop: 'protection',
    ppprop: 'wikibase-shortdesc|wikibase_item', piprop: 'original|name',
    ...(users.length ? { list: 'users', ususers: users.join('|'), usprop: 'editcount|groups|registration|rights' } : {}),
  }, asking);
  const from = new Map(normalized.map((n) => [n.to, n.from]));
  const found = new Map<string, { request: FactsRequest; page: Record<string, any> }>();
  for (const page of pages) {
    if (page.missing || page.invalid) continue;
    const title = str(page.title);
    const request = byTitle.get(from.get(title) ?? title) ?? byTitle.get(title);
    if (request) found.set(request.title, { request, page });
  }
  const editors = editorsOf(listed);
  const parents = [...new Set([...found.values()].map(({ request }) => request.parent).filter((p): p is number => !!p))];
  const [previous, created] = await Promise.all([
    parentsOf(api, parents, options.background ?? false),
    Promise.all([...found.values()].map(async ({ request }) => [request.title, request.created ?? (options.askCreated && request.parent ? await createdOf(api, request.title) : undefined)] as const)),
  ]);
  const createdAt = new Map(created);
  const facts = new Map<string, PageFacts>();
  for (const [title, { request, page }] of found) {
    const props = (page.pageprops ?? {}) as Record<string, string>;
    const original = page.original as { source: string; width: number; height: number } | undefined;
    const image = original && page.pageimage ? { name: str(page.pageimage), url: original.source, width: original.width, height: original.height } : undefined;
    const editor = request.user ? editors.get(request.user.replace(/_/g, ' ')) : undefined;
    const parent = request.parent ? previous.get(request.parent) : undefined;
    const createdTime = createdAt.get(title) ?? (request.parent ? undefined : request.timestamp);
    facts.set(title, {
      rev: request.rev,
      latest: Number(page.lastrevid ?? 0),
      asked,
      categories: ((page.categories ?? []) as { title: string; hidden?: boolean }[]).map((c) => ({ name: c.title, hidden: !!c.hidden })),
      templates: ((page.templates ?? []) as { title: string }[]).map((t) => t.title),
      redirects: ((page.redirects ?? []) as { title: string }[]).map((r) => r.title),
      protection: ((page.protection ?? []) as { type: string; level: string; expiry: string }[]).map((p) => ({ type: p.type, level: p.level, expiry: p.expiry })),
      ...(props['wikibase-shortdesc'] ? { description: props['wikibase-shortdesc'] } : {}),
      ...(props.wikibase_item ? { wikidataItem: props.wikibase_item } : {}),
      ...(image ? { image } : {}),
      ...(editor ? { editor } : {}),
      ...(parent ? { previous: parent } : {}),
      ...(createdTime ? { created: createdTime } : {}),
    });
  }
  return facts;
}

/** The endpoint the wiki's requests for facts are counted under (apart from the rest of the Action API's). */
export const FACTS_ENDPOINT = 'action-facts';

function editorsOf(users: Record<string, unknown>[]): Map<string, EditorFacts> {
  const editors = new Map<string, EditorFacts>();
  for (const user of users as { name: string; missing?: boolean; invalid?: boolean; editcount?: number; groups?: string[]; rights?: string[]; registration?: string }[]) {
    if (user.missing || user.invalid) continue;
    editors.set(user.name, { editCount: user.editcount ?? 0, groups: user.groups ?? [], rights: user.rights ?? [], ...(user.registration ? { registration: user.registration } : {}) });
  }
  return editors;
}

/** Parent revisions' times and lengths in characters (their wikitext, as a record counts its own). */
async function parentsOf(api: ActionApi, revids: number[], background: boolean): Promise<Map<number, { timestamp: string; characters: number }>> {
  const parents = new Map<number, { timestamp: string; characters: number }>();
  if (!revids.length) return parents;
  const { pages } = await api.queryPages({ action: 'query', prop: 'revisions', revids: revids.join('|'), rvprop: 'ids|timestamp|content', rvslots: 'main' }, { endpoint: FACTS_ENDPOINT, background });
  for (const page of pages as { revisions?: { revid: number; timestamp: string; slots?: { main?: { content?: string } } }[] }[]) {
    for (const rev of page.revisions ?? []) {
      const text = rev.slots?.main?.content;
      if (text !== undefined) parents.set(rev.revid, { timestamp: rev.timestamp, characters: characters(text) });
    }
  }
  return parents;
}

/** A page's first revision's time (the only fact asked one page at a time: once in its life). */
async function createdOf(api: ActionApi, title: string): Promise<string | undefined> {
  const { pages } = await api.queryPages({ action: 'query', prop: 'revisions', titles: title, rvprop: 'timestamp', rvdir: 'newer', rvlimit: '1' }, { maxRequests: 1, endpoint: FACTS_ENDPOINT });
  return (pages[0] as { revisions?: { timestamp: string }[] } | undefined)?.revisions?.[0]?.timestamp;
}

/** Characters as Enterprise counts them: Unicode code points. */
export function characters(text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

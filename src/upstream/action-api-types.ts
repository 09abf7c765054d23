/** What the wiki's Action API answers and is sent, as the service reads and writes it. */

/** A revision as the Action API (formatversion=2) describes it. */
export interface ApiRevision {
  revid: number;
  parentid?: number;
  minor?: boolean;
  user?: string;
  userid?: number;
  userhidden?: boolean;
  timestamp: string;
  size?: number;
  sha1?: string;
  sha1hidden?: boolean;
  comment?: string;
  commenthidden?: boolean;
  tags?: string[];
  /** `content` only where it was asked for (`withText`). */
  slots?: { main?: { contentmodel?: string; texthidden?: boolean; content?: string } };
}

export interface ApiPage {
  pageid?: number;
  ns: number;
  title: string;
  missing?: boolean;
  invalid?: boolean;
  redirect?: boolean;
  lastrevid?: number;
  revisions?: ApiRevision[];
}

export interface SiteInfo {
  general: Record<string, unknown> & { lang: string; legaltitlechars: string; case: string };
  namespaces: Record<string, unknown>;
  namespacealiases: unknown[];
  specialpagealiases: unknown[];
  /** The wiki's content license (absent from site info stored before it was asked for). */
  rightsinfo?: { url?: string; text?: string };
}

/** One entry of the wiki's recent changes: an edit, a page creation, or a log event. */
export interface RecentChange {
  type: 'edit' | 'new' | 'log' | 'categorize' | 'external';
  ns: number;
  title: string;
  pageid?: number;
  revid?: number;
  rcid: number;
  timestamp: string;
  logtype?: string;
  logaction?: string;
  logparams?: Record<string, unknown>;
}

/** A page as a listing (allpages, embeddedin, categorymembers) names it, with its latest revision. */
export interface ListedPage {
  title: string;
  ns: number;
  lastrevid?: number;
  /** The wiki has no such page (asked for by title). */
  missing?: boolean;
}

/** A page as a listing saw it, with its latest revision then (absent if the wiki gave none). */
export interface LatestListed {
  title: string;
  ns: number;
  latest?: { rev: number; timestamp: string; hidden: boolean };
}

/** What a link to a page shows: whether it exists, redirects, is a disambiguation page, its length. */
export interface LinkTargetState {
  /** The title as asked for. */
  title: string;
  exists: boolean;
  redirect: boolean;
  disambiguation: boolean;
  /** Bytes of the latest revision (null: no such page). */
  length: number | null;
  /** The content namespace of the page (stub links mark content pages only). */
  ns: number;
}

/** What identifies a caller to the wiki: forwarded as they came, never replaced by the service's own. */
export interface Credentials {
  cookie?: string;
  authorization?: string;
  /** The client's address chain (`X-Forwarded-For`, the service's peer appended), so anonymous edits are theirs. */
  forwardedFor?: string;
  /** The caller's own CSRF token for an edit (required of cookie sessions): used instead of fetching one. */
  csrfToken?: string;
}

/** How politely a wiki is asked (Wikimedia's API etiquette). */
export interface ApiEtiquette {
  /** Sent as `maxlag` on reads: a lagged wiki answers "later" instead of adding load. */
  maxlag?: number;
  /** Times a read refused for lag is tried again (after the wiki's Retry-After, at most 5 s). */
  lagRetries?: number;
  /** Runs each request to the wiki (a rate limit, a circuit). */
  /** `background`: nobody waits for the request (its stalls do not open the wiki's circuit). */
  schedule?: <T>(request: () => Promise<T>, options?: { background?: boolean }) => Promise<T>;
  /** Milliseconds a read may take. */
  readTimeoutMs?: number;
}

/** A user of the wiki, as `meta=userinfo` names them. */
export interface WikiUser {
  id: number;
  name: string;
  anon: boolean;
  /**
   * The wiki's rate limits that apply to them, by action and category (`{edit: {ip: {hits: 8,
   * seconds: 60}}}`); empty when none do (`noratelimit`). Given by `userInfo` alone.
   */
  rateLimits?: Record<string, Record<string, { hits: number; seconds: number }>>;
  /** Their rights on the wiki (`edit`, …). Given by `userInfo` alone. */
  rights?: string[];
  /** Blocked from editing the whole wiki (a partial block is not). Given by `userInfo` alone. */
  blocked?: boolean;
}

/** What an edit needs to know first: a CSRF token, who the caller is, and the page's latest revision. */
export interface EditContext {
  token: string;
  user: WikiUser;
  page: { exists: boolean; latest?: { revid: number; timestamp: string } };
}

export interface EditParams {
  title: string;
  text: string;
  summary?: string;
  minor?: boolean;
  bot?: boolean;
  /** The revision the edit is based on, and its timestamp; absent when creating the page. */
  base?: { revid: number; timestamp: string };
  /** When the editor loaded the base (an edit deleted since is a conflict). */
  startTimestamp: string;
  /** `text` is this section's (the wiki puts it in place). */
  section?: number;
  token: string;
}

export interface EditResult {
  nochange: boolean;
  newrevid?: number;
  newtimestamp?: string;
  pageid?: number;
}

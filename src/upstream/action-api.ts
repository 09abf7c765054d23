import { HttpError } from '../util/errors.js';
import { upstreamFetch } from './fetch.js';
import type { ApiPage, SiteInfo, RecentChange, ListedPage, LatestListed, LinkTargetState, Credentials, ApiEtiquette, WikiUser, EditContext, EditParams, EditResult } from './action-api-types.js';

export type { ApiRevision, ApiPage, SiteInfo, RecentChange, ListedPage, LatestListed, LinkTargetState, Credentials, ApiEtiquette, WikiUser, EditContext, EditParams, EditResult } from './action-api-types.js';

/** A cookie that names a MediaWiki session or login (`{wiki}_session`, `{wiki}UserID`, `{wiki}Token`). */
const SESSION_COOKIE = /(?:^|;)\s*[^=;]*(?:_session|UserID|UserName|Token)=/i;

/** Revision ids one query may ask (the Action API's limit for a client without `apihighlimits`). */
export const REVISIONS_PER_QUERY = 50;
/** The endpoint `wiki_requests_total` counts batched revision queries under (the checks of stored revisions). */
export const REVISIONS_ENDPOINT = 'action-revisions';
/** The endpoint `wiki_requests_total` counts the questions of who a client's credentials are under (a session's reader or writer). */
export const USER_ENDPOINT = 'action-user';

const RVPROP = 'ids|timestamp|user|userid|size|sha1|comment|flags|contentmodel|tags';
const rvprop = (withText = false) => (withText ? `${RVPROP}|content` : RVPROP);

/** A page deleted or restored, as the deletion log has it. */
export interface DeletionEvent {
  title: string;
  ns: number;
  action: 'delete' | 'restore';
  timestamp: string;
}

function deletionEvents(json: Record<string, any>): DeletionEvent[] {
  const events = (json.query?.logevents ?? []) as { title?: string; ns?: number; action?: string; timestamp?: string }[];
  return events.flatMap((e) => (e.title && e.timestamp && (e.action === 'delete' || e.action === 'restore') ? [{ title: e.title, ns: e.ns ?? 0, action: e.action, timestamp: e.timestamp }] : []));
}

/**
 * The one page a query by title answers. A title with an interwiki prefix (`Google:Foo`) names a
 * page of another site: the wiki answers it under `interwiki`, not `pages`, and so does this, with
 * a 404 (remembered like any missing page) instead of a page that is not there.
 */
function onlyPage(json: Record<string, any>): ApiPage {
  const page = json.query?.pages?.[0] as ApiPage | undefined;
  if (page) return page;
  const interwiki = json.query?.interwiki?.[0] as { title?: string; iw?: string } | undefined;
  if (interwiki) throw new HttpError(404, 'interwiki-title', `${interwiki.title ?? 'This title'} names a page of another wiki (${interwiki.iw}:), not one of this wiki.`);
  throw new HttpError(502, 'upstream-error', 'The Action API answered a query for a page without the page.');
}

/** An error the Action API answered, with its own code. */
export class ApiError extends Error {
  constructor(readonly code: string, readonly info: string, readonly retryAfter?: number) {
    super(`${code}: ${info}`);
  }
}

/** The wiki's Action API: site info, revision metadata, and edits made as a caller. */
/** A query followed to its end (`queryPages`): at most `maxRequests`, counted under `endpoint`, `background` if nobody waits for it. */
export interface QueryOptions {
  maxRequests?: number;
  endpoint?: string;
  background?: boolean;
}

export class ActionApi {
  constructor(
    private readonly url: string,
    private readonly userAgent: string,
    private readonly count: (endpoint: string) => void,
    private readonly etiquette: ApiEtiquette = {},
  ) {}

  /** One call; the wiki's own error becomes an ApiError. */
  private async call(params: Record<string, string>, options: { post?: boolean; credentials?: Credentials; timeoutMs?: number; endpoint?: string; background?: boolean } = {}): Promise<Record<string, any>> {
    const lagged = !options.post && this.etiquette.maxlag !== undefined;
    const schedule = this.etiquette.schedule ?? ((request) => request());
    for (let attempt = 0; ; attempt++) {
      try {
        return await schedule(() => this.callOnce(lagged ? { ...params, maxlag: String(this.etiquette.maxlag) } : params, options), { background: options.background });
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 'maxlag')) throw e;
        if (attempt >= (this.etiquette.lagRetries ?? 2)) {
          throw new HttpError(503, 'upstream-lagged', `The wiki is lagged and asks to be asked later: ${e.info}`, { headers: { 'retry-after': String(e.retryAfter ?? 5) } });
        }
        await new Promise((r) => setTimeout(r, Math.min(5, e.retryAfter ?? 1) * 1000));
      }
    }
  }

  private async callOnce(params: Record<string, string>, options: { post?: boolean; credentials?: Credentials; timeoutMs?: number; endpoint?: string }): Promise<Record<string, any>> {
    this.count(options.endpoint ?? 'action');
    const qs = new URLSearchParams({ format: 'json', formatversion: '2', errorformat: 'plaintext', ...params });
    const headers: Record<string, string> = {};
    if (options.credentials?.cookie) headers.cookie = options.credentials.cookie;
    if (options.credentials?.authorization) headers.authorization = options.credentials.authorization;
    if (options.credentials?.forwardedFor) headers['x-forwarded-for'] = options.credentials.forwardedFor;
    const res = options.post
      ? await upstreamFetch(this.url, this.userAgent, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          body: qs.toString(),
          timeoutMs: options.timeoutMs ?? 60_000,
          // Never resent: an edit that reached the wiki must not be made twice.
          retries: 0,
        })
      : await upstreamFetch(`${this.url}?${qs}`, this.userAgent, { headers, timeoutMs: options.timeoutMs ?? this.etiquette.readTimeoutMs ?? 15_000 });
    let json: Record<string, any>;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new HttpError(502, 'upstream-error', `The Action API answered ${res.status} with something that is not JSON.`);
    }
    if (json.errors?.length) {
      const { code, text } = json.errors[0] as { code?: string; text?: string };
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new ApiError(code ?? 'unknown', text ?? code ?? 'unknown error', Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined);
    }
    return json;
  }

  private async query(params: Record<string, string>, endpoint = 'action', background = false): Promise<Record<string, any>> {
    try {
      return await this.call(params, { endpoint, background });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      // A continuation the client handed us back, forged or stale: its mistake, not the wiki's.
      if (e.code === 'badcontinue') throw new HttpError(400, 'invalid-paging-token', 'The paging token (next) is not valid for this listing.');
      throw new HttpError(502, 'upstream-error', `The Action API failed: ${e.info}`);
    }
  }

  /** Token, caller and latest revision in one request (what a client does before any edit). */
  async editContext(title: string, credentials: Credentials): Promise<EditContext> {
    const json = await this.call(
      { action: 'query', meta: 'tokens|userinfo', prop: 'revisions', titles: title, rvprop: 'ids|timestamp', rvslots: 'main' },
      { credentials },
    );
    const page = onlyPage(json);
    const latest = page.revisions?.[0];
    return {
      token: json.query.tokens.csrftoken as string,
      user: { id: json.query.userinfo.id as number, name: json.query.userinfo.name as string, anon: !!json.query.userinfo.anon },
      page: { exists: !page.missing && !page.invalid && !!latest, latest: latest && { revid: latest.revid, timestamp: latest.timestamp } },
    };
  }

  /** Who the credentials belong to on the wiki (anonymous without a session). */
  async userInfo(credentials: Credentials): Promise<WikiUser> {
    let json: Record<string, any>;
    try {
      json = await this.call({ action: 'query', meta: 'userinfo', uiprop: 'ratelimits|rights|blockinfo' }, { credentials, endpoint: USER_ENDPOINT });
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      throw new HttpError(502, 'upstream-error', `The Action API failed: ${e.info}`);
    }
    const info = json.query.userinfo;
    return {
      id: info.id as number, name: info.name as string, anon: !!info.anon, rateLimits: info.ratelimits ?? {},
      rights: Array.isArray(info.rights) ? (info.rights as string[]) : [], blocked: info.blockid !== undefined && !info.blockpartial,
    };
  }

  /** Whether `token` is the CSRF token of the credentials' session (the wiki decides). */
  async checkCsrfToken(token: string, credentials: Credentials): Promise<boolean> {
    const json = await this.call({ action: 'checktoken', type: 'csrf', token }, { post: true, credentials, timeoutMs: 15_000 }).catch((e: unknown) => {
      if (e instanceof ApiError) throw new HttpError(502, 'upstream-error', `The Action API failed: ${e.info}`);
      throw e;
    });
    return json.checktoken?.result === 'valid';
  }

  /** Saves a page as the caller; the wiki's refusal is an ApiError with its code. */
  async edit(params: EditParams, credentials: Credentials): Promise<EditResult> {
    const form: Record<string, string> = { action: 'edit', title: params.title, text: params.text, starttimestamp: params.startTimestamp, token: params.token };
    if (params.summary !== undefined) form.summary = params.summary;
    if (params.minor) form.minor = '1';
    if (params.bot) form.bot = '1';
    if (params.section !== undefined) form.section = String(params.section);
    if (params.base) Object.assign(form, { baserevid: String(params.base.revid), basetimestamp: params.base.timestamp, nocreate: '1' });
    else form.createonly = '1';
    // A caller who sent credentials edits as a user or not at all: an expired session must not
    // quietly become an anonymous edit.
    if (credentials.authorization || (credentials.cookie && SESSION_COOKIE.test(credentials.cookie))) form.assert = 'user';
    const edit = (await this.call(form, { post: true, credentials })).edit as Record<string, any>;
    if (edit.result !== 'Success') throw new ApiError(String(edit.code ?? edit.result ?? 'edit-failed'), String(edit.info ?? 'The wiki did not save the edit.'));
    return { nochange: !!edit.nochange, newrevid: edit.newrevid, newtimestamp: edit.newtimestamp, pageid: edit.pageid };
  }

  async siteInfo(): Promise<SiteInfo> {
    const json = await this.query({ action: 'query', meta: 'siteinfo', siprop: 'general|namespaces|namespacealiases|specialpagealiases|rightsinfo' });
    return json.query as SiteInfo;
  }

  /**
   * A page with its newest revision, or the revision current at `before` (ISO time). `withText`:
   * with the revision's wikitext too (for a revision rendered next: Parsoid need not be asked for it).
   */
  async page(title: string, options: { before?: string; withText?: boolean } = {}): Promise<ApiPage> {
    const params: Record<string, string> = { action: 'query', prop: 'revisions|info', titles: title, rvprop: rvprop(options.withText), rvslots: 'main', rvlimit: '1' };
    if (options.before) Object.assign(params, { rvstart: options.before, rvdir: 'older' });
    return onlyPage(await this.query(params));
  }

  /**
   * Pages by title (at most 50), each with its newest revision (and its wikitext, `withText`), in
   * one request, keyed by the title asked for. A page the answer left without its revision (the
   * wiki's result-size limit reached: it would continue in a further request) is left out: the
   * caller asks for it alone.
   */
  async pages(titles: string[], options: { withText?: boolean } = {}): Promise<Map<string, ApiPage>> {
    const json = await this.query({ action: 'query', prop: 'revisions|info', titles: titles.join('|'), rvprop: rvprop(options.withText), rvslots: 'main' });
    const asked = new Map<string, string>(((json.query?.normalized ?? []) as { from: string; to: string }[]).map((n) => [n.to, n.from]));
    const cut = json.continue !== undefined;
    const answered = new Map<string, ApiPage>();
    for (const page of (json.query?.pages ?? []) as ApiPage[]) {
      if (cut && !page.missing && !page.invalid && !page.revisions?.length) continue;
      answered.set(asked.get(page.title) ?? page.title, page);
    }
    return answered;
  }

  /** The page a revision belongs to now (after moves), with that revision; undefined if unknown. */
  async revision(revid: number, options: { withText?: boolean } = {}): Promise<ApiPage | undefined> {
    const json = await this.query({ action: 'query', prop: 'revisions|info', revids: String(revid), rvprop: rvprop(options.withText), rvslots: 'main' });
    if (json.query?.badrevids) return undefined;
    return json.query?.pages?.[0] as ApiPage | undefined;
  }

  /**
   * Several revisions described at once (at most REVISIONS_PER_QUERY, the Action API's limit for a
   * client without `apihighlimits`): each the wiki has, as its page with that revision alone, as
   * `revision` answers it. Those it has not (their page deleted, never made) are absent.
   */
  async revisions(revids: readonly number[]): Promise<Map<number, ApiPage>> {
    const json = await this.query({ action: 'query', prop: 'revisions|info', revids: revids.join('|'), rvprop: rvprop(), rvslots: 'main' }, REVISIONS_ENDPOINT);
    const found = new Map<number, ApiPage>();
    for (const page of (json.query?.pages ?? []) as ApiPage[]) {
      for (const revision of page.revisions ?? []) found.set(revision.revid, { ...page, revisions: [revision] });
    }
    return found;
  }

  /** Where the page last moved away from `title` went, if it was moved. */
  async movedTo(title: string): Promise<string | undefined> {
    const json = await this.query({ action: 'query', list: 'logevents', letype: 'move', letitle: title, lelimit: '1', leprop: 'details|title' });
    const event = json.query?.logevents?.[0] as { params?: { target_title?: string } } | undefined;
    return event?.params?.target_title;
  }

  /**
   * The page moves logged after `after` (ISO time), oldest first: each page's title before and
   * after (a page moved twice is there twice). `cont` goes on where the previous call stopped.
   */
  async movesAfter(after: string, cont?: Record<string, string>): Promise<{ moves: { from: string; to: string }[]; cont?: Record<string, string> }> {
    const json = await this.query({ action: 'query', list: 'logevents', letype: 'move', ledir: 'newer', lestart: after, lelimit: 'max', leprop: 'title|details', ...(cont ?? {}) });
    const events = (json.query?.logevents ?? []) as { title?: string; params?: { target_title?: string } }[];
    return {
      moves: events.flatMap((e) => (e.title && e.params?.target_title ? [{ from: e.title, to: e.params.target_title }] : [])),
      cont: json.continue as Record<string, string> | undefined,
    };
  }

  /**
   * The deletion log after `after` (ISO time), oldest first: pages deleted and restored (revision
   * deletions left out). `cont` goes on where the previous call stopped.
   */
  async deletionsAfter(after: string, cont?: Record<string, string>): Promise<{ events: DeletionEvent[]; cont?: Record<string, string> }> {
    const json = await this.query({ action: 'query', list: 'logevents', letype: 'delete', ledir: 'newer', lestart: after, lelimit: 'max', leprop: 'title|type|timestamp', ...(cont ?? {}) });
    return { events: deletionEvents(json), cont: json.continue as Record<string, string> | undefined };
  }

  /** The page's last deletion or restoration logged at or before `at` (ISO time), if any. */
  async deletionStateAt(title: string, at: string): Promise<DeletionEvent | undefined> {
    // Revision deletions share the log type: a few are read to find the last page-level event.
    const json = await this.query({ action: 'query', list: 'logevents', letype: 'delete', letitle: title, ledir: 'older', lestart: at, lelimit: '20', leprop: 'title|type|timestamp' });
    return deletionEvents(json)[0];
  }

  /**
   * Recent changes from `start` (inclusive, ISO time) oldest first, up to `limit`; `cont` goes on
   * where the previous call stopped.
   */
  async recentChanges(start: string, limit: number, cont?: string): Promise<{ changes: RecentChange[]; cont?: string }> {
    const params: Record<string, string> = {
      action: 'query', list: 'recentchanges', rcdir: 'newer', rcstart: start, rclimit: String(limit),
      rcprop: 'title|ids|timestamp|loginfo', rctype: 'edit|new|log',
    };
    if (cont) params.rccontinue = cont;
    const json = await this.query(params);
    return { changes: (json.query?.recentchanges ?? []) as RecentChange[], cont: json.continue?.rccontinue as string | undefined };
  }

  /** The wiki's newest recent changes of the kinds `recentChanges` lists, newest first. */
  async newestChanges(limit: number): Promise<RecentChange[]> {
    const json = await this.query({ action: 'query', list: 'recentchanges', rcdir: 'older', rclimit: String(limit), rcprop: 'title|ids|timestamp', rctype: 'edit|new|log' });
    return (json.query?.recentchanges ?? []) as RecentChange[];
  }

  /** The time of the wiki's newest recent change (where following starts), or now if it has none. */
  async newestChangeTime(): Promise<string> {
    const json = await this.query({ action: 'query', list: 'recentchanges', rcdir: 'older', rclimit: '1', rcprop: 'timestamp' });
    return ((json.query?.recentchanges?.[0] as RecentChange | undefined)?.timestamp) ?? new Date().toISOString();
  }

  /**
   * One chunk of a page listing through a generator (embeddedin, allpages, categorymembers) with
   * each page's latest revision id; `cont` is the previous chunk's continuation.
   */
  async listPages(generator: 'embeddedin' | 'allpages' | 'categorymembers', params: Record<string, string>, cont?: Record<string, string>): Promise<{ pages: ListedPage[]; cont?: Record<string, string> }> {
    const json = await this.query({ action: 'query', generator, prop: 'info', ...params, ...(cont ?? {}) });
    const pages = ((json.query?.pages ?? []) as ApiPage[]).filter((p) => !p.missing && !p.invalid);
    return { pages: pages.map((p) => ({ title: p.title, ns: p.ns, lastrevid: p.lastrevid })), cont: json.continue as Record<string, string> | undefined };
  }

  /**
   * A page of the `allpages` listing with each page's latest revision: its id, time and whether
   * its text is hidden (one request for as many pages as the listing gives).
   */
  async listLatest(params: Record<string, string>, cont?: Record<string, string>): Promise<{ pages: LatestListed[]; cont?: Record<string, string> }> {
    const json = await this.query({ action: 'query', generator: 'allpages', prop: 'revisions', rvprop: 'ids|timestamp|sha1', rvslots: 'main', ...params, ...(cont ?? {}) });
    const pages = ((json.query?.pages ?? []) as (ApiPage & { revisions?: { revid: number; timestamp: string; sha1hidden?: boolean }[] })[]).filter((p) => !p.missing && !p.invalid);
    return {
      pages: pages.map((p) => {
        const latest = p.revisions?.[0];
        return { title: p.title, ns: p.ns, ...(latest ? { latest: { rev: latest.revid, timestamp: latest.timestamp, hidden: latest.sha1hidden === true } } : {}) };
      }),
      cont: json.continue as Record<string, string> | undefined,
    };
  }

  /**
   * A query over pages followed to its end: each `continue` the wiki gives asked in turn and the
   * pages' lists (categories, templates, ...) merged, so a page with more than a request's limit
   * of them is whole. The query's `normalized` and `redirects` come with it.
   */
  async queryPages(params: Record<string, string>, { maxRequests = 50, endpoint = 'action', background = false }: QueryOptions = {}): Promise<{ pages: Record<string, unknown>[]; normalized: { from: string; to: string }[]; redirects: { from: string; to: string }[]; users: Record<string, unknown>[] }> {
    const pages = new Map<string, Record<string, unknown>>();
    const normalized: { from: string; to: string }[] = [];
    const redirects: { from: string; to: string }[] = [];
    const users: Record<string, unknown>[] = [];
    let cont: Record<string, string> | undefined;
    for (let i = 0; i < maxRequests; i++) {
      const json = await this.query({ ...params, ...(cont ?? { continue: '' }) }, endpoint, background);
      if (i === 0) {
        normalized.push(...((json.query?.normalized ?? []) as { from: string; to: string }[]));
        redirects.push(...((json.query?.redirects ?? []) as { from: string; to: string }[]));
        users.push(...((json.query?.users ?? []) as Record<string, unknown>[]));
      }
      for (const page of (json.query?.pages ?? []) as Record<string, unknown>[]) {
        const key = `${page.ns}:${page.title}`;
        const had = pages.get(key);
        if (!had) {
          pages.set(key, page);
          continue;
        }
        for (const [name, value] of Object.entries(page)) {
          if (Array.isArray(value) && Array.isArray(had[name])) (had[name] as unknown[]).push(...value);
          else if (!(name in had)) had[name] = value;
        }
      }
      cont = json.continue as Record<string, string> | undefined;
      if (!cont) break;
    }
    return { pages: [...pages.values()], normalized, redirects, users };
  }

  /** Pages named by title (at most 50), each with its latest revision id or marked missing. */
  async info(titles: string[]): Promise<ListedPage[]> {
    const json = await this.query({ action: 'query', prop: 'info', titles: titles.join('|') });
    return ((json.query?.pages ?? []) as ApiPage[]).map((p) => ({ title: p.title, ns: p.ns, lastrevid: p.lastrevid, missing: !!(p.missing || p.invalid) }));
  }

  /** The image PageImages chose to stand for a page (its free image first), if the wiki has the extension and it chose one. */
  async pageImage(title: string): Promise<string | undefined> {
    const json = await this.query({ action: 'query', prop: 'pageprops', ppprop: 'page_image_free|page_image', titles: title });
    const props = (json.query?.pages?.[0] as { pageprops?: Record<string, string> } | undefined)?.pageprops;
    return props?.page_image_free ?? props?.page_image;
  }

  /** The wikitext of a page's latest revision (a list the wiki keeps as a page), or undefined if there is none. */
  async pageText(title: string): Promise<string | undefined> {
    const json = await this.query({ action: 'query', prop: 'revisions', titles: title, rvprop: 'content', rvslots: 'main' });
    const page = json.query?.pages?.[0] as { missing?: boolean; revisions?: { slots?: { main?: { content?: string } } }[] } | undefined;
    return page?.missing ? undefined : page?.revisions?.[0]?.slots?.main?.content;
  }

  /**
   * The state of pages links point to (at most 50 titles a request): special pages count as
   * existing, invalid titles as missing; disambiguation is the Disambiguator page prop, where the
   * wiki has that extension.
   */
  async linkTargetStates(titles: string[]): Promise<LinkTargetState[]> {
    const json = await this.query({ action: 'query', prop: 'info|pageprops', ppprop: 'disambiguation', titles: titles.join('|') });
    const asked = new Map<string, string>(titles.map((t) => [t, t]));
    for (const n of (json.query?.normalized ?? []) as { from: string; to: string }[]) asked.set(n.to, n.from);
    return ((json.query?.pages ?? []) as (ApiPage & { special?: boolean; redirect?: boolean; length?: number; pageprops?: Record<string, unknown> })[]).map((p) => ({
      title: asked.get(p.title) ?? p.title,
      exists: !!p.special || !(p.missing || p.invalid),
      redirect: !!p.redirect,
      disambiguation: p.pageprops?.disambiguation !== undefined,
      length: p.length ?? null,
      ns: p.ns,
    }));
  }

  /**
   * What a page summary adds from extensions, where the wiki has them: the short description and
   * Wikidata item (Wikibase client's page props `wikibase-shortdesc`, `wikibase_item`) and the
   * lead image (PageImages' `page_image_free` or `page_image`) with its original size and URL.
   */
  async summaryProps(title: string): Promise<{ description?: string; wikibaseItem?: string; image?: { source: string; width: number; height: number } }> {
    const json = await this.query({ action: 'query', prop: 'pageprops', titles: title });
    const props = ((json.query?.pages?.[0] as { pageprops?: Record<string, string> } | undefined)?.pageprops) ?? {};
    const file = props.page_image_free ?? props.page_image;
    let image: { source: string; width: number; height: number } | undefined;
    if (file) {
      const info = await this.query({ action: 'query', prop: 'imageinfo', iiprop: 'url|size', titles: `File:${file}` });
      const ii = (info.query?.pages?.[0] as { imageinfo?: { url: string; width: number; height: number }[] } | undefined)?.imageinfo?.[0];
      if (ii) image = { source: ii.url, width: ii.width, height: ii.height };
    }
    return { description: props['wikibase-shortdesc'], wikibaseItem: props.wikibase_item, image };
  }

  /** One section's wikitext of a revision, as the wiki cuts it (undefined if it has no such section). */
  async sectionWikitext(revid: number, section: number): Promise<string | undefined> {
    try {
      const json = await this.query({ action: 'query', prop: 'revisions', revids: String(revid), rvprop: 'content', rvslots: 'main', rvsection: String(section) });
      return json.query?.pages?.[0]?.revisions?.[0]?.slots?.main?.content as string | undefined;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'nosuchsection') return undefined;
      throw e;
    }
  }

  /** How many pages the wiki has (all namespaces), and per category. */
  async pageCount(category?: string): Promise<number> {
    if (category) {
      const json = await this.query({ action: 'query', prop: 'categoryinfo', titles: category });
      return Number((json.query?.pages?.[0] as { categoryinfo?: { pages?: number } })?.categoryinfo?.pages ?? 0);
    }
    const json = await this.query({ action: 'query', meta: 'siteinfo', siprop: 'statistics' });
    return Number(json.query?.statistics?.pages ?? 0);
  }

  /** One page of a page's history, newest first. */
  async history(title: string, limit: number, cont?: string): Promise<{ page: ApiPage; cont?: string }> {
    const params: Record<string, string> = { action: 'query', prop: 'revisions|info', titles: title, rvprop: RVPROP, rvslots: 'main', rvlimit: String(limit) };
    if (cont) params.rvcontinue = cont;
    const json = await this.query(params);
    return { page: onlyPage(json), cont: json.continue?.rvcontinue as string | undefined };
  }
}

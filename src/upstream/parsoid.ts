import { HttpError } from '../util/errors.js';
import { upstreamFetch, type FetchOptions, type UpstreamResponse } from './fetch.js';

/** The pagebundle profile that returns data-mw separately from the HTML. */
const PAGEBUNDLE_ACCEPT = 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/pagebundle/999.0.0"';

export interface Part {
  contentType: string;
  body: Buffer;
}

export interface PageBundle {
  html: Part;
  /** Null where the wiki does not expose it (MediaWiki's core REST API). */
  dataParsoid: Part | null;
  dataMw: Part;
}

/**
 * How a wiki's Parsoid is reached: its own v3 routes (`rest.php/{domain}/v3`: page bundles with
 * data-parsoid), or MediaWiki's core REST API (`rest.php/v1`, on every MediaWiki ≥ 1.35 and the
 * only one Wikimedia exposes: HTML 2.x with data-mw inline, no data-parsoid).
 */
export type ParsoidMode = 'v3' | 'core';

/** HTML (2.x, data-mw inline) and wikitext of one revision, from the core REST API. */
export interface CoreRender {
  html: string;
  wikitext: Part;
}

/** A transform Parsoid refused (a 4xx): the service's problem, with Parsoid's own status and words for surfaces that speak as the wiki. */
export class ParsoidRefusal extends HttpError {
  constructor(status: number, kind: string, detail: string, readonly parsoidStatus: number, readonly parsoidMessage: string) {
    super(status, kind, detail);
  }
}

/**
 * A transform's input is the client's: one that takes the wiki longer than the timeout (two
 * megabytes of wikitext) says nothing of the wiki's health, so it is not a stall that would open
 * the wiki's circuit for every other reader.
 */
function asClientWork(e: unknown): never {
  if (e instanceof HttpError && e.problemType === 'urn:problem:upstream-timeout') throw new HttpError(504, 'transform-timeout', `${e.detail} The transform's input may be too large for the wiki to handle in time.`);
  throw e;
}

/**
 * A title as one path segment of a wiki URL: `.` and `..` encoded too, or the URL's dot-segment
 * rules would make them another path (`transform/html/to/wikitext/..` is `transform/html/to`).
 */
const pathSegment = (title: string) => (title === '.' || title === '..' ? title.replace(/\./g, '%2E') : encodeURIComponent(title));

/** Whether a rest.php answer says no route matched (the wiki does not expose those endpoints). */
const isRouteMissing = (status: number, body: Buffer) => status === 404 && /did not match any known handler|rest-no-match/.test(body.toString('utf8', 0, 2000));

const V3_ROUTES = "Parsoid's own routes (rest.php/{domain}/v3)";
const CORE_ROUTES = "MediaWiki's core REST API (rest.php/v1)";

/** The error of routes the wiki does not expose. */
export class RoutesMissing extends HttpError {
  constructor(what: string) {
    super(501, 'upstream-route-missing', `The wiki does not expose ${what}.`);
  }
}

/** What Parsoid's wikitext endpoints and the core REST API label a revision's wikitext. */
export const WIKITEXT_TYPE = 'text/plain; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/wikitext/1.0.0"';

/** A page (and revision) a transform is done for: links, templates and selser depend on it. */
export interface TransformTarget {
  title?: string;
  revid?: number;
}

/** Parsoid's REST endpoints of a wiki (`rest.php/{domain}/v3`). */
export class ParsoidClient {
  constructor(
    private readonly restBase: string,
    private readonly parsoidDomain: string,
    private readonly userAgent: string,
    private readonly count: (endpoint: string) => void,
    private readonly schedule: <T>(request: () => Promise<T>) => Promise<T> = (request) => request(),
  ) {}

  /**
   * Every request to the wiki goes through its rate limit; an answer saying the wiki has no such
   * route (it does not expose `routes`) becomes RoutesMissing, whatever was asked.
   */
  private async fetch(url: string, options: FetchOptions, routes: string, clientWork = false): Promise<UpstreamResponse> {
    const res = await this.schedule(() => clientWork ? upstreamFetch(url, this.userAgent, options).catch(asClientWork) : upstreamFetch(url, this.userAgent, options));
    if (isRouteMissing(res.status, res.body)) throw new RoutesMissing(routes);
    return res;
  }

  private url(kind: string, title: string, revid: number): string {
    return `${this.restBase}/${this.parsoidDomain}/v3/page/${kind}/${pathSegment(title)}/${revid}`;
  }

  private static failure(status: number, body: Buffer, what: string): HttpError {
    if (status === 404) {
      const hidden = /deleted or suppressed/.test(body.toString('utf8'));
      return new HttpError(404, hidden ? 'revision-hidden' : 'revision-not-found', `Parsoid: ${what} ${hidden ? 'is hidden' : 'was not found'}.`);
    }
    return new HttpError(502, 'upstream-error', `Parsoid answered ${status} for ${what}.`);
  }

  /**
   * Whether the wiki exposes Parsoid's v3 routes, asked with a fixed request that carries no
   * client text (an empty wikitext transform): the evidence `parsoid: auto` decides on. A wiki
   * that cannot be reached answers undefined (no evidence either way).
   */
  async hasV3(): Promise<boolean | undefined> {
    this.count('parsoid-probe');
    try {
      const res = await this.schedule(() => upstreamFetch(`${this.restBase}/${this.parsoidDomain}/v3/transform/wikitext/to/html`, this.userAgent, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'promise-non-write-api-action': 'true' },
        body: '{"wikitext":"","body_only":true}',
        timeoutMs: 15_000,
      }));
      if (isRouteMissing(res.status, res.body)) return false;
      return res.status === 200 ? true : undefined;
    } catch {
      return undefined;
    }
  }

  async pagebundle(title: string, revid: number): Promise<PageBundle> {
    this.count('parsoid');
    const res = await this.fetch(this.url('pagebundle', title, revid), { headers: { accept: PAGEBUNDLE_ACCEPT }, timeoutMs: 120_000, retries: 1 }, V3_ROUTES);
    if (res.status !== 200) throw ParsoidClient.failure(res.status, res.body, `revision ${revid}`);
    const json = JSON.parse(res.body.toString('utf8')) as Record<string, { headers: Record<string, string>; body: unknown }>;
    const part = (name: string, fallback: string): Part => {
      const p = json[name];
      const body = p?.body ?? (name === 'data-mw' ? { ids: {} } : undefined);
      if (body === undefined) throw new HttpError(502, 'upstream-error', `Parsoid's pagebundle has no ${name}.`);
      return { contentType: p?.headers?.['content-type'] ?? fallback, body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) };
    };
    return {
      html: part('html', 'text/html; charset=utf-8'),
      dataParsoid: part('data-parsoid', 'application/json; charset=utf-8'),
      dataMw: part('data-mw', 'application/json; charset=utf-8'),
    };
  }

  /**
   * A revision through MediaWiki's core REST API: its HTML, and its wikitext from the revision's
   * description, which also says reliably whether it is hidden (403; the HTML endpoint may serve a
   * render cached before the revision was hidden).
   */
  async core(revid: number): Promise<CoreRender> {
    this.count('parsoid');
    const [html, source] = await Promise.all([
      this.fetch(`${this.restBase}/v1/revision/${revid}/html`, { timeoutMs: 120_000, retries: 1 }, CORE_ROUTES),
      this.fetch(`${this.restBase}/v1/revision/${revid}`, { timeoutMs: 30_000 }, CORE_ROUTES),
    ]);
    for (const res of [source, html]) {
      if (res.status === 403) throw new HttpError(404, 'revision-hidden', `Revision ${revid} is hidden.`);
      if (res.status !== 200) throw ParsoidClient.failure(res.status, res.body, `revision ${revid}`);
    }
    const described = JSON.parse(source.body.toString('utf8')) as { source?: string };
    if (typeof described.source !== 'string') throw new HttpError(502, 'upstream-error', `The core REST API gave no wikitext for revision ${revid}.`);
    return {
      html: html.body.toString('utf8'),
      wikitext: { contentType: WIKITEXT_TYPE, body: Buffer.from(described.source) },
    };
  }

  async wikitext(title: string, revid: number): Promise<Part> {
    this.count('parsoid-wikitext');
    const res = await this.fetch(this.url('wikitext', title, revid), { timeoutMs: 30_000 }, V3_ROUTES);
    if (res.status !== 200) throw ParsoidClient.failure(res.status, res.body, `the wikitext of revision ${revid}`);
    return { contentType: res.headers.get('content-type') ?? 'text/plain; charset=utf-8', body: res.body };
  }

  /**
   * One transform (`from` -> `to`), body as Parsoid's transform endpoints take it (`wikitext`,
   * `html`, `body_only`, `original`, `data-mw`). A request Parsoid refuses is the client's (400).
   */
  async transform(from: 'wikitext' | 'html' | 'pagebundle', to: 'html' | 'wikitext' | 'pagebundle' | 'lint', target: TransformTarget, body: Record<string, unknown>, mode: ParsoidMode = 'v3'): Promise<Part> {
    this.count(`transform-${from}-${to}`);
    let url = mode === 'v3' ? `${this.restBase}/${this.parsoidDomain}/v3/transform/${from}/to/${to}` : `${this.restBase}/v1/transform/${from}/to/${to}`;
    if (target.title !== undefined) url += `/${pathSegment(target.title)}${target.revid !== undefined ? `/${target.revid}` : ''}`;
    const res = await this.fetch(url, {
      method: 'POST',
      // A transform writes nothing: said so, MediaWiki runs it without a write transaction, so it
      // does not wait on the lock an editor's save (VisualEditor's api.php POST) holds meanwhile.
      headers: { 'content-type': 'application/json', 'promise-non-write-api-action': 'true' },
      body: JSON.stringify(body),
      timeoutMs: 120_000,
      retries: 1,
    }, `transforms (${new URL(url).pathname.replace(/\/to\/.*$/, '/...')})`, true);
    if (res.status === 200) return { contentType: res.headers.get('content-type') ?? 'text/plain; charset=utf-8', body: res.body };
    let message = res.body.toString('utf8').slice(0, 500);
    try {
      message = (JSON.parse(message) as { message?: string }).message ?? message;
    } catch {
      // not JSON: keep the text
    }
    if (res.status === 413) throw new ParsoidRefusal(413, 'body-too-large', `Parsoid: ${message}`, res.status, message);
    if (res.status >= 400 && res.status < 500) throw new ParsoidRefusal(400, 'transform-failed', `Parsoid could not transform ${from} to ${to}: ${message}`, res.status, message);
    throw new HttpError(502, 'upstream-error', `Parsoid answered ${res.status} for a ${from} to ${to} transform.`);
  }
}

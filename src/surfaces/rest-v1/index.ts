import { LRUCache } from 'lru-cache';
import { HttpError, notFound } from '../../util/errors.js';
import { tidTime } from '../../util/tid.js';
import { withBody } from '../../router/typed-body.js';
import type { Module, RequestContext, Response, Route, RouteRequest } from '../../router/types.js';
import { restV1Specs, toHtmlBody, toWikitextBody } from './spec.js';
import { leadSummary } from './summary.js';
import { gunzip } from '../../util/compression.js';
import { HTML_2_TYPE, RevisionMoved, askedAnew, contentKeys, contentReuse, markedIfUnchecked, negotiateHtml, parseDataMw, parseOriginal, partOf, renderOfETag, surrogateKeys, tagged, targetOf, threePaths, titleSegment, type BundleRender, type CachePolicy, type HtmlVersion, type PageDoor as PageApi, type Render, type RevisionRow, RateLimits } from '../../modules/page/door.js';

const SUMMARY_CACHE_BYTES = 8 * 1024 * 1024;
const SUMMARY_TYPE = 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/Summary/1.4.2"';

const enc = titleSegment;

/**
 * RESTBase's limit of stashes (HTML asked with `stash`, a transform to HTML with `stash`): five a
 * second per client address (its `stash_ratelimit`), averaged over ten seconds as its rate
 * limiter measured; past it a 429 `request_rate_exceeded`. A stash is stored for a day.
 */
const STASHES_PER_SECOND = 5;
const STASH_LIMIT = { hits: STASHES_PER_SECOND * 10, seconds: 10 };

/**
 * `/{domain}/rest_v1/...`: Wikimedia's REST API (RESTBase's content and transform routes) over
 * the same storage, so existing clients and MediaWiki's own RESTBase client work unchanged.
 * Content comes from the page service that serves /v1/ (the same renders, revisions and checks),
 * in RESTBase's layout and shapes; 2.x clients get 2.x HTML made from the stored render.
 */
export function restV1Module(api: PageApi): Module {
  const { normalize, transforms, cache, pages, renders, answers } = api;
  // Bounded in bytes: a lead paragraph can be long.
  const summaries = new LRUCache<string, Record<string, unknown>>({ maxSize: SUMMARY_CACHE_BYTES, sizeCalculation: (summary) => 2 * JSON.stringify(summary).length });
  const stashes = new RateLimits();

  /** A stash counted against RESTBase's limit for the client that asks (none for the service's own requests). */
  function withinStashRate(ctx: RequestContext): void {
    const client = ctx.client();
    if (client === undefined) return;
    const wait = stashes.take('stash', [[`ip:${client}`, STASH_LIMIT]]);
    if (wait === undefined) return;
    throw new HttpError(429, 'request_rate_exceeded', `More than ${STASHES_PER_SECOND} stashes a second from one client.`, {
      title: 'Stashing rate limit exceeded', headers: { 'retry-after': String(wait) }, extensions: { rate_limit_per_second: STASHES_PER_SECOND },
    });
  }

  /** A non-normalised title is answered with a redirect to the same rest_v1 URL with the wiki's form. */
  async function titleOr301(req: RouteRequest): Promise<string | Response> {
    const title = await normalize(req);
    // /{domain}/rest_v1/page/{kind}/{title}/...: the title is the sixth segment, spelt canonically
    // (another spelling of the page is redirected, never cached apart from it).
    const segments = req.path.split('/');
    if (title === req.params.title && segments[5] === titleSegment(title)) return title;
    segments[5] = enc(title);
    const query = req.uri.includes('?') ? req.uri.slice(req.uri.indexOf('?')) : '';
    return { status: 301, headers: { location: `${segments.join('/')}${query}`, 'cache-control': 'max-age=3600' } };
  }

  /** The render a path names: latest, of a revision, or one render by tid (checked to be of that revision). */
  async function renderOf(ctx: RequestContext, req: RouteRequest, title: string): Promise<{ render: BundleRender; kind: keyof CachePolicy }> {
    const { revision, tid } = req.params;
    const force = askedAnew(req, ctx);
    if (tid !== undefined) {
      const render = await renders.renderByTid(ctx, req.domain, title, tid.toLowerCase());
      if (render.rev !== Number(revision)) throw notFound(`Render ${tid} is not of revision ${revision} of ${title}.`, 'render-not-found');
      return { render, kind: 'render' };
    }
    const row = revision === undefined ? await pages.latest(ctx, req.domain, title, force, { renderNext: true }) : await pages.revision(ctx, req.domain, title, Number(revision), force, { renderNext: true });
    return { render: await renders.renderBundle(ctx, req.domain, row, force), kind: revision === undefined ? 'latest' : 'revision' };
  }

  /** A revision that moved to another page: the same rest_v1 URL under its new title. */
  function movedTo(req: RouteRequest, e: RevisionMoved): Response {
    const segments = req.path.split('/');
    segments[5] = enc(e.title);
    return { status: 302, headers: tagged({ location: segments.join('/'), 'cache-control': 'no-cache' }, [surrogateKeys.page(req.domain, req.params.title!)]) };
  }

  function htmlHeaders(domain: string, render: BundleRender, version: HtmlVersion, kind: keyof CachePolicy, language: string): Record<string, string> {
    const headers: Record<string, string> = {
      'content-language': language,
      'content-type': version === '2' ? HTML_2_TYPE : render.types.html,
      'content-encoding': 'gzip',
      etag: `"${render.rev}/${render.tid}"`,
      'last-modified': new Date(tidTime(render.tid)).toUTCString(),
      'cache-control': cache[kind],
      vary: 'Accept',
    };
    if (kind !== 'render') headers['content-location'] = `/${domain}/rest_v1/page/html/${enc(render.title)}/${render.rev}/${render.tid}`;
    return headers;
  }

  const html: Route['handler'] = async (req, ctx) => {
    const asked = req.query.get('stash');
    const stash = asked !== null && asked !== 'false' && asked !== '0';
    if (stash) withinStashRate(ctx);
    const version = negotiateHtml(req.headers.accept, '2');
    const title = await titleOr301(req);
    if (typeof title !== 'string') return title;
    const reuse = answers.reuseOfPage(req.domain, title);
    let found: { render: BundleRender; kind: keyof CachePolicy };
    try {
      found = await renderOf(ctx, req, title);
    } catch (e) {
      if (e instanceof RevisionMoved) return movedTo(req, e);
      throw e;
    }
    const { render, kind } = found;
    const body = version === '2' ? await api.html2(req.domain, render) : render.parts.html;
    const language = (await api.wiki(req.domain).siteInfo()).general.lang;
    // With its surrogate keys: they name the render's page and revision, so they are made once with its headers.
    const headers = markedIfUnchecked(
      api.wiki(req.domain),
      answers.headersFor(render, `rest_v1\u0000${req.domain}\u0000${version}\u0000${kind}`, () =>
        tagged(htmlHeaders(req.domain, render, version, kind, language), contentKeys(req.domain, render.title, render.rev, kind === 'latest')),
      ),
    );
    const note = api.noter(req.domain, render.title);
    note();
    if (render.redirect && req.query.get('redirect') !== 'false') {
      // RESTBase's redirect: 302 to the target's HTML, the redirect page itself in the body.
      return { status: 302, headers: { ...headers, location: `/${req.domain}/rest_v1/page/html/${enc(render.redirect.replace(/ /g, '_'))}` }, body };
    }
    // A stash is counted each time it is asked (above): it is neither answered again from memory
    // nor kept by caches, as RESTBase sent it (no-cache).
    if (stash) return { status: 200, headers: { ...headers, 'cache-control': 'no-cache' }, body };
    return { status: 200, headers, body, reuse: contentReuse(reuse, api.wiki(req.domain), note) };
  };

  const dataParsoid: Route['handler'] = async (req, ctx) => {
    const title = await titleOr301(req);
    if (typeof title !== 'string') return title;
    const { render } = await renderOf(ctx, req, title);
    const body = partOf(render, 'data-parsoid');
    return {
      status: 200,
      headers: tagged(
        { 'content-type': render.types['data-parsoid'], 'content-encoding': 'gzip', etag: `"${render.rev}/${render.tid}"`, 'cache-control': cache.render },
        contentKeys(req.domain, render.title, render.rev, false),
      ),
      body,
    };
  };

  /** RESTBase's revision item. */
  async function revisionItem(ctx: RequestContext, domain: string, row: RevisionRow): Promise<Record<string, unknown>> {
    const wiki = api.wiki(domain);
    const [{ ns }, info] = await Promise.all([wiki.describe(row.title), wiki.siteInfo()]);
    const render = row.tid ? await renders.stored(ctx, domain, row.title, row.tid, row.rev) : undefined;
    return {
      title: row.title, page_id: row.page_id, rev: row.rev, tid: row.tid, namespace: ns,
      user_id: row.user_hidden ? null : row.user_id, user_text: row.user_hidden ? null : row.user_text,
      timestamp: row.timestamp, comment: row.comment_hidden ? null : row.comment, tags: [], restrictions: [],
      page_language: info.general.lang, redirect: !!render?.redirect,
    };
  }

  const revisionAnswer = async (ctx: RequestContext, domain: string, row: RevisionRow, cacheControl: string, latest = false): Promise<Response> => ({
    status: 200,
    headers: tagged(
      { 'cache-control': cacheControl, ...(row.tid ? { etag: `"${row.rev}/${row.tid}"` } : {}) },
      contentKeys(domain, row.title, row.rev, latest),
    ),
    body: { items: [await revisionItem(ctx, domain, row)] },
  });

  const titleMeta: Route['handler'] = async (req, ctx) => {
    const title = await titleOr301(req);
    if (typeof title !== 'string') return title;
    if (req.params.revision === undefined) return revisionAnswer(ctx, req.domain, await pages.latest(ctx, req.domain, title, false), 'no-cache', true);
    try {
      return await revisionAnswer(ctx, req.domain, await pages.revision(ctx, req.domain, title, Number(req.params.revision), false), cache.revision);
    } catch (e) {
      if (!(e instanceof RevisionMoved)) throw e;
      return { status: 302, headers: { location: `/${req.domain}/rest_v1/page/title/${enc(e.title)}/${req.params.revision}`, 'cache-control': 'no-cache' } };
    }
  };

  /** RESTBase's page summary, from the stored latest render (one per tid: renders never change). */
  async function summaryOf(ctx: RequestContext, domain: string, row: RevisionRow, render: Render): Promise<Record<string, unknown>> {
    const key = `${domain}\u0000${render.tid}`;
    const hit = summaries.get(key);
    if (hit) return hit;
    const wiki = api.wiki(domain);
    const [info, described, html, props] = await Promise.all([
      wiki.siteInfo(), wiki.describe(row.title), gunzip(render.parts.html),
      // Extras from extensions the wiki may not have: a summary goes out without them rather than not at all.
      wiki.api.summaryProps(row.title).catch(() => undefined),
    ]);
    const general = info.general as unknown as { server: string; articlepath: string; script: string; mainpage?: string; rtl?: boolean };
    const page = (t: string) => `${general.server}${general.articlepath.replace('$1', enc(t))}`;
    const script = (t: string, action: string) => `${general.server}${general.script}?title=${enc(t)}&action=${action}`;
    const urls = { page: page(row.title), revisions: script(row.title, 'history'), edit: script(row.title, 'edit'), ...(described.talk ? { talk: page(described.talk) } : {}) };
    const lead = leadSummary(html.toString('utf8'), page(row.title));
    const summary: Record<string, unknown> = {
      type: general.mainpage?.replace(/ /g, '_') === row.title ? 'mainpage' : lead.extract ? 'standard' : 'no-extract',
      title: row.title, displaytitle: described.text,
      namespace: { id: described.ns, text: described.nsText },
      titles: { canonical: row.title, normalized: described.text, display: described.text },
      pageid: row.page_id,
      ...(lead.thumbnail ? { thumbnail: lead.thumbnail } : {}),
      ...(props?.image ? { originalimage: props.image } : {}),
      ...(props?.wikibaseItem ? { wikibase_item: props.wikibaseItem } : {}),
      ...(props?.description ? { description: props.description, description_source: 'central' } : {}),
      lang: info.general.lang, dir: general.rtl ? 'rtl' : 'ltr',
      revision: String(row.rev), tid: render.tid, timestamp: row.timestamp,
      content_urls: { desktop: urls, mobile: urls },
      extract: lead.extract, extract_html: lead.extractHtml,
    };
    // Kept per render, unless the extras could not be asked for: the next request asks again.
    if (props) summaries.set(key, summary);
    return summary;
  }

  const summary: Route['handler'] = async (req, ctx) => {
    const title = await titleOr301(req);
    if (typeof title !== 'string') return title;
    const row = await pages.latest(ctx, req.domain, title, false);
    const render = await renders.render(ctx, req.domain, row, false);
    if (render.redirect && req.query.get('redirect') !== 'false') {
      return { status: 302, headers: { location: `/${req.domain}/rest_v1/page/summary/${enc(render.redirect.replace(/ /g, '_'))}`, 'cache-control': cache.latest } };
    }
    return {
      status: 200,
      headers: tagged(
        { 'content-type': SUMMARY_TYPE, etag: `"${render.rev}/${render.tid}"`, 'cache-control': cache.latest },
        contentKeys(req.domain, render.title, render.rev, true),
      ),
      body: await summaryOf(ctx, req.domain, row, render),
    };
  };

  const transformed = (part: { contentType: string; body: Buffer }): Response => ({ status: 200, headers: { 'content-type': part.contentType, 'cache-control': 'no-store' }, body: part.body });

  const toHtml = withBody(toHtmlBody, async (req, ctx) => {
    const body = req.body;
    const target = await targetOf(req, normalize, 'revision');
    if (!body.stash && req.query.get('stash') !== 'true') return transformed(await transforms.toHtml(ctx, req.domain, target, body.wikitext, !!body.body_only));
    withinStashRate(ctx);
    const { part, etag } = await transforms.toStashedHtml(ctx, req.domain, target, body.wikitext, !!body.body_only);
    const answer = transformed(part);
    return etag ? { ...answer, headers: { ...answer.headers, etag } } : answer;
  });

  const toWikitext = withBody(toWikitextBody, async (req, ctx) => {
    const body = req.body;
    const target = await targetOf(req, normalize, 'revision');
    // If-Match names the render the edit started from, as RESTBase's clients send it.
    const ifMatch = req.headers['if-match'] ? renderOfETag(req.headers['if-match']) : undefined;
    // A stash made without a revision (rev 0) may be saved on one.
    if (req.headers['if-match'] && (!ifMatch || (target.revid !== undefined && ifMatch.rev !== target.revid && !(ifMatch.stashed && ifMatch.rev === 0)))) {
      throw new HttpError(400, 'invalid-if-match', `If-Match must be the ETag "{revision}/{tid}" of revision ${target.revid ?? ''}'s HTML.`);
    }
    const where = target.title !== undefined && target.revid === undefined && ifMatch && ifMatch.rev > 0 ? { ...target, revid: ifMatch.rev } : target;
    const original = parseOriginal(body.original);
    return transformed(await transforms.toWikitext(ctx, req.domain, where, body.html, { tid: ifMatch?.tid, stashed: ifMatch?.stashed, dataMw: parseDataMw(body['data-mw']), scrubWikitext: !!body.scrub_wikitext, original }));
  });

  const get = (path: string, handler: Route['handler'], spec: Record<string, unknown>): Route => ({ method: 'GET', path, handler, spec });
  return {
    name: 'rest_v1',
    api: 'rest_v1',
    routes: [
      get('/page/html/{title}', html, restV1Specs.html),
      get('/page/html/{title}/{revision}', html, restV1Specs.htmlRevision),
      get('/page/html/{title}/{revision}/{tid}', html, restV1Specs.htmlTid),
      get('/page/data-parsoid/{title}/{revision}/{tid}', dataParsoid, restV1Specs.dataParsoid),
      get('/page/title/{title}', titleMeta, restV1Specs.title),
      get('/page/title/{title}/{revision}', titleMeta, restV1Specs.titleRevision),
      get(
        '/page/revision/{revision}',
        async (req, ctx) => revisionAnswer(ctx, req.domain, await pages.byId(ctx, req.domain, Number(req.params.revision)), cache.revision),
        restV1Specs.revision,
      ),
      get('/page/summary/{title}', summary, restV1Specs.summary),
      ...threePaths('/transform/wikitext/to/html', 'revision', toHtml, restV1Specs.toHtml),
      ...threePaths('/transform/html/to/wikitext', 'revision', toWikitext, restV1Specs.toWikitext),
    ],
  };
}

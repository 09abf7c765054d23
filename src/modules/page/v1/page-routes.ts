import { HttpError, badRequest } from '../../../util/errors.js';
import { pagingFrom } from '../../../router/paging.js';
import type { Module, RequestContext, Response, Reuse, RouteRequest } from '../../../router/types.js';
import { validityOf } from '../../../storage/answer-validity.js';
import { parseTime, tidTime } from '../../../util/tid.js';
import { askedAnew, type CachePolicy } from '../model/cache-control.js';
import { HTML_2_TYPE, negotiateHtml, type Html2Cache } from '../model/html-versions.js';
import { sectionHtml, sectionWikitext } from '../model/sections.js';
import { markedIfUnchecked } from '../model/stale-answer.js';
import { contentKeys, tagged } from '../model/surrogate-keys.js';
import { titledHandler } from '../model/titled-handler.js';
import { titleSegment, type NormalizeTitle } from '../model/title-url.js';
import { contentReuse, type PageCaches, type PageReuse } from '../read/page-caches.js';
import type { PageService } from '../read/page-service.js';
import { revisionMetadata, type RevisionRow } from '../model/revision.js';
import { propOf, propRender, PROPS, type Prop, type PropRender, type RenderHead, type StoredPart } from '../model/render.js';
import { pageSpecs, REVID } from '../model/page-spec.js';
import { gunzip } from '../../../util/compression.js';
import { workGate } from '../../../util/concurrency-limit.js';

/** The route's schema admits only these (see v1/spec.ts). */
const asProp = (prop: string) => prop as Prop;

/**
 * A latest listing is made from one stored answer (and whether the stored pages are all the wiki's,
 * asked again every few seconds): sent again while that answer holds, for a second at most.
 */
function listingReuse(listing: object): Reuse | undefined {
  const validity = validityOf(listing);
  return validity && { until: Math.min(validity.until, Date.now() + LISTING_REUSE_MS), valid: validity.valid };
}
const LISTING_REUSE_MS = 1000;

/** Which URL of content answers: the latest, a revision's, or one render's (by tid). */
type ContentKind = keyof CachePolicy;

/** How a property is sent: as stored, or (HTML) in 2.x form with data-mw inline, asked by profile or query. */
type Form = 'stored' | '2-by-profile' | '2-by-query';

function contentHeaders(domain: string, render: RenderHead, prop: Prop, type: string, kind: ContentKind, cache: CachePolicy, form: Form, language: string): Record<string, string> {
  const byTid = kind === 'render';
  const headers: Record<string, string> = {
    'content-type': form === 'stored' ? type : HTML_2_TYPE,
    'content-encoding': 'gzip',
    etag: `"${render.rev}/${render.tid}"`,
    'last-modified': new Date(tidTime(render.tid)).toUTCString(),
    'cache-control': cache[kind],
  };
  if (!byTid) headers['content-location'] = `/${domain}/v1/page/${titleSegment(render.title)}/${prop}/${render.tid}${form === '2-by-query' ? '?data-mw=inline' : ''}`;
  if (prop === 'html') headers.vary = 'Accept';
  if (prop === 'html' || prop === 'wikitext') headers['content-language'] = language;
  if (render.redirect) {
    // Redirects are not followed: the page is served, and says where it points.
    headers['x-mediawiki-redirect'] = encodeURIComponent(render.redirect);
    headers.link = `</${domain}/v1/page/${titleSegment(render.redirect.replace(/ /g, '_'))}/${prop}>; rel="mw:PageProp/redirect"`;
  }
  return headers;
}

/** What the read routes are served from. */
export interface PageReadParts {
  service: Pick<PageService, 'close' | 'createTables' | 'keepSiteInfo' | 'listings' | 'reads' | 'renderer' | 'revisions' | 'wiki'>;
  caches: PageCaches;
  cache: CachePolicy;
  html2: Html2Cache;
  normalize: NormalizeTitle;
}

/**
 * `/{domain}/v1/page/...` and `/v1/revision/...`: the stored content by title, revision, render
 * and time (saves and transforms: edit/edit-module.ts; drafts: drafts/branch-routes.ts).
 */
export function pageReadModule({ service, caches, cache, html2, normalize }: PageReadParts): Module {
  /** How a property is sent: HTML in 2.x form (data-mw inline) for a 2.x profile or ?data-mw=inline, else as stored. */
  function formOf(req: RouteRequest, prop: Prop): Form {
    if (prop !== 'html') return 'stored';
    if (req.query.get('data-mw') === 'inline') return '2-by-query';
    return negotiateHtml(req.headers.accept, '999') === '2' ? '2-by-profile' : 'stored';
  }

  /** Whether a read sends its property whole and as stored: then that property alone is read (`StoredPart`). */
  const sentAsStored = (req: RouteRequest, prop: Prop) => req.query.get('section') === null && formOf(req, prop) === 'stored';

  /**
   * A render's property as the client asked for it (`formOf`), or one of its sections. A
   * `StoredPart` (read alone, where `sentAsStored`) is sent as it is. Headers are built once per
   * render and form.
   */
  async function content(req: RouteRequest, found: PropRender | StoredPart, kind: ContentKind, reuse: PageReuse): Promise<Response> {
    const { render, prop } = found;
    const form = formOf(req, prop);
    let sent: { body: Buffer; type: string };
    if ('body' in found) sent = found;
    else {
      const section = req.query.get('section');
      if (section !== null) return sectionContent(req, found, kind, Number(section));
      const stored = propOf(found);
      sent = { body: form === 'stored' ? stored.body : await html2.of(req.domain, found.render), type: stored.type };
    }
    const language = (await service.wiki(req.domain).siteInfo()).general.lang;
    // The surrogate keys too: they name the render's page and revision, so they are made with its headers.
    const build = () => tagged(contentHeaders(req.domain, render, prop, sent.type, kind, cache, form, language), contentKeys(req.domain, render.title, render.rev, kind === 'latest'));
    // A head read for this answer alone is never seen again: its headers are not kept against it.
    const headers = 'oneOff' in found ? build() : caches.headersFor(render, `${req.domain}\u0000${prop}\u0000${kind}\u0000${form}`, build);
    const note = service.reads.noter(req.domain, render.title);
    note();
    const wiki = service.wiki(req.domain);
    return { status: 200, headers: markedIfUnchecked(wiki, headers), body: sent.body, reuse: contentReuse(reuse, wiki, note) };
  }

  /** The render a revision's property is sent from: that property alone where it is sent as stored and stored (see RenderStore.part), else the whole render, made on a miss. */
  async function renderOf(req: RouteRequest, ctx: RequestContext, row: RevisionRow, prop: Prop): Promise<PropRender | StoredPart> {
    const force = askedAnew(req, ctx);
    const part = !force && sentAsStored(req, prop) ? await service.renderer.storedPart(ctx, req.domain, row, prop) : undefined;
    return part ?? service.renderer.renderFor(ctx, req.domain, row, force, prop);
  }

  /**
   * One section of a render: its HTML (2.x, data-mw inline, so it stands on its own) or its
   * wikitext, cut at the source range Parsoid recorded for it; without data-parsoid (the core
   * REST API) the wiki cuts the wikitext itself.
   */
  async function sectionContent(req: RouteRequest, found: PropRender, kind: ContentKind, id: number): Promise<Response> {
    return sectionTurn(req.domain, () => cutSection(req, found, kind, id));
  }

  async function cutSection(req: RouteRequest, found: PropRender, kind: ContentKind, id: number): Promise<Response> {
    const { render } = found;
    if (found.prop !== 'html' && found.prop !== 'wikitext') throw badRequest('A section is read as html or wikitext.', 'section-of-property');
    const html2x = await html2.textOf(req.domain, render);
    const notFound = () => new HttpError(404, 'section-not-found', `${render.title} (revision ${render.rev}) has no editable section ${id}.`);
    let body: string | undefined;
    let type = HTML_2_TYPE;
    if (found.prop !== 'wikitext') body = sectionHtml(html2x, id);
    else {
      const whole = found.render;
      type = whole.types.wikitext;
      if (whole.types['data-parsoid'] === '') body = sectionHtml(html2x, id) && (await service.wiki(req.domain).api.sectionWikitext(render.rev, id));
      else body = sectionWikitext(html2x, JSON.parse((await gunzip(whole.parts['data-parsoid'])).toString('utf8')), await gunzip(whole.parts.wikitext), id);
    }
    if (body === undefined) throw notFound();
    const headers = {
      'content-type': type,
      etag: `"${render.rev}/${render.tid}"`,
      'cache-control': cache[kind],
    };
    const keys = contentKeys(req.domain, render.title, render.rev, kind === 'latest');
    return { status: 200, headers: tagged(markedIfUnchecked(service.wiki(req.domain), headers), keys), body };
  }

  /**
   * Sections cut at once by this process, and waiting to be: a section of a long article holds its
   * whole 2.x HTML, and for wikitext its data-parsoid parsed (tens of MB for an article of 800 KB):
   * a thousand section numbers asked at once ran a 128 MB heap out. Past those waiting, a 503.
   */
  const sectionTurn = workGate(2, 256, 'sections-busy', 'sections');

  const withTitle = titledHandler(normalize);

  /** The revision whose content is asked for: rendered next, so a miss starts rendering early. */
  const latestOrAt = async (req: RouteRequest, ctx: RequestContext, title: string): Promise<RevisionRow> => {
    const ts = req.query.get('ts');
    if (ts !== null) return service.revisions.revisionAt(ctx, req.domain, title, parseTime(ts));
    return service.revisions.latest(ctx, req.domain, title, askedAnew(req, ctx), service.renderer);
  };

  return {
    name: 'page',
    api: 'v1',
    tables: ['page_revisions', 'page_changes', 'parsoid', 'site_info', 'page_render_leases'],
    // Site info is kept in storage from the start, for every wiki as it is made.
    setup: async (ctx) => service.keepSiteInfo(ctx),
    setupWiki: (ctx, domain) => service.createTables(ctx, domain),
    close: () => service.close(),
    routes: [
      {
        method: 'GET',
        path: '/page/',
        spec: pageSpecs.listPages,
        handler: async (req, ctx) => {
          const ts = req.query.get('ts');
          const body = await service.listings.listPages(ctx, req.domain, pagingFrom(req), ts === null ? undefined : parseTime(ts));
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body, reuse: listingReuse(body) };
        },
      },
      {
        method: 'GET',
        path: '/page/{title}',
        spec: pageSpecs.pageRedirect,
        handler: withTitle(async (_req, _ctx, title) => ({ status: 302, headers: { location: `${titleSegment(title)}/html`, 'cache-control': 'max-age=3600' } })),
      },
      {
        method: 'GET',
        path: '/page/{title}/',
        spec: pageSpecs.listProperties,
        handler: withTitle(async (req, ctx, title) => {
          await service.revisions.latest(ctx, req.domain, title, false);
          return { status: 200, body: { items: [...PROPS, 'rev'] } };
        }),
      },
      {
        method: 'GET',
        path: '/page/{title}/rev/',
        spec: pageSpecs.history,
        handler: withTitle(async (req, ctx, title) => {
          const { limit, next } = pagingFrom(req);
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body: await service.revisions.history(ctx, req.domain, title, limit ?? 20, next) };
        }),
      },
      {
        method: 'GET',
        path: '/page/{title}/rev/{revid}',
        spec: pageSpecs.revisionMetadata,
        handler: withTitle(async (req, ctx, title) => {
          const row = await service.revisions.revision(ctx, req.domain, title, Number(req.params.revid), askedAnew(req, ctx));
          const keys = contentKeys(req.domain, title, row.rev, false);
          return { status: 200, headers: tagged({ 'cache-control': cache.revision }, keys), body: revisionMetadata(row) };
        }),
      },
      {
        method: 'GET',
        path: '/page/{title}/{prop}',
        spec: pageSpecs.latest,
        handler: withTitle(async (req, ctx, title) => {
          const prop = asProp(req.params.prop!);
          const reuse = caches.reuseOfPage(req.domain, title);
          const row = await latestOrAt(req, ctx, title);
          return content(req, await renderOf(req, ctx, row, prop), req.query.has('ts') ? 'revision' : 'latest', reuse);
        }),
      },
      {
        method: 'GET',
        path: '/page/{title}/{prop}/',
        spec: pageSpecs.listRenders,
        handler: withTitle(async (req, ctx, title) => {
          await service.revisions.latest(ctx, req.domain, title, false);
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body: await service.listings.listRenders(ctx, req.domain, title, pagingFrom(req)) };
        }),
      },
      {
        method: 'GET',
        path: '/page/{title}/{prop}/{revision}',
        spec: pageSpecs.byRevision,
        handler: withTitle(async (req, ctx, title) => {
          const prop = asProp(req.params.prop!);
          const revision = req.params.revision!;
          const reuse = caches.reuseOfPage(req.domain, title);
          if (REVID.test(revision)) {
            const row = await service.revisions.revision(ctx, req.domain, title, Number(revision), askedAnew(req, ctx), service.renderer);
            return content(req, await renderOf(req, ctx, row, prop), 'revision', reuse);
          }
          const tid = revision.toLowerCase();
          const part = sentAsStored(req, prop) ? await service.renderer.partByTid(ctx, req.domain, title, tid, prop) : undefined;
          return content(req, part ?? propRender(await service.renderer.renderByTid(ctx, req.domain, title, tid), prop), 'render', reuse);
        }),
      },
      {
        method: 'GET',
        path: '/revision/{revid}',
        spec: pageSpecs.revisionLookup,
        handler: async (req, ctx) => {
          const body = await service.revisions.lookupRevision(ctx, req.domain, Number(req.params.revid));
          const keys = contentKeys(req.domain, body.title, body.rev, false);
          return { status: 200, headers: tagged({ 'cache-control': cache.revision }, keys), body: revisionMetadata(body) };
        },
      },
    ],
  };
}

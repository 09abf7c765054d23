import { createHash } from 'node:crypto';
import { HttpError } from '../../util/errors.js';
import { tidTime } from '../../util/tid.js';
import type { Module, RequestContext, Response, Route, RouteRequest } from '../../router/types.js';
import { gunzip, gzip } from '../../util/compression.js';
import { pageObject, rawUrlEncode, revisionObject, titleStyleEncode, wikiRestUrl } from './bodies.js';
import { MediaWikiError, withinStashLimit } from './errors.js';
import { passToWiki } from './pass-through.js';
import { restPhpWrites } from './writes.js';
import { HTML_2_TYPE, PageMoved, RevisionMoved, askedAnew, contentKeys, contentReuse, negotiateHtml, tagged, titleSegment, type BundleRender, type CachePolicy, type PageDoor as PageApi, type PageReuse, type Render, type RevisionRow } from '../../modules/page/door.js';

/** The largest integer PHP reads (64-bit): MediaWiki's integer parameters past it are not integers. */
const PHP_INT_MAX = 2n ** 63n - 1n;

/** What a `page/` or `revision/` route answers: source and metadata, metadata, HTML, or both. */
type Form = 'source' | 'bare' | 'html' | 'with_html';
const SUFFIX: Record<Form, string> = { source: '', bare: '/bare', html: '/html', with_html: '/with_html' };
const FLAVORS = new Set(['view', 'edit', 'fragment', 'stash']);

/** How long a request passed on to the wiki may take (a transform of a long page takes a while). */
const PASS_THROUGH_TIMEOUT_MS = 120_000;

const paramInvalid = (name: string, value: string, code: string, message: string) =>
  new MediaWikiError(400, `paramvalidator-${code}`, message, { error: 'parameter-validation-failed', name, value, failureCode: code, failureData: null });

/** `flavor` as MediaWiki 1.43 takes it (`stash=true`, the older spelling, is the stash flavor). */
function flavorOf(req: RouteRequest): string {
  const flavor = req.query.get('flavor') ?? (req.query.get('stash') === 'true' ? 'stash' : 'view');
  if (!FLAVORS.has(flavor)) throw paramInvalid('flavor', flavor, 'badvalue', `Unrecognized value for parameter "flavor": ${flavor}.`);
  return flavor;
}

/** The body's content alone, for `flavor=fragment` (HTML to put into another document). */
function fragmentOf(html: string): string {
  const open = /<body\b[^>]*>/i.exec(html);
  const close = html.lastIndexOf('</body>');
  return open && close > open.index ? html.slice(open.index + open[0].length, close) : html;
}

const strongTag = (...parts: (string | number | boolean | null)[]) => `"${createHash('sha1').update(parts.join('\u0000')).digest('hex')}"`;

/**
 * `/{domain}/rest.php/v1/...`: MediaWiki's own REST API (core's `page/` and `revision/` routes,
 * in the shapes of MediaWiki 1.43), answered from the stored renders and revisions, so a proxy
 * that sends the wiki's `rest.php/v1/page/`, `/revision/` and `/transform/` here serves today's
 * clients unchanged. Saves and transforms are the service's too (writes.ts); what it does not
 * answer itself under those prefixes (history, language links, compare, routes of extensions,
 * content models other than wikitext) goes to the wiki unchanged.
 */
export function restPhpModule(api: PageApi): Module {
  const { normalize, cache, pages, renders, answers } = api;

  /** The stored latest revision of a page, as MediaWiki names its absence. */
  async function latestOf(ctx: RequestContext, req: RouteRequest, title: string): Promise<RevisionRow | { movedTo: string }> {
    try {
      return await pages.latest(ctx, req.domain, title, askedAnew(req, ctx), { renderNext: true });
    } catch (e) {
      if (e instanceof PageMoved) return { movedTo: e.target };
      if (e instanceof HttpError && e.status === 404) throw new MediaWikiError(404, 'rest-nonexistent-title', `The specified page (${title}) does not exist`);
      throw e;
    }
  }

  async function revisionById(ctx: RequestContext, req: RouteRequest): Promise<RevisionRow> {
    const id = req.params.id!;
    // MediaWiki reads the id as PHP's integer (a sign allowed): past its largest, not an integer at all.
    if (!/^[-+]?\d+$/.test(id) || BigInt(id) > PHP_INT_MAX || BigInt(id) < -PHP_INT_MAX - 1n) throw paramInvalid('id', id, 'badinteger', `Invalid value "${id}" for integer parameter "id".`);
    const missing = () => new MediaWikiError(404, 'rest-nonexistent-revision', `The specified revision (${BigInt(id)}) does not exist`);
    // An integer no revision can have (ids are positive; storage keeps them exact up to 2^53).
    if (!Number.isSafeInteger(Number(id)) || Number(id) < 1) throw missing();
    try {
      return await pages.byId(ctx, req.domain, Number(id));
    } catch (e) {
      if (e instanceof HttpError && e.status === 404) throw missing();
      throw e;
    }
  }

  /** The size of a revision's parent, for `delta`: stored, else asked of the wiki; null for a first revision. */
  async function parentSize(ctx: RequestContext, domain: string, row: RevisionRow): Promise<number | null> {
    if (!row.parent_id) return null;
    const stored = await pages.stored(ctx, domain, row.title, row.parent_id);
    if (stored?.size !== undefined && stored.size !== null) return stored.size;
    const page = await api.wiki(domain).api.revision(row.parent_id).catch(() => undefined);
    return page?.revisions?.[0]?.size ?? null;
  }

  /**
   * The render of a revision: with its wikitext (`source`), or its page bundle alone, answered
   * before the wikitext a cold miss fetches next has come (a miss waits for Parsoid alone).
   */
  async function renderOf(ctx: RequestContext, req: RouteRequest, row: RevisionRow, withWikitext: true): Promise<Render>;
  async function renderOf(ctx: RequestContext, req: RouteRequest, row: RevisionRow, withWikitext: false): Promise<BundleRender>;
  async function renderOf(ctx: RequestContext, req: RouteRequest, row: RevisionRow, withWikitext: boolean): Promise<BundleRender> {
    try {
      const force = askedAnew(req, ctx);
      return await (withWikitext ? renders.render(ctx, req.domain, row, force) : renders.renderBundle(ctx, req.domain, row, force));
    } catch (e) {
      if (e instanceof HttpError && e.status === 403) throw new MediaWikiError(403, 'rest-permission-denied-revision', `Access to revision ${row.rev} of ${row.title} is denied: its text is hidden.`);
      throw e;
    }
  }

  /** The HTML of a render in the form and flavor asked for, as a string (for `with_html`) or bytes. */
  async function htmlOf(req: RouteRequest, render: BundleRender, flavor: string): Promise<{ gzipped: Buffer; type: string }> {
    const version = negotiateHtml(req.headers.accept, '2');
    const stored = version === '2' ? await api.html2(req.domain, render) : render.parts.html;
    const type = version === '2' ? HTML_2_TYPE : render.types.html;
    if (flavor !== 'fragment') return { gzipped: stored, type };
    return { gzipped: await gzip(Buffer.from(fragmentOf((await gunzip(stored)).toString('utf8')))), type };
  }

  /**
   * The page or revision answer in one form: JSON (`source`, `bare`, `with_html`) or HTML. With
   * `reuse` (the page's state as it was before it was read), the same request is answered again
   * from memory while nothing it was made from changed.
   */
  async function answer(ctx: RequestContext, req: RouteRequest, row: RevisionRow, form: Form, latest: boolean, reuse?: PageReuse, bundle?: BundleRender): Promise<Response> {
    const wiki = api.wiki(req.domain);
    const flavor = form === 'html' || form === 'with_html' ? flavorOf(req) : 'view';
    if (flavor === 'stash') await withinStashLimit(api, req, ctx);
    const note = api.noter(req.domain, row.title);
    note();
    const reused = reuse && flavor !== 'stash' ? { reuse: contentReuse(reuse, wiki, note) } : {};
    const [info, described] = await Promise.all([wiki.siteInfo(), wiki.describe(row.title)]);
    // Every form names a redirect's target, so every form needs the render (which holds it).
    const render = form === 'source' ? await renderOf(ctx, req, row, true) : (bundle ?? (await renderOf(ctx, req, row, false)));
    const route = latest ? `/page/${rawUrlEncode(described.text)}` : `/revision/${row.rev}`;
    const kind: keyof CachePolicy = latest ? 'latest' : 'revision';
    const headers: Record<string, string> = {
      'cache-control': flavor === 'stash' ? 'private, no-cache' : cache[kind],
      'content-language': info.general.lang,
      vary: 'Accept, Accept-Language, x-restbase-compat',
    };
    const keys = contentKeys(req.domain, row.title, row.rev, latest);
    if (form === 'html') {
      const html = await htmlOf(req, render, flavor);
      return {
        status: 200,
        headers: tagged({
          ...headers, 'content-type': html.type, 'content-encoding': 'gzip',
          etag: `"${row.rev}/${render.tid}/${flavor}/html"`, 'last-modified': new Date(tidTime(render.tid)).toUTCString(),
        }, keys),
        body: html.gzipped,
        ...reused,
      };
    }
    const object = latest ? pageObject(row, described.text, info) : revisionObject(row, described.text, info, await parentSize(ctx, req.domain, row));
    if (form === 'source') object.source = (await gunzip((render as Render).parts.wikitext)).toString('utf8');
    if (form === 'bare') object.html_url = wikiRestUrl(info, `${route}/html`);
    if (form === 'with_html') object.html = (await gunzip((await htmlOf(req, render, flavor)).gzipped)).toString('utf8');
    if (render.redirect) object.redirect_target = wikiRestUrl(info, `/page/${rawUrlEncode(render.redirect)}${SUFFIX[form]}`);
    const etag = form === 'with_html'
      ? `"${row.rev}/${render.tid}/${flavor}/with_html"`
      : strongTag(form, row.rev, render.tid, !!row.user_hidden, !!row.comment_hidden, info.rightsinfo?.url ?? '');
    return {
      status: 200,
      headers: tagged({ ...headers, 'content-type': 'application/json', etag, ...(row.timestamp ? { 'last-modified': new Date(row.timestamp).toUTCString() } : {}) }, keys),
      // As bytes at once: the page's HTML or wikitext as a JS string (twice its size, beyond ASCII)
      // is then let go here, not held by the answer while it is compressed and written. Held so,
      // a hundred long articles' `with_html` asked at once ran a 128 MB heap out.
      body: Buffer.from(JSON.stringify(object)),
      ...reused,
    };
  }

  /** The same URL with another title segment (after `page/`), its suffix and query kept. */
  function withTitle(req: RouteRequest, title: string, form: Form): string {
    const query = req.uri.includes('?') ? req.uri.slice(req.uri.indexOf('?')) : '';
    return `/${req.domain}/rest.php/v1/page/${titleSegment(title)}${SUFFIX[form]}${query}`;
  }

  const pageRoute = (form: Form): Route['handler'] => async (req, ctx) => {
    if (req.params.title === '') throw paramInvalid('title', '', 'missingparam', 'The "title" parameter must be set.');
    const title = await normalize(req).catch((e: unknown) => {
      // MediaWiki looks an invalid title up as it would any other, and finds no such page.
      if (e instanceof HttpError && e.status === 400) throw new MediaWikiError(404, 'rest-nonexistent-title', `The specified page (${req.params.title}) does not exist`);
      throw e;
    });
    // Another spelling of the title: MediaWiki's 301 to the canonical one (caches keep one copy),
    // once the page is found: a page that does not exist is a 404 under any spelling (1.43). The
    // title with spaces for underscores is answered as it is: MediaWiki links to that form itself
    // (`html_url`), 1.39 answers it, and its URLs are purged beside the canonical ones.
    if (req.params.title !== title && req.params.title!.replace(/ /g, '_') !== title) {
      await latestOf(ctx, req, title);
      return { status: 301, headers: { location: withTitle(req, title, form), 'cache-control': 'max-age=3600' } };
    }
    const reuse = answers.reuseOfPage(req.domain, title);
    const found = await latestOf(ctx, req, title);
    const followsRedirects = (form === 'html' || form === 'with_html') && !['no', 'false', '0'].includes(req.query.get('redirect') ?? '');
    if ('movedTo' in found) {
      if (followsRedirects) return { status: 307, headers: { location: withTitle(req, found.movedTo, form), 'cache-control': 'no-cache' } };
      throw new MediaWikiError(404, 'rest-nonexistent-title', `The specified page (${title}) does not exist`);
    }
    let bundle: BundleRender | undefined;
    if (followsRedirects) {
      bundle = await renderOf(ctx, req, found, false);
      // A wiki redirect: 307 to its target's same route (MediaWiki 1.43); `redirect=no` serves the redirect page itself.
      if (bundle.redirect) return { status: 307, headers: tagged({ location: withTitle(req, bundle.redirect.replace(/ /g, '_'), form), 'cache-control': cache.latest }, contentKeys(req.domain, title, found.rev, true)) };
    }
    return answer(ctx, req, found, form, true, reuse, bundle);
  };

  const revisionRoute = (form: Form): Route['handler'] => async (req, ctx) => {
    try {
      return await answer(ctx, req, await revisionById(ctx, req), form, false);
    } catch (e) {
      if (e instanceof RevisionMoved) return answer(ctx, req, await pages.byId(ctx, req.domain, Number(req.params.id)), form, false);
      throw e;
    }
  };

  const passThrough: Route['handler'] = (req) => passToWiki(api.wiki(req.domain).restBase, req, PASS_THROUGH_TIMEOUT_MS);

  const spec = (summary: string, param: 'title' | 'id') => ({
    summary,
    tags: ['MediaWiki REST API'],
    parameters: [
      { name: param, in: 'path', required: true, schema: { type: 'string' } },
      ...(param === 'title' ? [{ name: 'redirect', in: 'query', schema: { type: 'string' } }] : []),
      { name: 'flavor', in: 'query', schema: { type: 'string' } },
    ],
  });
  const forms: Form[] = ['source', 'bare', 'html', 'with_html'];
  const pageAnswer = async (req: RouteRequest, ctx: RequestContext, title: string) => {
    const row = await latestOf(ctx, req, title);
    if ('movedTo' in row) throw new MediaWikiError(404, 'rest-nonexistent-title', `The specified page (${title}) does not exist`);
    return answer(ctx, req, row, 'source', true);
  };
  /** Where MediaWiki says a page it created is: the wiki's own URL of its `page/{title}`. */
  const createdAt = async (domain: string, title: string) => wikiRestUrl(await api.wiki(domain).siteInfo(), `/page/${titleStyleEncode(title)}`);
  const own: Route[] = [
    ...forms.map((form): Route => ({ method: 'GET', path: `/page/{title}${SUFFIX[form]}`, handler: pageRoute(form), emptyParams: true, spec: spec(`A page's latest revision: ${form === 'source' ? 'source and metadata' : form}`, 'title') })),
    ...forms.map((form): Route => ({ method: 'GET', path: `/revision/{id}${SUFFIX[form]}`, handler: revisionRoute(form), emptyParams: true, spec: spec(`A revision: ${form === 'source' ? 'source and metadata' : form}`, 'id') })),
    ...restPhpWrites(api, { pageAnswer, createdAt }, passThrough),
  ];
  // Everything else below these prefixes is the wiki's to answer, exactly as it would.
  const taken = new Set(own.map((r) => `${r.method} ${r.path}`));
  const passed = ['/page', '/page/', '/page/*', '/revision/', '/revision/*', '/transform/', '/transform/*']
    .flatMap((path) => ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].map((method): Route => ({ method, path, handler: passThrough, body: 'raw' })))
    .filter((r) => !taken.has(`${r.method} ${r.path}`));
  return { name: 'rest_php', api: 'rest.php/v1', routes: [...own, ...passed] };
}

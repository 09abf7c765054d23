import type { Module, RequestContext, Response, RouteRequest } from '../../../router/types.js';
import { askedAnew, type CachePolicy } from '../model/cache-control.js';
import { pageSpecs, REVID } from '../model/page-spec.js';
import type { BundleRender } from '../model/render.js';
import { markedIfUnchecked } from '../model/stale-answer.js';
import { contentKeys, surrogateKeys, tagged } from '../model/surrogate-keys.js';
import { titledHandler } from '../model/titled-handler.js';
import type { NormalizeTitle } from '../model/title-url.js';
import { contentReuse, type PageCaches, type PageReuse } from '../read/page-caches.js';
import type { PageService } from '../read/page-service.js';
import { displayOptions, type DisplayPages } from './display-pages.js';
import type { DisplayOptions } from './display-pass.js';
import type { LinkStates } from './link-states.js';

export interface DisplayParts {
  service: Pick<PageService, 'renderer' | 'revisions' | 'wiki'>;
  caches: PageCaches;
  cache: CachePolicy;
  display: DisplayPages;
  linkStates: LinkStates;
  normalize: NormalizeTitle;
}

/**
 * `/{domain}/v1/page/{title}/display[/{revision}]`: a render's display HTML (links marked by the
 * state of their targets, images as the wiki's lists say), with the link tables it is kept by.
 */
export function displayModule({ service, caches, cache, display, linkStates, normalize }: DisplayParts): Module {
  const withTitle = titledHandler(normalize);

  /**
   * Made from the stored render, never a new one, with the link states of today, so every form of
   * it must be revalidated and is purged when a linked page changes.
   */
  async function displayAnswer(req: RouteRequest, ctx: RequestContext, render: BundleRender, kind: keyof CachePolicy, options: DisplayOptions, reuse: PageReuse): Promise<Response> {
    const answer = await display.of(ctx, req.domain, render, options, kind === 'latest');
    const headers: Record<string, string> = {
      'content-type': 'text/html; charset=utf-8',
      'content-encoding': 'gzip',
      etag: `W/"${render.rev}/${render.tid}/${answer.digest}"`,
      'cache-control': cache.latest,
      'content-language': (await service.wiki(req.domain).siteInfo()).general.lang,
    };
    const keys = [...contentKeys(req.domain, render.title, render.rev, kind === 'latest'), surrogateKeys.display(req.domain, render.title), surrogateKeys.displays(req.domain)];
    const wiki = service.wiki(req.domain);
    // Sent again while the page is unchanged and the display is what its links' states made it.
    const again = contentReuse(reuse, wiki, () => {}, () => display.isCurrent(answer));
    return { status: 200, headers: tagged(markedIfUnchecked(wiki, headers), keys), body: answer.body, reuse: again };
  }

  return {
    name: 'page-display',
    api: 'v1',
    tables: ['page_links', 'link_states'],
    setupWiki: (ctx, domain) => linkStates.create(ctx, domain),
    routes: [
      {
        method: 'GET',
        path: '/page/{title}/display',
        spec: pageSpecs.display,
        handler: withTitle(async (req, ctx, title) => {
          const options = displayOptions(req.query); // a bad option is a 400 before any work
          const reuse = caches.reuseOfPage(req.domain, title);
          const row = await service.revisions.latest(ctx, req.domain, title, askedAnew(req, ctx), service.renderer);
          return displayAnswer(req, ctx, await service.renderer.renderBundle(ctx, req.domain, row, askedAnew(req, ctx)), 'latest', options, reuse);
        }),
      },
      {
        method: 'GET',
        path: '/page/{title}/display/{revision}',
        spec: pageSpecs.displayRevision,
        handler: withTitle(async (req, ctx, title) => {
          const options = displayOptions(req.query);
          const revision = req.params.revision!;
          const reuse = caches.reuseOfPage(req.domain, title);
          if (REVID.test(revision)) {
            const row = await service.revisions.revision(ctx, req.domain, title, Number(revision), askedAnew(req, ctx), service.renderer);
            return displayAnswer(req, ctx, await service.renderer.renderBundle(ctx, req.domain, row, askedAnew(req, ctx)), 'revision', options, reuse);
          }
          return displayAnswer(req, ctx, await service.renderer.renderByTid(ctx, req.domain, title, revision.toLowerCase()), 'render', options, reuse);
        }),
      },
    ],
  };
}

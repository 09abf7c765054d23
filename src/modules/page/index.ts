import type { RequestContext, RouteRequest } from '../../router/types.js';
import { PageSaver } from './edit/page-saver.js';
import { saveRecordsModule } from './edit/save-records.js';
import { pageEditModule } from './edit/edit-module.js';
import { Transforms } from './edit/transforms.js';
import { BAD_IMAGE_LIST, ImageListPage, NOVIEWER_IMAGE_LIST } from './display/image-lists.js';
import { PageImages } from './display/page-images.js';
import { DisplayPages } from './display/display-pages.js';
import { displayModule } from './display/display-routes.js';
import { LinkStates } from './display/link-states.js';
import { DisplayChanges } from './display/display-changes.js';
import { followerModule } from './follow/follower-module.js';
import { changeNoticesModule } from './follow/change-notices.js';
import { changeStreams } from './follow/change-stream.js';
import { snapshotModule } from './snapshot/snapshot-routes.js';
import { BodiesOnRender } from './snapshot/bodies-on-render.js';
import { PageFactsStore } from './read/facts-store.js';
import { enterpriseReads } from './enterprise/enterprise-reads.js';
import { SnapshotShelf } from './enterprise/snapshot-shelf.js';
import { snapshotScheduleModule } from './enterprise/snapshot-schedule.js';
import { PAGE_THREAD_IDLE_MS, workerFormatter } from './thread/page-thread.js';
import type { PageMove } from './follow/change-plan.js';
import { BranchCallers } from './drafts/branch-callers.js';
import { WikiCallers } from './edit/wiki-callers.js';
import { forwardedCredentials } from './edit/save-routes.js';
import { BranchExpirySweep } from './drafts/branch-expiry-sweep.js';
import { branchRecordsModule } from './drafts/branch-records.js';
import { branchRoutesModule } from './drafts/branch-routes.js';
import { Branches } from './drafts/branches.js';
import { VersionBodies } from './drafts/version-bodies.js';
import { cachePolicy } from './model/cache-control.js';
import { Html2Cache } from './model/html-versions.js';
import type { PageApi, PageModuleOptions } from './page-api.js';
import type { PageDoor } from './door.js';
import { PageCaches, type RenderCacheCounts } from './read/page-caches.js';
import { PageService } from './read/page-service.js';
import { SaveLocks } from './tables/save-locks.js';
import { BoundedMap } from '../../util/bounded-map.js';
import { pageReadModule } from './v1/page-routes.js';

export type { PageApi, PageModuleOptions } from './page-api.js';

/** The render cache's counts as metrics, each outcome's series bound once. */
function renderCacheCounts(metrics: PageModuleOptions['metrics']): RenderCacheCounts {
  const [hit, miss] = [metrics.renderCacheReads.labels('hit'), metrics.renderCacheReads.labels('miss')];
  const [kept, refused] = [metrics.renderCacheOffers.labels('kept'), metrics.renderCacheOffers.labels('refused')];
  return { sought: (found) => (found ? hit : miss).inc(), offered: (isKept) => (isKept ? kept : refused).inc() };
}

/**
 * The page module's parts, put together: the read side (`read/`, `v1/`), the edit side (`edit/`:
 * saves and transforms, and `/{domain}/sys/page_saves/...`, the steps of a save's transaction),
 * and the change follower (`follow/`). rest_v1 (`rest-v1/`) builds on what this returns.
 */
export function pageModules(options: PageModuleOptions): PageApi {
  const caches = new PageCaches({
    rowTtlMs: options.pageCacheMs, renderBytes: options.renderCacheBytes, missTtlMs: options.negativeCacheMs, capped: (domain) => options.wikis.isFarmed(domain),
    counts: renderCacheCounts(options.metrics),
  });
  // One worker thread for a long article's CPU work (its 2.x HTML, its snapshot body), off the
  // event loop: started when first needed, ended when idle, and at close with the bodies' maker.
  const pageThread = workerFormatter(1, { idleMs: PAGE_THREAD_IDLE_MS });
  const facts = new PageFactsStore((domain) => options.wikis.of(domain), options.log);
  const service = new PageService(
    options.wikis, caches, { latestCheckMs: options.latestCheckMs, revisionRecheckMs: options.revisionRecheckMs }, options.log, options.purger, options.changeLogSeconds,
    new BodiesOnRender(options.log, options.snapshotBodiesOnRender, pageThread, facts), facts,
  );
  const cache = cachePolicy(Math.round(options.latestCheckMs / 1000), Math.round(options.revisionRecheckMs / 1000));
  const locks = new BoundedMap<string, SaveLocks>(10_000);
  const locksOf = (domain: string) => locks.remember(domain, () => new SaveLocks(domain));
  const html2 = new Html2Cache(Math.floor(options.renderCacheBytes / 4), pageThread.html2);
  const saver = new PageSaver(service, locksOf, options.log, html2);
  const transforms = new Transforms(service);
  const branches = new Branches(service, saver, options.branchTtlSeconds, options.log);
  const wikiCallers = new WikiCallers((domain) => service.wiki(domain));
  const callers = new BranchCallers((domain) => service.wiki(domain), wikiCallers);
  /** The normalized title, for writes (never redirected: a redirected POST loses its body). */
  const normalize = (req: RouteRequest) => caches.title(req.domain, req.params.title!, () => service.wiki(req.domain).normalize(req.params.title!));

  const linkStates = new LinkStates(options.wikis, options.log, options.pageCacheMs);
  const badImages = new ImageListPage(BAD_IMAGE_LIST, options.wikis, options.log);
  const noviewerImages = new ImageListPage(NOVIEWER_IMAGE_LIST, options.wikis, options.log);
  const pageImages = new PageImages(options.wikis, options.log);
  const images = async (domain: string, title: string) => {
    const [bad, noviewer, pageImage] = await Promise.all([badImages.of(domain), noviewerImages.of(domain), pageImages.of(domain, title)]);
    return { badImages: bad, noviewerImages: noviewer, pageImage };
  };
  const display = new DisplayPages(linkStates, images, Math.floor(options.renderCacheBytes / 4), options.pageCacheMs);
  const page = pageReadModule({
    service,
    caches,
    cache,
    html2,
    normalize,
  });
  const displayChanges = new DisplayChanges({ display, linkStates, pageImages, imageLists: [badImages, noviewerImages], purger: options.purger, metrics: options.metrics });
  /** Pages the wiki changed: open branches go with a moved page; displays that showed them are made again. */
  const pagesChanged = async (ctx: RequestContext, domain: string, titles: string[], moves: PageMove[], protections: string[]) => {
    for (const { from, to } of moves) await branches.pageMoved(ctx, domain, from, to);
    await displayChanges.changed(ctx, domain, titles);
    // Records that changed with no revision of their own: a redirect's target, a protected page.
    const others = await facts.changed(ctx, domain, titles);
    for (const title of new Set([...others, ...protections])) await service.changes.of(domain).record(ctx, { kind: 'record', title });
  };
  const follower = followerModule(service, options.follow, options.metrics, options.log, pagesChanged, { wikis: options.wikis, pollsPerSecond: options.farmPollsPerSecond });
  const branchRecords = branchRecordsModule(branches, {
    homeOf: (domain) => options.wikis.homeOf(domain), expiry: new BranchExpirySweep(branches, options.metrics), sweepMs: options.branchSweepMs, log: options.log,
  });
  const notices = changeNoticesModule(service, follower.applierOf, options.log);
  const records = enterpriseReads(service);
  const streams = changeStreams(service, options.log, options.streamStallMs, (domain) => options.wikis.homeOf(domain), records);
  const displays = displayModule({ service, caches, cache, display, linkStates, normalize });
  const edit = pageEditModule({ saver, transforms, normalize });
  const drafts = branchRoutesModule({ branches, callers, normalize, bodies: new VersionBodies(Math.floor(options.renderCacheBytes / 8)) });
  const shelf = new SnapshotShelf(options.snapshotsDir);
  const schedule = options.snapshotSchedule
    ? [snapshotScheduleModule(service, shelf, { ...options.snapshotSchedule, domains: () => service.domains().filter((d) => !options.wikis.isFarmed(d) && options.wikis.homeOf(d) === undefined) }, options.log)]
    : [];
  const modules = [follower, notices, streams.module, snapshotModule(service), ...schedule, page, displays, edit, drafts, saveRecordsModule(service, locksOf), branchRecords];
  const ahead = (options?: { renderNext?: boolean }) => (options?.renderNext ? service.renderer : undefined);
  const door: PageDoor = {
    modules,
    wiki: (domain) => service.wiki(domain),
    normalize,
    cache,
    pages: {
      latest: (ctx, domain, title, anew, options) => service.revisions.latest(ctx, domain, title, anew, ahead(options)),
      revision: (ctx, domain, title, rev, anew, options) => service.revisions.revision(ctx, domain, title, rev, anew, ahead(options)),
      byId: (ctx, domain, rev) => service.revisions.lookupRevision(ctx, domain, rev),
      stored: (ctx, domain, title, rev) => service.revisions.table(domain).get(ctx, title, rev),
    },
    renders: {
      render: (...args) => service.renderer.render(...args),
      renderBundle: (...args) => service.renderer.renderBundle(...args),
      renderByTid: (...args) => service.renderer.renderByTid(...args),
      stored: (ctx, domain, title, tid, rev) => service.renders.byTid(ctx, domain, title, tid, rev),
    },
    transforms,
    saver,
    answers: caches,
    html2: (domain, render) => html2.of(domain, render),
    noter: (domain, title) => service.reads.noter(domain, title),
    limit: (req, ctx, action) => wikiCallers.limit(req.domain, action, forwardedCredentials(req, ctx), ctx.client()),
    enterprise: { ...records, snapshots: shelf, realtime: streams.realtime },
  };
  return { modules, service, transforms, saver, normalize, caches, cache, html2, followers: follower.followers, door };
}

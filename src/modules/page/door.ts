import type { Module, RequestContext, RouteRequest } from '../../router/types.js';
import type { Wiki } from '../../upstream/wiki.js';
import type { PageSaver } from './edit/page-saver.js';
import type { Transforms } from './edit/transforms.js';
import type { CachePolicy } from './model/cache-control.js';
import type { BundleRender, Render } from './model/render.js';
import type { RevisionRow } from './model/revision.js';
import type { NormalizeTitle } from './model/title-url.js';
import type { PageCaches } from './read/page-caches.js';
import type { Renderer } from './read/renderer.js';
import type { EnterpriseReads } from './enterprise/enterprise-reads.js';
import type { SnapshotShelf } from './enterprise/snapshot-shelf.js';
import type { ChangeStreams } from './follow/change-stream.js';

/**
 * The page module's one door for the surfaces built on it (src/surfaces/: `/v1/`, rest_v1,
 * rest.php/v1, and later Enterprise's): the operations they may ask of it, typed, and nothing of
 * its insides. The import rules (.dependency-cruiser.cjs) let a surface reach the page module
 * through this file alone.
 */
export interface PageDoor {
  /** The page module's own routes (the `/v1/` surface serves those of api `v1`). */
  readonly modules: readonly Module[];
  /** The wiki of a served domain: its site info, its Action API, its rest.php. */
  wiki(domain: string): Wiki;
  /** A title as the wiki writes it (its rules, cached). */
  readonly normalize: NormalizeTitle;
  /** How long answers may be kept, by kind. */
  readonly cache: CachePolicy;
  readonly pages: PageReads;
  readonly renders: RenderReads;
  /** Parsoid's transforms, with the stash a transform back reads its original from. */
  readonly transforms: Pick<Transforms, 'toHtml' | 'toWikitext' | 'toStashedHtml' | 'toLint'>;
  /** Saves through the service's own path (HTTP transaction, the page's CAS, the render stored). */
  readonly saver: Pick<PageSaver, 'save'>;
  /** What a kept answer is reused by (see http/answer-memo.ts), and its headers built once per render. */
  readonly answers: Pick<PageCaches, 'reuseOfPage' | 'headersFor'>;
  /** A render's HTML in Parsoid's 2.x version (made once per render, kept). */
  html2(domain: string, render: BundleRender): Promise<Buffer>;
  /** Counts a read of a page (the stored pages' read counts); called once it was answered. */
  noter(domain: string, title: string): () => void;
  /**
   * Counts a request against the wiki's own rate limits of `action` (`stashbasehtml`) for its
   * caller, as the wiki would count it (see edit/wiki-callers.ts): past them, a 429 `rate-limited`.
   */
  limit(req: Pick<RouteRequest, 'headers' | 'domain'>, ctx: RequestContext, action: string): Promise<void>;
  /** Wikimedia Enterprise's records of pages, the finished snapshots offered for download, and the wiki's changes as Realtime streams them. */
  readonly enterprise: EnterpriseReads & { readonly snapshots: SnapshotShelf; readonly realtime: ChangeStreams['realtime'] };
}

/** A page's revisions: stored, else asked of the wiki and stored. */
export interface PageReads {
  /** The latest revision (`askedAnew`: asked of the wiki now); `renderNext`: its render started at once on a miss. */
  latest(ctx: RequestContext, domain: string, title: string, askedAnew: boolean, options?: { renderNext?: boolean }): Promise<RevisionRow>;
  revision(ctx: RequestContext, domain: string, title: string, rev: number, askedAnew: boolean, options?: { renderNext?: boolean }): Promise<RevisionRow>;
  /** A revision by its id alone (whatever page it is of now). */
  byId(ctx: RequestContext, domain: string, rev: number): Promise<RevisionRow>;
  /** A revision as stored, if it is (no request to the wiki). */
  stored(ctx: RequestContext, domain: string, title: string, rev: number): Promise<RevisionRow | undefined>;
}

/** Renders of revisions: stored, else made by the wiki's Parsoid and stored. */
export interface RenderReads extends Pick<Renderer, 'render' | 'renderBundle' | 'renderByTid'> {
  /** A render as stored, by its tid, if it is. */
  stored(ctx: RequestContext, domain: string, title: string, tid: string, rev?: number): Promise<Render | undefined>;
}

// Pages and revisions as stored, and their renders.
export type { RevisionRow } from './model/revision.js';
export { partOf, type BundleRender, type Render } from './model/render.js';
export { PageMoved, RevisionMoved } from './model/page-moves.js';
export { markedIfUnchecked } from './model/stale-answer.js';
// How answers are made: HTML versions, cache headers and surrogate keys, title URLs, reuse of kept answers.
export { HTML_2_TYPE, negotiateHtml, type HtmlVersion } from './model/html-versions.js';
export { askedAnew, type CachePolicy } from './model/cache-control.js';
export { contentKeys, surrogateKeys, tagged } from './model/surrogate-keys.js';
export { titleSegment } from './model/title-url.js';
export { renderOfETag } from './model/served-etag.js';
export { RateLimits } from './edit/rate-limits.js';
export { contentReuse, type PageReuse } from './read/page-caches.js';
// Enterprise's records and snapshots.
export type { EnterpriseReads } from './enterprise/enterprise-reads.js';
export { ARTICLE_FIELDS, checkFields, passes, selectFields, SNAPSHOT_FIELDS, STRUCTURED_FIELDS } from './model/record-fields.js';
export type { Download, Segment, ShelvedSnapshot, SnapshotShelf } from './enterprise/snapshot-shelf.js';
export { startOf } from './follow/change-stream.js';
export type { RealtimeOptions } from './follow/realtime-lines.js';
// Saves and transforms, as the service's own routes read their requests.
export type { PageSaver } from './edit/page-saver.js';
export { credentialsOf, parseDataMw, parseOriginal } from './edit/save-routes.js';
export { targetOf, threePaths } from './edit/transform-routes.js';

import type { Logger } from 'pino';
import type { Metrics } from '../../util/metrics.js';
import type { Module } from '../../router/types.js';
import type { CachePurger } from '../../upstream/cache-purger.js';
import type { NormalizeTitle } from './model/title-url.js';
import type { Transforms } from './edit/transforms.js';
import type { PageSaver } from './edit/page-saver.js';
import type { ChangeFollower, FollowerOptions } from './follow/change-follower.js';
import type { CachePolicy } from './model/cache-control.js';
import type { Html2Cache } from './model/html-versions.js';
import type { PageCaches } from './read/page-caches.js';
import type { PageService } from './read/page-service.js';
import type { WikiDirectory } from '../../upstream/wikis.js';
import type { PageDoor } from './door.js';

export interface PageModuleOptions {
  wikis: WikiDirectory;
  log: Logger;
  latestCheckMs: number;
  pageCacheMs: number;
  renderCacheBytes: number;
  negativeCacheMs: number;
  /** How old the wiki's word on a stored revision (hidden? page deleted?) may get before it is asked again. */
  revisionRecheckMs: number;
  /** The HTTP caches in front, told of every answer that changed. */
  purger: CachePurger;
  /** Polls of a farm's wikis' changes per second, over each storage group's wikis (follower.farm_polls_per_second). */
  farmPollsPerSecond: number;
  /** How the wikis' changes are followed; absent: they are not. */
  follow?: FollowerOptions;
  metrics: Metrics;
  /** How long a branch lives after its last update (s), and how often expired ones are swept (ms). */
  branchTtlSeconds: number;
  branchSweepMs: number;
  /** How long the change log keeps each change (s). */
  changeLogSeconds: number;
  /** How long a change stream client may take nothing while events wait before it is cut (ms). */
  streamStallMs: number;
  /** Whether each page's snapshot body is made as its latest render is stored (else by the first snapshot that writes it). */
  snapshotBodiesOnRender: boolean;
  /** Where finished Enterprise snapshots are kept and offered from (`{dir}/{domain}/{moment}/`). */
  snapshotsDir: string;
  /** Snapshots made on a schedule, if `every` is set. */
  snapshotSchedule?: { everyMs?: number; batchEveryMs?: number; keep: number; namespaces: number[] };
}

/** The page modules and what another face of them (rest_v1) builds on. */
export interface PageApi {
  modules: Module[];
  service: PageService;
  transforms: Transforms;
  /** Saves through the service's own path (HTTP transaction, the page's CAS, the render stored). */
  saver: PageSaver;
  normalize: NormalizeTitle;
  /** Builds the headers of a stored render's answer once per render and key. */
  caches: PageCaches;
  cache: CachePolicy;
  html2: Html2Cache;
  /** The change followers by domain (none unless following is on). */
  followers: Map<string, ChangeFollower>;
  /** What the surfaces may use (door.ts). */
  door: PageDoor;
}

import type { Logger } from 'pino';
import type { Metrics } from '../../../util/metrics.js';
import type { Module, RequestContext } from '../../../router/types.js';
import type { PageService } from '../read/page-service.js';
import { ChangeApplier, type ApplierSources, type PagesChanged } from './change-applier.js';
import type { DependentsSources } from './template-dependents.js';
import { ChangeFollower, type FollowerOptions } from './change-follower.js';
import { FollowerState } from '../tables/follower-state.js';

/**
 * The change followers, one per wiki (when `follow` is given): tables created at setup, the
 * followers started after it and stopped, their lease given up, before the page module drains.
 */
export function followerModule(
  service: ApplierSources & DependentsSources & Pick<PageService, 'domains'>, follow: FollowerOptions | undefined, metrics: Metrics, log: Logger, pagesChanged?: PagesChanged,
): Module & { followers: Map<string, ChangeFollower>; appliers: Map<string, ChangeApplier> } {
  const states = new Map(service.domains().map((domain) => [domain, new FollowerState(domain)]));
  const followers = new Map<string, ChangeFollower>();
  // What the wiki's notices of its changes are applied with (see change-notices.ts), following or not.
  const appliers = new Map([...states].map(([domain, state]) => [domain, new ChangeApplier(domain, service, state, follow?.storedOnly ?? false, metrics, pagesChanged, () => followers.get(domain)?.dependentsQueued())]));
  let context: RequestContext | undefined;
  return {
    name: 'page-follower',
    api: 'sys',
    tables: ['page_follower', 'page_dependents', 'page_backfill'],
    routes: [],
    followers,
    appliers,
    async setup(ctx) {
      context = ctx;
      await Promise.all([...states.values()].map((state) => state.create(ctx)));
      if (!follow) return;
      for (const [domain, state] of states) {
        const follower = new ChangeFollower(domain, service, state, follow, metrics, log, pagesChanged);
        followers.set(domain, follower);
        follower.start(ctx);
      }
    },
    async close() {
      await Promise.all([...followers.values()].map((f) => f.stop(context!)));
    },
  };
}

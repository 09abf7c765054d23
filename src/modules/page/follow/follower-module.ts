import type { Logger } from 'pino';
import type { Metrics } from '../../../util/metrics.js';
import type { Module, RequestContext } from '../../../router/types.js';
import type { PageService } from '../read/page-service.js';
import { ChangeApplier, type ApplierSources, type PagesChanged } from './change-applier.js';
import type { DependentsSources } from './template-dependents.js';
import { ChangeFollower, type FollowerOptions } from './change-follower.js';
import { FollowerState } from '../tables/follower-state.js';
import { FarmPolls } from './farm-polls.js';
import { TemplateDependents } from './template-dependents.js';

/** A farm's wiki's dependents are worked while templates are queued, and for this long after. */
const FARM_DEPENDENTS_IDLE_MS = 60_000;
import type { WikiDirectory } from '../../../upstream/wikis.js';

/**
 * The change followers, one per wiki listed by name (when `follow` is given): tables created at
 * each wiki's set-up, the followers started then and stopped, their lease given up, before the
 * page module drains. A farm's wikis (found by pattern) are followed by their notices: no poller
 * and no lease per wiki, so ten thousand idle wikis cost the farm and the store nothing.
 */
export function followerModule(
  service: ApplierSources & DependentsSources & Pick<PageService, 'domains'>, follow: FollowerOptions | undefined, metrics: Metrics, log: Logger, pagesChanged?: PagesChanged,
  /** The wikis, for a farm's: its group's poller (none when following is off). */
  farm?: { wikis: Pick<WikiDirectory, 'homeOf'>; pollsPerSecond: number },
): Module & { followers: Map<string, ChangeFollower>; applierOf: (domain: string) => ChangeApplier } {
  const states = new Map<string, FollowerState>();
  const stateOf = (domain: string) => remember(states, domain, () => new FollowerState(domain));
  const followers = new Map<string, ChangeFollower>();
  // What the wiki's notices of its changes are applied with (see change-notices.ts), following or not.
  const appliers = new Map<string, ChangeApplier>();
  const applierOf = (domain: string) =>
    remember(appliers, domain, () => new ChangeApplier(domain, service, stateOf(domain), follow?.storedOnly ?? false, metrics, pagesChanged, () => {
      if (followers.has(domain)) followers.get(domain)!.dependentsQueued();
      else farmDependents(domain);
    }));
  /** A farm's wikis whose changed templates' pages are being re-rendered here (while this process leads their group). */
  const dependents = new Map<string, TemplateDependents>();
  const farmDependents = (domain: string) => {
    const home = farm?.wikis.homeOf(domain);
    const polls = home === undefined ? undefined : farms.get(home);
    if (!follow || !polls?.isLeading || !context) return;
    const running = dependents.get(domain);
    if (running) return running.mayHaveQueued();
    const runner = new TemplateDependents(domain, service, stateOf(domain), follow, log, (kind, work, queue) => queue.add(work).then(
      () => metrics.followerTasks.inc({ domain: metrics.wikiLabel(domain), task: kind, outcome: 'done' }),
      (err) => {
        metrics.followerTasks.inc({ domain: metrics.wikiLabel(domain), task: kind, outcome: 'failed' });
        log.warn({ err, domain, task: kind }, "a farm's wiki's page could not be rendered again");
      },
    ), () => polls.isLeading);
    dependents.set(domain, runner);
    runner.follow(context, polls.signal, FARM_DEPENDENTS_IDLE_MS).catch((err) => log.warn({ err, domain }, "re-rendering a farm's wiki's dependents failed")).finally(() => dependents.delete(domain));
  };
  const listed = new Set(service.domains());
  /** Each farm group's poller, by the group's home domain. */
  const farms = new Map<string, FarmPolls>();
  let context: RequestContext | undefined;
  return {
    name: 'page-follower',
    api: 'sys',
    tables: ['page_follower', 'page_dependents', 'page_backfill'],
    routes: [],
    followers,
    applierOf,
    async setup(ctx) {
      context = ctx;
    },
    async setupWiki(ctx, domain) {
      await stateOf(domain).create(ctx);
      const home = farm?.wikis.homeOf(domain);
      // A farm's group: its list of wikis kept whether or not it is followed (snapshots of a
      // group read it too); its poller started when it is.
      if (farm && home === domain && !farms.has(home)) {
        const polls = new FarmPolls(home, metrics.wikiLabel(home), { wiki: (d) => service.wiki(d), stateOf, applierOf }, {
          pollsPerSecond: farm.pollsPerSecond, pollMs: follow?.pollMs ?? 1000, batchSize: follow?.batchSize ?? 100, leaseMs: follow?.leaseMs ?? 10_000,
        }, metrics, log);
        await polls.create(ctx);
        farms.set(home, polls);
        if (follow) polls.start(ctx);
        return;
      }
      if (home !== undefined) return farms.get(home)?.add(ctx, domain);
      if (!follow || !listed.has(domain) || followers.has(domain)) return;
      const follower = new ChangeFollower(domain, service, stateOf(domain), follow, metrics, log, pagesChanged);
      followers.set(domain, follower);
      follower.start(ctx);
    },
    async close() {
      await Promise.all([...followers.values(), ...farms.values()].map((f) => f.stop(context!)));
    },
  };
}

/** The value kept under `key`, made by `make` the first time. */
function remember<V>(map: Map<string, V>, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

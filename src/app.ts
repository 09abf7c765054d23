import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import type { Logger } from 'pino';
import { intervalMs, type Config, type WikiConfig } from './config.js';
import { closeGracefully, createHttpServer } from './http/server.js';
import { ClientAddress } from './http/client-address.js';
import { createLogger } from './util/logger.js';
import { Metrics } from './util/metrics.js';
import { keyRevValueModule } from './modules/buckets/key-rev-value.js';
import { keyValueModule } from './modules/buckets/key-value.js';
import { revisionedObjectModule } from './modules/buckets/revisioned-object.js';
import { pageModules, type PageApi } from './modules/page/index.js';
import { systemModules } from './modules/system/index.js';
import { tableModule } from './modules/table/index.js';
import { transactionsModule } from './modules/transactions/index.js';
import { Router } from './router/router.js';
import { surfaces } from './surfaces/index.js';
import type { Module } from './router/types.js';
import { openStorage, type TableStorage } from './storage/index.js';
import { MeasuredStorage } from './storage/measured-storage.js';
import { GroupedStorage } from './storage/storage-groups.js';
import { CachePurger } from './upstream/cache-purger.js';
import { FARM_CONCURRENCY, farmConcurrency, Wiki, type FarmGate } from './upstream/wiki.js';
import { ConfiguredWikis } from './upstream/wikis.js';
import { groupHomes } from './upstream/wiki-entries.js';

export interface App {
  config: Config;
  router: Router;
  storage: TableStorage;
  server: http.Server;
  log: Logger;
  metrics: Metrics;
  /** The page content API's parts (for tools that work on pages in process, such as the backfill). */
  page: PageApi;
  listen(): Promise<AddressInfo>;
  close(): Promise<void>;
}

/** How long /_health waits for storage to answer a trivial read. */
const HEALTH_CHECK_MS = 2000;

/** Wires storage, modules, router and the HTTP front together; nothing listens until `listen()`. */
export async function createApp(config: Config, options: { log?: Logger } = {}): Promise<App> {
  const log = options.log ?? createLogger(config.log_level);
  const metrics = new Metrics();
  // Wikis listed by name are made now; a farm's (by pattern) when first asked for.
  // A pattern's wikis share one bound on requests under way to the farm (WikiConfig.farm_concurrency).
  const farms = new Map<string, FarmGate>();
  const farmOf = (label: string, wiki: WikiConfig) => (label.startsWith('*.') ? farms.get(label) ?? farms.set(label, farmConcurrency(wiki.farm_concurrency ?? FARM_CONCURRENCY)).get(label) : undefined);
  const wikis = new ConfiguredWikis(config.wikis, (domain, wiki, label) => new Wiki(domain, wiki, config.user_agent, metrics, log, label, farmOf(label, wiki)), config.farm, log);
  metrics.wikiLabel = (domain) => wikis.labelOf(domain);
  metrics.countBusiestWikis(config.farm.top_wikis);
  const measured = new MeasuredStorage(await openStorage(config.storage), {
    observe: (operation, table, seconds) => metrics.storageDuration.observe([operation, table], seconds),
    failed: (operation, kind) => metrics.storageErrors.inc({ operation, kind }),
  });
  // The wikis of a storage group share its tables (a farm's always do).
  const storage = new GroupedStorage(measured, (domain) => wikis.groupOf(domain));
  const nodes = storage.watchNodes?.((node, up, counts) => {
    log.warn({ node, up }, up ? 'a storage node is up again' : 'a storage node went down');
    metrics.storageNodes.set({ state: 'up' }, counts.up);
    metrics.storageNodes.set({ state: 'down' }, counts.down);
  });
  if (nodes) {
    metrics.storageNodes.set({ state: 'up' }, nodes.up);
    metrics.storageNodes.set({ state: 'down' }, nodes.down);
  }
  const domains = wikis.domains();
  const router = new Router((domain) => wikis.serves(domain), (route, method, status, seconds) => metrics.observe(route, method, status, seconds, 'internal'));
  const purger = new CachePurger(config.purge_hosts, log, (outcome, n) => metrics.purges.inc({ outcome }, n), config.page_cache_ms);
  const page = pageModules({
    wikis, log, latestCheckMs: config.latest_check_interval * 1000, pageCacheMs: config.page_cache_ms,
    renderCacheBytes: config.render_cache_bytes, negativeCacheMs: config.negative_cache_ms,
    revisionRecheckMs: config.revision_recheck_interval * 1000,
    purger,
    metrics,
    branchTtlSeconds: Math.ceil(config.branch_ttl),
    changeLogSeconds: Math.ceil(config.change_log_days * 86400),
    streamStallMs: config.change_stream_stall_timeout * 1000,
    snapshotBodiesOnRender: config.snapshot_bodies === 'render',
    snapshotsDir: config.snapshots.dir,
    ...(config.snapshots.every || config.snapshots.batches ? {
      snapshotSchedule: {
        ...(config.snapshots.every ? { everyMs: intervalMs(config.snapshots.every)! } : {}),
        ...(config.snapshots.batches ? { batchEveryMs: intervalMs(config.snapshots.batches)! } : {}),
        keep: config.snapshots.keep, namespaces: config.snapshots.namespaces,
      },
    } : {}),
    branchSweepMs: config.branch_sweep_interval * 1000,
    farmPollsPerSecond: config.follower.farm_polls_per_second,
    follow: config.follow_changes
      ? {
          storedOnly: config.follow_changes === 'stored',
          pollMs: config.follower.poll_interval * 1000, batchSize: Math.round(config.follower.batch_size), concurrency: Math.round(config.follower.concurrency),
          pagesPerSecond: config.follower.pages_per_second, dependentsPerSecond: config.follower.dependents_per_second, leaseMs: config.follower.lease * 1000,
        }
      : undefined,
  });
  const transactions = transactionsModule({
    isFarmed: (domain) => wikis.isFarmed(domain), homeOf: (domain) => wikis.homeOf(domain), leaseMs: config.transaction_lease * 1000, sweepMs: config.transaction_sweep_interval * 1000, lifetimeMs: config.transaction_lifetime * 1000,
    kill: config.fault_injection?.transaction_kill, metrics, log,
  });
  const owned = () => new Set(every.flatMap((m) => m.tables ?? []));
  // The public API faces, from their one list.
  const faces = surfaces(page.door, config);
  const onSurfaces = new Set(faces.flatMap((f) => f.routes));
  const base: Module[] = [tableModule(storage, owned), keyValueModule(), keyRevValueModule(), revisionedObjectModule(), transactions];
  const health = async () => {
    const store = await storage.health(HEALTH_CHECK_MS);
    const perWiki = Object.fromEntries(domains.map((d) => {
      const follower = page.followers.get(d)?.status();
      return [d, { circuit: wikis.of(d).circuit.isOpen ? 'open' : 'closed', ...(follower ? { follower } : {}) }];
    }));
    const farms = wikis.farms();
    const degraded = store.status !== 'ok' || Object.values(perWiki).some((w) => w.circuit === 'open' || w.follower?.stalled)
      || Object.values(farms).some((f) => f.circuits_open > 0);
    const status = store.status === 'down' ? ('down' as const) : degraded ? ('degraded' as const) : ('ok' as const);
    return { status, storage: { backend: storage.backend, ...store }, wikis: perWiki, ...(Object.keys(farms).length ? { farms } : {}) };
  };
  const system = systemModules({ router, modules: () => every, domains, metrics, health });
  // Every module, in the order they are set up (a module's setup may rely on the tables of one before it).
  const every: Module[] = [...base, ...page.modules, ...[...onSurfaces].filter((m) => !page.modules.includes(m)), ...system];
  // The internal API and the root's routes on their own; the public ones with their surfaces.
  for (const module of every) if (!onSurfaces.has(module)) router.register(module);
  for (const face of faces) router.addSurface(face);
  router.compile(Object.assign({}, ...every.map((m) => m.components ?? {})));
  const setup = router.context({ requestId: 'startup', admin: true, log });
  for (const module of every) await module.setup?.(setup);
  /** A wiki's set-up by every module (its tables), once, before its first request. */
  const setUp = new Set<string>();
  const setupWiki = async (domain: string, served = true) => {
    for (const module of every) await module.setupWiki?.(setup, domain);
    if (served) setUp.add(domain);
  };
  // The wikis listed by name now; and each storage group's tables, set up under its home (a name
  // no client is served by): a farm's wiki found later finds its tables made.
  for (const domain of domains) await setupWiki(domain);
  for (const home of groupHomes(config.wikis)) await setupWiki(home, false);
  const admitting = new Map<string, Promise<void>>();
  router.admitWith((domain) => {
    if (setUp.has(domain)) return undefined;
    let admitted = admitting.get(domain);
    if (!admitted) {
      admitted = (async () => {
        await wikis.admit(domain);
        await setupWiki(domain);
      })().finally(() => admitting.delete(domain));
      admitting.set(domain, admitted);
    }
    return admitted;
  });

  const server = createHttpServer(router, log, metrics, {
    maxBodyBytes: config.max_body_bytes,
    adminToken: config.admin_token,
    headersTimeout: config.headers_timeout,
    requestTimeout: config.request_timeout,
    keepAliveTimeout: config.keep_alive_timeout,
    sendTimeout: config.send_timeout,
    maxConnections: config.max_connections,
    answerMemoBytes: config.answer_cache_bytes,
    clientAddress: new ClientAddress(config.trusted_proxies),
    streams: { perClient: config.max_streams_per_client, total: config.max_streams ?? Math.max(1, Math.floor(config.max_connections / 2)) },
  });
  let sweeper: NodeJS.Timeout | undefined;
  if (config.ttl_sweep_interval > 0) {
    sweeper = setInterval(() => {
      storage.sweepExpired().catch((err) => log.warn({ err }, 'sweeping expired rows failed'));
    }, config.ttl_sweep_interval * 1000);
    sweeper.unref();
  }

  return {
    config, router, storage, server, log, metrics, page,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.listen.port, config.listen.host, () => resolve(server.address() as AddressInfo));
      }),
    async close() {
      if (sweeper) clearInterval(sweeper);
      if (server.listening) await closeGracefully(server);
      for (const module of every) await module.close?.();
      purger.close();
      wikis.close();
      await storage.close();
    },
  };
}

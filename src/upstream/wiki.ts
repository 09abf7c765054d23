import { Title } from 'mediawiki-title';
import type { Logger } from 'pino';
import PQueue from 'p-queue';
import { boundedConcurrency, fairConcurrency } from '../util/concurrency-limit.js';
import { DEFAULT_USER_AGENT, type WikiConfig } from '../config.js';
import { HttpError, badRequest, notFound } from '../util/errors.js';
import type { Metrics } from '../util/metrics.js';
import { ActionApi, type SiteInfo } from './action-api.js';
import { Circuit } from './circuit.js';
import { upstreamFetch } from './fetch.js';
import { ParsoidClient, RoutesMissing, type ParsoidMode, type Part, type TransformTarget } from './parsoid.js';

/** Where a wiki's site info is kept between processes, so titles normalise while the wiki is down. */
export interface SiteInfoStore {
  load(): Promise<{ info: SiteInfo; fetched: number } | undefined>;
  save(info: SiteInfo): Promise<void>;
  /** How Parsoid was found to be reached (`parsoid: auto`), remembered across processes. */
  loadMode(): Promise<ParsoidMode | undefined>;
  saveMode(mode: ParsoidMode): Promise<void>;
}

/**
 * At most `perSecond` requests to the wiki, whatever asks (clients' misses, the follower, a
 * backfill). The queue holds at most `maxQueuedSeconds` of requests: past that a request is
 * refused at once with 503, so a flood of misses cannot grow memory or waits without bound.
 */
export function rateLimit(perSecond: number | undefined, maxQueuedSeconds = 30): <T>(request: () => Promise<T>) => Promise<T> {
  if (!perSecond) return (request) => request();
  const cap = Math.max(1, Math.round(perSecond));
  const queue = new PQueue({ intervalCap: cap, interval: 1000, carryoverIntervalCount: true });
  const maxQueued = cap * maxQueuedSeconds;
  return <T>(request: () => Promise<T>): Promise<T> => {
    if (queue.size >= maxQueued) {
      return Promise.reject(new HttpError(503, 'upstream-busy', `More requests wait for the wiki than its rate limit (${cap}/s) lets through in ${maxQueuedSeconds} s.`, { headers: { 'retry-after': String(maxQueuedSeconds) } }));
    }
    return queue.add(request) as Promise<T>;
  };
}

/**
 * At most `n` requests under way (unset: no bound); more wait their turn, and beyond 64 times as
 * many waiting the request is refused (503) rather than queued.
 */
export function wikiConcurrency(n: number | undefined): <T>(request: () => Promise<T>) => Promise<T> {
  if (!n) return (request) => request();
  return boundedConcurrency(n, n * 64, () => new HttpError(503, 'upstream-busy', `More requests wait for the wiki than ${n} at a time can answer soon.`, { headers: { 'retry-after': '5' } }));
}

/** A farm's requests under way at once by default (see WikiConfig.farm_concurrency). */
export const FARM_CONCURRENCY = 64;

/** Requests to the wikis of one farm, shared fairly by wiki: see `farmConcurrency`. */
export type FarmGate = <T>(domain: string, request: () => Promise<T>) => Promise<T>;

/**
 * At most `n` requests under way to a farm's wikis together, a freed place handed to the next
 * wiki in turn; beyond 64 times as many waiting, 503.
 */
export function farmConcurrency(n: number): FarmGate {
  return fairConcurrency(n, n * 64, () => new HttpError(503, 'upstream-busy', `More requests wait for the farm than ${n} at a time can answer soon.`, { headers: { 'retry-after': '5' } }));
}

/** How often a wiki without v3 routes is asked again, and how often a probe may be repeated. */
const MODE_RECHECK_MS = 3600_000;
const PROBE_INTERVAL_MS = 60_000;

/** Stored site info older than this is refreshed from the wiki in the background. */
const SITE_INFO_MAX_AGE_MS = 24 * 3600 * 1000;

/** One wiki: its Action API, its Parsoid, and its title rules (site info, kept in storage). */
export class Wiki {
  readonly api: ActionApi;
  readonly parsoid: ParsoidClient;
  /** The wiki's rest.php, where requests the service does not answer itself are passed on. */
  readonly restBase: string;
  /** The secret the wiki's notices of its changes carry (unset: notices are refused). */
  readonly noticeSecret: string | undefined;
  /** Open while the wiki does not answer: see Circuit. */
  readonly circuit: Circuit;
  private loadedSiteInfo: Promise<SiteInfo> | undefined;
  private store: SiteInfoStore | undefined;
  private readonly configuredMode: ParsoidMode | 'auto';
  private knownMode: Promise<ParsoidMode> | undefined;
  private modeCheckedAt = Date.now();
  private probe: { at: number; result: Promise<boolean | undefined> } | undefined;

  constructor(
    readonly domain: string,
    config: WikiConfig,
    userAgent: string,
    metrics: Metrics,
    private readonly log?: Logger,
    /** What its metrics are labelled with: a farm's wikis share their pattern's series. */
    label = domain,
    /** A farm's wiki: the farm's bound on requests under way, shared with its other wikis. */
    farm?: FarmGate,
  ) {
    const count = (endpoint: string) => metrics.wikiRequests.inc({ domain: label, endpoint });
    const limit = rateLimit(config.requests_per_second);
    const bounded = wikiConcurrency(config.concurrency);
    const readTimeoutMs = (config.timeout ?? 15) * 1000;
    this.circuit = new Circuit({
      threshold: config.circuit_threshold ?? 2,
      probeIntervalMs: (config.circuit_probe_interval ?? 5) * 1000,
      probe: async () => {
        count('probe');
        const res = await upstreamFetch(`${config.action_api}?action=query&meta=siteinfo&format=json`, userAgent, { timeoutMs: readTimeoutMs, retries: 0 });
        if (res.status !== 200) throw new Error(`the wiki answered ${res.status}`);
      },
      onChange: (open) => {
        // A farm's pattern counts its wikis whose circuit is open.
        if (label === domain) metrics.wikiCircuitOpen.set({ domain: label }, open ? 1 : 0);
        else if (open) metrics.wikiCircuitOpen.inc({ domain: label });
        else metrics.wikiCircuitOpen.dec({ domain: label });
        if (open) log?.warn({ domain }, 'the wiki is not answering: stored content is served and requests to it fail at once until it answers again');
        else log?.warn({ domain }, 'the wiki answers again');
      },
    });
    // A farm's wikis share a series: one made later does not say the circuit of another is closed.
    if (label === domain) metrics.wikiCircuitOpen.set({ domain: label }, 0);
    const outcome = (o: string) => metrics.wikiOutcomes.inc({ domain: label, outcome: o });
    const schedule = <T>(request: () => Promise<T>, options?: { background?: boolean }) => {
      const notSent = this.circuit.isOpen;
      const sent = this.circuit.run(() => bounded(() => limit(farm ? () => farm(domain, request) : request)), { counts: !options?.background });
      sent.then(() => outcome('ok'), (e: unknown) => outcome(notSent ? 'circuit-open' : outcomeOf(e)));
      return sent;
    };
    this.api = new ActionApi(config.action_api, userAgent, count, { maxlag: config.maxlag, schedule, readTimeoutMs });
    this.restBase = config.rest_api.replace(/\/$/, '');
    this.noticeSecret = config.notice_secret;
    const parsoidDomain = config.parsoid_domain ?? new URL(config.rest_api).hostname;
    this.parsoid = new ParsoidClient(config.rest_api.replace(/\/$/, ''), parsoidDomain, userAgent, count, schedule);
    if (userAgent === DEFAULT_USER_AGENT && /\.(wikipedia|wikimedia|wiktionary|wikidata|wikibooks|wikiquote|wikisource|wikinews|wikiversity|wikivoyage|mediawiki)\.org$/.test(new URL(config.action_api).hostname)) {
      log?.warn({ domain }, "Wikimedia's User-Agent policy asks for a contact: set user_agent in the config to name this deployment and how to reach its operator");
    }
    this.configuredMode = config.parsoid ?? 'auto';
  }

  /** How this wiki's Parsoid is reached: as configured, or (auto) as found out and remembered. */
  mode(): Promise<ParsoidMode> {
    if (this.configuredMode !== 'auto') return Promise.resolve(this.configuredMode);
    if (!this.knownMode) {
      this.knownMode = (this.store?.loadMode() ?? Promise.resolve(undefined)).then(
        (stored) => stored ?? 'v3',
        () => 'v3' as const,
      );
    }
    const known = this.knownMode;
    // A wiki found without v3 routes may gain them (Parsoid enabled later): asked again now and then.
    if (Date.now() - this.modeCheckedAt > MODE_RECHECK_MS) {
      this.modeCheckedAt = Date.now();
      known.then(async (mode) => {
        if (mode === 'core' && (await this.probeV3()) === true) await this.learnMode('v3');
      }).catch(() => undefined);
    }
    return known;
  }

  /** The evidence for `parsoid: auto`: a fixed probe, at most one a minute, shared by all who ask meanwhile. */
  private probeV3(): Promise<boolean | undefined> {
    if (!this.probe || Date.now() - this.probe.at > PROBE_INTERVAL_MS) this.probe = { at: Date.now(), result: this.parsoid.hasV3() };
    return this.probe.result;
  }

  private async learnMode(mode: ParsoidMode): Promise<void> {
    this.log?.info({ domain: this.domain, mode }, mode === 'core'
      ? "the wiki does not expose Parsoid's v3 routes: using MediaWiki's core REST API"
      : "the wiki exposes Parsoid's v3 routes: using them");
    this.knownMode = Promise.resolve(mode);
    await this.store?.saveMode(mode).catch((err) => this.log?.warn({ err, domain: this.domain }, 'storing the Parsoid mode failed'));
  }

  /**
   * Runs `work` in this wiki's mode. With `parsoid: auto`, an answer that no v3 route matched is
   * no evidence by itself (the request's own path, a title, may be what matched nothing): the
   * wiki is switched to the core REST API (here and in storage) only when a fixed probe that
   * carries no client text finds no v3 routes either; then `work` runs again.
   */
  async withMode<T>(work: (mode: ParsoidMode) => Promise<T>): Promise<T> {
    const mode = await this.mode();
    try {
      return await work(mode);
    } catch (e) {
      if (!(e instanceof RoutesMissing) || this.configuredMode !== 'auto' || mode !== 'v3') throw e;
      const v3 = await this.probeV3();
      if (v3 === true) throw notFound('The wiki has no route for this request.', 'upstream-no-route');
      if (v3 === undefined) throw new HttpError(503, 'upstream-unavailable', 'The wiki did not say which routes it exposes; try again shortly.', { headers: { 'retry-after': '5' } });
      if ((await this.mode()) === 'v3') await this.learnMode('core');
      return work('core');
    }
  }

  /** A Parsoid transform, through whichever routes this wiki exposes (see ParsoidClient.transform). */
  transform(from: 'wikitext' | 'html' | 'pagebundle', to: 'html' | 'wikitext' | 'pagebundle' | 'lint', target: TransformTarget, body: Record<string, unknown>): Promise<Part> {
    return this.withMode((mode) => this.parsoid.transform(from, to, target, body, mode));
  }

  /** Keeps site info in `store` from now on (set once storage is ready). */
  useSiteInfoStore(store: SiteInfoStore): void {
    this.store = store;
  }

  private async fetchAndKeep(): Promise<SiteInfo> {
    const info = await this.api.siteInfo();
    await this.store?.save(info).catch((err) => this.log?.warn({ err, domain: this.domain }, 'storing site info failed'));
    return info;
  }

  private async load(): Promise<SiteInfo> {
    const stored = await this.store?.load().catch((err) => {
      this.log?.warn({ err, domain: this.domain }, 'reading stored site info failed');
      return undefined;
    });
    if (!stored) return this.fetchAndKeep();
    if (Date.now() - stored.fetched > SITE_INFO_MAX_AGE_MS) {
      this.fetchAndKeep().then(
        (info) => (this.loadedSiteInfo = Promise.resolve(info)),
        (err) => this.log?.warn({ err, domain: this.domain }, 'refreshing site info failed; keeping the stored copy'),
      );
    }
    return stored.info;
  }

  private rules(): Promise<SiteInfo> {
    if (!this.loadedSiteInfo) {
      this.loadedSiteInfo = this.load();
      // A failed load is not kept: the next request tries again.
      this.loadedSiteInfo.catch(() => (this.loadedSiteInfo = undefined));
    }
    return this.loadedSiteInfo;
  }

  /** The wiki's site info (title rules, server, language), from storage or the wiki. */
  siteInfo(): Promise<SiteInfo> {
    return this.rules();
  }

  /** A normalised title's parts: namespace id and local name, and the title as text (spaces). */
  async describe(key: string): Promise<{ ns: number; nsText: string; text: string; talk?: string }> {
    const siteInfo = await this.rules();
    const title = Title.newFromText(key, siteInfo);
    const ns = title.getNamespace().getId();
    const talkNs = ns >= 0 && ns % 2 === 0 ? (siteInfo.namespaces[String(ns + 1)] as { name?: string } | undefined)?.name : undefined;
    const main = title.getKey();
    return {
      ns,
      nsText: title.getNamespace().getNormalizedText(),
      text: title.getPrefixedText(),
      talk: talkNs === undefined ? undefined : `${talkNs.replace(/ /g, '_')}:${main}`,
    };
  }

  /** The title as the wiki stores it (prefixed DB key, e.g. `Talk:Main_Page`); callers cache it. */
  async normalize(text: string): Promise<string> {
    const siteInfo = await this.rules();
    let title: Title;
    try {
      title = Title.newFromText(text, siteInfo);
    } catch (e) {
      throw badRequest(`'${text.slice(0, 200)}' is not a valid title: ${(e as Error).message}`, 'invalid-title');
    }
    // Only a fragment (`#x`): a link within some page, no page of its own.
    if (title.getKey() === '') throw badRequest(`'${text.slice(0, 200)}' is not a valid title: it names no page, only a fragment.`, 'invalid-title');
    // Special: and Media: pages have no revisions and no content to store.
    if (title.getNamespace().getId() < 0) throw notFound(`${title.getPrefixedText()} is a special page: it has no stored content.`, 'special-page');
    return title.getPrefixedDBKey();
  }
}

/** What became of a request the wiki was sent: it answered with an error, did not answer in time, or could not be reached. */
function outcomeOf(e: unknown): string {
  if (!(e instanceof HttpError)) return 'refused';
  if (e.problemType === 'urn:problem:upstream-timeout') return 'timeout';
  if (e.problemType === 'urn:problem:upstream-unavailable') return 'unreachable';
  return 'refused';
}

export const isUnavailable = (e: unknown) => e instanceof HttpError && e.status >= 502 && e.status <= 504;

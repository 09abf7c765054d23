import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { unknownSetting } from './config-keys.js';
import { parseProxy } from './util/addresses.js';

export interface WikiConfig {
  /** The wiki's Action API, e.g. https://en.wikipedia.org/w/api.php */
  action_api: string;
  /** The wiki's REST base (rest.php), where Parsoid answers. */
  rest_api: string;
  /** The domain Parsoid's v3 routes expect (the host of $wgServer); defaults to rest_api's host. */
  parsoid_domain?: string;
  /**
   * How renders are fetched: `v3`, Parsoid's own routes (page bundles with data-parsoid); `core`,
   * MediaWiki's core REST API (`rest.php/v1`: what Wikimedia exposes; no data-parsoid); `auto`
   * (default): v3 until the wiki says it has no such routes, then core, remembered in storage.
   */
  parsoid?: 'v3' | 'core' | 'auto';
  /** Sent as `maxlag` on the Action API's reads: a lagged wiki is asked again later (Wikimedia asks for 5). */
  maxlag?: number;
  /** Requests per second to the wiki at most, from this process (unset: no limit). */
  requests_per_second?: number;
  /**
   * Requests to the wiki under way at once at most, from this process (more wait their turn; a
   * queue of 64 times as many is answered 503). Unset: no limit for a wiki listed by name, 8 for
   * each wiki of a pattern, so a burst of cold misses on one wiki of a farm cannot hold every
   * connection to the farm.
   */
  concurrency?: number;
  /**
   * For a pattern: requests under way at once to all of its wikis together, from this process
   * (default 64), shared fairly by wiki (a freed place goes to the next wiki in turn); past 64
   * times as many waiting, a 503. The farm's servers are one MediaWiki install: each wiki's own
   * `concurrency` alone lets a thousand wikis' cold misses ask it thousands of renders at once.
   */
  farm_concurrency?: number;
  /** Seconds an Action API read may take (default 15); renders and edits have longer ones of their own. */
  timeout?: number;
  /**
   * After this many requests in a row time out or find the wiki unreachable (default 2), requests
   * to it fail at once (503, Retry-After) and stored content is served, until a probe every
   * `circuit_probe_interval` seconds (default 5) finds it answering again.
   */
  circuit_threshold?: number;
  circuit_probe_interval?: number;
  /**
   * The shared secret the wiki's notices of its changes (`POST /{domain}/v1/changes`, sent by the
   * WikistoreNotify extension or EventBus) must carry; unset: notices are refused (403).
   */
  notice_secret?: string;
  /**
   * The storage group whose tables this wiki's rows live in (storage-groups.ts). A pattern's wikis
   * are always in one (by default named by the pattern's suffix); a wiki listed by name keeps
   * tables of its own unless it names one.
   */
  storage_group?: string;
  /**
   * For a pattern: a file of the farm's domains, one a line. Only those are served (any other
   * name of the pattern is a 404 asked of no one), and the file is read again when it changes.
   */
  domains_file?: string;
}

/** How wikis matched by a pattern (`"*.farm.example"`) are found and kept. */
export interface FarmConfig {
  /** Domains never seen before that may be looked up (their site info asked) per second, over all patterns. */
  discoveries_per_second: number;
  /** Seconds a domain whose wiki did not answer as a MediaWiki is answered 404 without asking again. */
  no_such_wiki_seconds: number;
  /** Wikis whose state (site info, clients) is kept in memory; the least recently used one is released beyond. */
  wikis_in_memory: number;
  /** Opt-in: a `wiki_requests_busiest{domain}` series for this many busiest wikis (0, the default: none). */
  top_wikis: number;
}

export interface CassandraStorageConfig {
  backend: 'cassandra';
  /** Nodes the driver first connects to; it learns the rest of the cluster from them. */
  contact_points: string[];
  /** The data center whose nodes coordinate requests (LOCAL_* consistency levels count in it). */
  local_data_center: string;
  /** Keyspaces are named `{prefix}_{domain}_{hash}`, plus `{prefix}_meta` for table schemas. */
  keyspace_prefix: string;
  /** Replicas per data center for new keyspaces (NetworkTopologyStrategy). */
  replication: Record<string, number>;
  /** Consistency of reads and writes, and of the Paxos round of conditional writes. */
  consistency: { read: string; write: string; serial: string };
}

export type StorageConfig =
  | {
      backend: 'sqlite';
      path: string;
      /** Megabytes of query answers kept in memory, each checked against SQLite's data version on use (0: none). */
      read_cache_mb?: number;
    }
  | { backend: 'postgres'; url: string; pool_size?: number }
  /** MariaDB 10.11 or MySQL 8: `mysql://user:password@host:3306/database`. */
  | { backend: 'mariadb'; url: string; pool_size?: number }
  | CassandraStorageConfig;

const CONSISTENCY_LEVELS = ['one', 'two', 'three', 'quorum', 'all', 'local_quorum', 'each_quorum', 'local_one'];
const SERIAL_LEVELS = ['serial', 'local_serial'];

/** A Cassandra storage section with every default filled in: a cluster's defaults are made for three replicas. */
function cassandraStorage(raw: Partial<CassandraStorageConfig>): CassandraStorageConfig {
  const points = raw.contact_points ?? ['127.0.0.1'];
  if (!Array.isArray(points) || points.length === 0 || points.some((p) => typeof p !== 'string' || !p)) fail('storage.contact_points must list host names or addresses');
  const dc = raw.local_data_center ?? 'datacenter1';
  if (typeof dc !== 'string' || !dc) fail('storage.local_data_center must name a data center');
  const prefix = raw.keyspace_prefix ?? 'wikistore';
  if (typeof prefix !== 'string' || !/^[a-z][a-z0-9_]{0,11}$/.test(prefix)) fail('storage.keyspace_prefix must be 1-12 lower-case letters, digits or _');
  const replication = raw.replication ?? { [dc]: 3 };
  if (typeof replication !== 'object' || Object.entries(replication).some(([name, n]) => !/^[\w.-]+$/.test(name) || !Number.isInteger(n) || n < 1)) {
    fail('storage.replication must map data center names to replica counts');
  }
  const consistency = { read: 'local_quorum', write: 'local_quorum', serial: 'serial', ...raw.consistency };
  for (const [what, level] of Object.entries(consistency)) {
    const allowed = what === 'serial' ? SERIAL_LEVELS : CONSISTENCY_LEVELS;
    if (!allowed.includes(level)) fail(`storage.consistency.${what} must be one of ${allowed.join(', ')}`);
  }
  return { backend: 'cassandra', contact_points: points, local_data_center: dc, keyspace_prefix: prefix, replication, consistency };
}

export interface Config {
  listen: { host: string; port: number };
  storage: StorageConfig;
  /** By domain, or by pattern (`"*.farm.example"`, one DNS label) with `{domain}` and `{label}` in its URLs. */
  wikis: Record<string, WikiConfig>;
  farm: FarmConfig;
  admin_token?: string;
  user_agent: string;
  log_level: string;
  max_body_bytes: number;
  /** How often expired rows are swept from storage, in seconds (0 = never). */
  ttl_sweep_interval: number;
  /** How old a page's "latest revision" may get before the wiki is asked again, in seconds. */
  latest_check_interval: number;
  /**
   * How old the wiki's word on a stored revision may get before it is asked again when served
   * (its text may have been hidden, its page deleted), in seconds; shared caches keep revisions
   * no longer than this either.
   */
  revision_recheck_interval: number;
  /**
   * How long a page's stored state may be served from memory, in ms. This process's own writes
   * are seen at once; other processes' writes after at most this long.
   */
  page_cache_ms: number;
  /** Bytes of rendered content kept in memory (renders are immutable by tid). */
  render_cache_bytes: number;
  /**
   * Bytes of finished answers kept to be sent again (hot reads whose handler says when they are
   * still right; see http/answer-memo.ts); 0 turns it off.
   */
  answer_cache_bytes: number;
  /** Seconds a client may take to send its request headers. */
  headers_timeout: number;
  /** Seconds a client may take to send its whole request. */
  request_timeout: number;
  /** Seconds a client may take none of an answer's bytes before its connection is closed. */
  send_timeout: number;
  /** Seconds an idle keep-alive connection stays open (longer than a proxy's idle timeout). */
  keep_alive_timeout: number;
  /** Open connections beyond which requests are shed with 503 (bounded by the descriptor limit). */
  max_connections: number;
  /** Streamed answers (change streams, Realtime, downloads) one client may hold at once (429 beyond). */
  max_streams_per_client: number;
  /** Streamed answers all clients together may hold (503 beyond); by default half of `max_connections`. */
  max_streams?: number;
  /** How long the wiki's "no such page or revision" is remembered, in ms (0 = not at all). */
  negative_cache_ms: number;
  /** Worker processes under a supervisor that restarts them; 0 serves in the one process. */
  workers: number;
  /** Seconds a process's heartbeat lives unless renewed: how soon another finishes its transactions. */
  transaction_lease: number;
  /** Seconds between looks for unfinished transactions (0 = never). */
  transaction_sweep_interval: number;
  /** Seconds a transaction tid is accepted, and its result kept. */
  transaction_lifetime: number;
  /** Seconds a branch (a draft) lives after its last update unless merged into the page. */
  branch_ttl: number;
  /** Days the change log keeps each change: how far back a change stream client may resume. */
  change_log_days: number;
  /** Seconds a change stream client may take nothing while events wait before it is cut (it resumes with Last-Event-ID). */
  change_stream_stall_timeout: number;
  /** Seconds between sweeps of expired branches (0 = never: they still expire, their leftovers stay). */
  branch_sweep_interval: number;
  /** HTTP caches in front of the service ("host:port"), sent a PURGE for every URL whose answer changed. */
  purge_hosts: string[];
  /**
   * Proxies in front of the service (addresses or CIDR ranges) whose `X-Forwarded-For` is passed
   * on to the wiki; from any other peer a client's claim is dropped. None by default.
   */
  trusted_proxies: string[];
  /**
   * Whether the service follows each wiki's recent changes (one process per wiki at a time):
   * `stored` (the default) keeps what is stored fresh within seconds of a change on the wiki
   * (edits, deletions, hidden revisions, moves, templates) and purges it from the caches in
   * `purge_hosts`, at one poll of the wiki per `poll_interval`; `true` also stores and renders
   * every page the wiki changes (a mirror, with the backfill); `false` relies on re-checks alone.
   */
  follow_changes: boolean | 'stored';
  follower: {
    /** Seconds between reads of the wiki's recent changes once caught up. */
    poll_interval: number;
    /** Changes applied per batch. */
    batch_size: number;
    /** Pages refreshed and rendered side by side. */
    concurrency: number;
    /** Pages refreshed and rendered per second at most (catching up after an outage). */
    pages_per_second: number;
    /**
     * Pages re-rendered per second at most because a template or module they use changed; 0 (the
     * default): as fast as the wiki answers, `concurrency` at a time, within its `requests_per_second`.
     */
    dependents_per_second: number;
    /** Seconds the follower's lease lives unless renewed: how soon another process takes over. */
    lease: number;
    /**
     * Polls of the recent changes per second over all the wikis matched by patterns (a farm's
     * wikis are told of changes by their notices; polling is the safety net): the farm is asked
     * this often at most, however many wikis it has.
     */
    farm_polls_per_second: number;
  };
  /** Whether `/{domain}/rest_v1/` (Wikimedia's REST API layout, for RESTBase's clients) is served. */
  rest_v1: boolean;
  /**
   * When a page's snapshot body (its line's `article_body`, compressed) is made: `render` (the
   * default) as its latest revision's render is stored, so that a snapshot copies it; `snapshot`
   * by the first snapshot that writes it (no cost to a render, none in storage until then).
   */
  snapshot_bodies: 'render' | 'snapshot';
  /**
   * Enterprise snapshots offered over HTTP: where they are kept (`dir`, `{dir}/{domain}/{moment}/`,
   * where `npm run snapshot` writes them too), and, with `every` (`12h`, `1d`), made on a schedule
   * for every wiki listed by name, `namespaces` each, the newest `keep` kept; with `batches`
   * (`1h`), each day's batch (Enterprise's: the pages the day's changes named) made anew that often.
   */
  snapshots: { dir: string; every: string | null; keep: number; namespaces: number[]; batches: string | null };
  /** For tests only: faults the service injects into itself. */
  fault_injection?: { transaction_kill?: 'after-store' | 'after-primary-unrecorded' | 'after-primary' | 'after-dependent' | 'random' };
}

/** The process's soft limit on open descriptors (Linux), or undefined where it cannot be read. */
const descriptorLimit = (() => {
  let limit: number | undefined | null = null;
  return (): number | undefined => {
    if (limit !== null) return limit;
    try {
      const m = /^Max open files\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
      limit = m ? Number(m[1]) : undefined;
    } catch {
      limit = undefined;
    }
    return limit;
  };
})();

/** Connections leave room for storage, upstream sockets and files. */
function defaultMaxConnections(): number {
  const fds = descriptorLimit();
  return fds === undefined ? 10_000 : Math.max(64, Math.min(10_000, Math.floor((fds - 512) / 1.1)));
}

export const DEFAULT_USER_AGENT =
  'wikistore/0.1 (storage-backed MediaWiki content API; set user_agent in config.yaml to name your deployment and a contact)';

export function defaultConfig(dataDir = './data'): Config {
  return {
    listen: { host: '127.0.0.1', port: 7231 },
    storage: { backend: 'sqlite', path: path.join(dataDir, 'wikistore.sqlite3') },
    wikis: {
      'en.wikipedia.org': {
        action_api: 'https://en.wikipedia.org/w/api.php',
        rest_api: 'https://en.wikipedia.org/w/rest.php',
        // Wikimedia exposes MediaWiki's core REST API, not Parsoid's own routes, and asks API
        // clients for maxlag and a moderate, steady request rate.
        parsoid: 'core',
        maxlag: 5,
        requests_per_second: 20,
      },
    },
    farm: { discoveries_per_second: 5, no_such_wiki_seconds: 600, wikis_in_memory: 1000, top_wikis: 0 },
    user_agent: DEFAULT_USER_AGENT,
    log_level: 'info',
    max_body_bytes: 16 * 1024 * 1024,
    ttl_sweep_interval: 300,
    latest_check_interval: 60,
    revision_recheck_interval: 300,
    page_cache_ms: 5000,
    render_cache_bytes: 32 * 1024 * 1024,
    answer_cache_bytes: 32 * 1024 * 1024,
    headers_timeout: 10,
    request_timeout: 60,
    keep_alive_timeout: 65,
    send_timeout: 60,
    max_connections: defaultMaxConnections(),
    max_streams_per_client: 16,
    negative_cache_ms: 10_000,
    workers: 1,
    rest_v1: true,
    snapshot_bodies: 'render',
    snapshots: { dir: path.join(dataDir, 'snapshots'), every: null, keep: 7, namespaces: [0], batches: null },
    purge_hosts: [],
    trusted_proxies: [],
    follow_changes: 'stored',
    follower: { poll_interval: 1, batch_size: 100, concurrency: 4, pages_per_second: 10, dependents_per_second: 0, lease: 10, farm_polls_per_second: 20 },
    transaction_lease: 10,
    transaction_sweep_interval: 5,
    transaction_lifetime: 3600,
    branch_ttl: 30 * 86400,
    change_log_days: 7,
    change_stream_stall_timeout: 30,
    branch_sweep_interval: 3600,
  };
}

function fail(message: string): never {
  throw new Error(`Invalid configuration: ${message}`);
}

const DOMAIN_NAME = /^[a-z0-9][a-z0-9.-]*$/i;
const GROUP_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

function validate(config: Config): Config {
  const { host, port } = config.listen;
  if (typeof host !== 'string' || !host) fail('listen.host must be a host name or address');
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('listen.port must be a port number');
  const storage = config.storage;
  if (storage.backend === 'sqlite') {
    if (typeof storage.path !== 'string' || !storage.path) fail('storage.path must name the SQLite file');
    if (storage.read_cache_mb !== undefined && !(typeof storage.read_cache_mb === 'number' && storage.read_cache_mb >= 0)) fail('storage.read_cache_mb must be a number of megabytes (0: no read cache)');
  } else if (storage.backend === 'postgres') {
    if (typeof storage.url !== 'string' || !storage.url) fail('storage.url must be a postgres:// URL');
  } else if (storage.backend === 'mariadb') {
    if (typeof storage.url !== 'string' || !/^(mysql|mariadb):\/\/[^/]+\/[^/?]+/.test(storage.url)) fail('storage.url must be a mysql:// URL naming a database');
    storage.url = storage.url.replace(/^mariadb:/, 'mysql:');
  } else if (storage.backend === 'cassandra') {
    config.storage = cassandraStorage(storage);
  } else {
    fail(`storage.backend must be sqlite, postgres, mariadb or cassandra, not ${(storage as { backend: unknown }).backend}`);
  }
  if (!config.wikis || typeof config.wikis !== 'object') fail('wikis must map domains to their API URLs');
  for (const [domain, wiki] of Object.entries(config.wikis)) {
    const pattern = domain.startsWith('*.');
    if (!DOMAIN_NAME.test(pattern ? domain.slice(2) : domain)) fail(`'${domain}' is not a domain name, nor a pattern of one ("*.farm.example")`);
    for (const key of ['action_api', 'rest_api', 'parsoid_domain'] as const) {
      const placeholders = String(wiki?.[key] ?? '').match(/\{[^}]*\}/g) ?? [];
      const wrong = placeholders.find((p) => p !== '{domain}' && !(pattern && p === '{label}'));
      if (wrong) fail(`wikis.${domain}.${key}: ${wrong} is not a placeholder here (${pattern ? '{domain}, {label}' : '{domain}'})`);
    }
    if (wiki?.domains_file !== undefined) {
      if (!pattern) fail(`wikis.${domain}.domains_file is for a pattern ("*.farm.example")`);
      if (typeof wiki.domains_file !== 'string' || !fs.existsSync(wiki.domains_file)) fail(`wikis.${domain}.domains_file must name a readable file of domains`);
    }
    if (wiki?.storage_group !== undefined && !(typeof wiki.storage_group === 'string' && GROUP_NAME.test(wiki.storage_group))) fail(`wikis.${domain}.storage_group must be a name of lower-case letters, digits, '.', '_' or '-'`);
    if (!wiki?.action_api || !wiki?.rest_api) fail(`wikis.${domain} needs action_api and rest_api`);
    if (wiki.parsoid !== undefined && !['v3', 'core', 'auto'].includes(wiki.parsoid)) fail(`wikis.${domain}.parsoid must be v3, core or auto`);
    if (wiki.maxlag !== undefined && !(Number.isInteger(wiki.maxlag) && wiki.maxlag >= 0)) fail(`wikis.${domain}.maxlag must be a whole number of seconds`);
    if (wiki.requests_per_second !== undefined && !(typeof wiki.requests_per_second === 'number' && wiki.requests_per_second > 0)) fail(`wikis.${domain}.requests_per_second must be a positive number`);
    for (const key of ['timeout', 'circuit_probe_interval'] as const) {
      if (wiki[key] !== undefined && !(typeof wiki[key] === 'number' && wiki[key]! > 0)) fail(`wikis.${domain}.${key} must be a positive number of seconds`);
    }
    if (wiki.concurrency !== undefined && !(Number.isInteger(wiki.concurrency) && wiki.concurrency >= 1)) fail(`wikis.${domain}.concurrency must be a whole number, at least 1`);
    if (wiki.farm_concurrency !== undefined && !(domain.startsWith('*.') && Number.isInteger(wiki.farm_concurrency) && wiki.farm_concurrency >= 1)) {
      fail(`wikis.${domain}.farm_concurrency must be a whole number, at least 1, in a pattern's entry ("*.farm.example")`);
    }
    if (wiki.circuit_threshold !== undefined && !(Number.isInteger(wiki.circuit_threshold) && wiki.circuit_threshold >= 1)) fail(`wikis.${domain}.circuit_threshold must be a whole number, at least 1`);
    if (wiki.notice_secret !== undefined && !(typeof wiki.notice_secret === 'string' && wiki.notice_secret.length >= 16)) fail(`wikis.${domain}.notice_secret must be a string of at least 16 characters`);
  }
  for (const [key, value] of Object.entries(config.farm ?? {})) {
    if (!(key in defaultConfig().farm)) fail(`farm.${key} is not a setting (${Object.keys(defaultConfig().farm).join(', ')})`);
    if (!(typeof value === 'number' && (value > 0 || (key === 'top_wikis' && value === 0)))) fail(`farm.${key} must be a positive number`);
  }
  if (!Number.isInteger(config.farm.wikis_in_memory) || !Number.isInteger(config.farm.top_wikis) || config.farm.top_wikis > 1000) fail('farm.wikis_in_memory and farm.top_wikis must be whole numbers (top_wikis at most 1000)');
  if (!Number.isInteger(config.max_body_bytes) || config.max_body_bytes <= 0) fail('max_body_bytes must be a positive integer');
  for (const key of ['ttl_sweep_interval', 'latest_check_interval', 'revision_recheck_interval', 'page_cache_ms', 'render_cache_bytes', 'answer_cache_bytes', 'negative_cache_ms', 'transaction_sweep_interval', 'branch_sweep_interval'] as const) {
    if (typeof config[key] !== 'number' || !(config[key] >= 0)) fail(`${key} must be a number of at least 0`);
  }
  for (const key of ['headers_timeout', 'request_timeout', 'send_timeout', 'keep_alive_timeout', 'transaction_lease', 'transaction_lifetime', 'branch_ttl', 'change_log_days', 'change_stream_stall_timeout'] as const) {
    if (typeof config[key] !== 'number' || !(config[key] > 0)) fail(`${key} must be a positive number of seconds`);
  }
  if (config.request_timeout < config.headers_timeout) fail('request_timeout cannot be shorter than headers_timeout');
  if (!Number.isInteger(config.max_connections) || config.max_connections < 1) fail('max_connections must be a positive integer');
  if (!Number.isInteger(config.max_streams_per_client) || config.max_streams_per_client < 1) fail('max_streams_per_client must be a positive integer');
  if (config.max_streams !== undefined && (!Number.isInteger(config.max_streams) || config.max_streams < 1 || config.max_streams > config.max_connections)) {
    fail('max_streams must be a positive integer, at most max_connections');
  }
  const fds = descriptorLimit();
  if (fds !== undefined && config.max_connections * 1.1 > fds - 256) {
    fail(`max_connections ${config.max_connections} leaves too few of the process's ${fds} descriptors; raise the limit (ulimit -n) or lower it`);
  }
  if (typeof config.rest_v1 !== 'boolean') fail('rest_v1 must be true or false');
  if (config.snapshot_bodies !== 'render' && config.snapshot_bodies !== 'snapshot') fail('snapshot_bodies must be render or snapshot');
  const shots = config.snapshots;
  if (typeof shots.dir !== 'string' || !shots.dir) fail('snapshots.dir must name a folder');
  if (shots.every !== null && (typeof shots.every !== 'string' || intervalMs(shots.every) === undefined)) fail('snapshots.every must be a duration: 30m, 12h, 1d (or absent: no schedule)');
  if (shots.batches !== null && (typeof shots.batches !== 'string' || intervalMs(shots.batches) === undefined)) fail('snapshots.batches must be a duration: 15m, 1h (or absent: no batches)');
  if (!Number.isInteger(shots.keep) || shots.keep < 1) fail('snapshots.keep must be a positive integer');
  if (!Array.isArray(shots.namespaces) || !shots.namespaces.length || !shots.namespaces.every((n) => Number.isInteger(n) && n >= 0)) fail('snapshots.namespaces must list namespace numbers');
  if (!Array.isArray(config.purge_hosts) || !config.purge_hosts.every((h) => typeof h === 'string' && /^[\w.:[\]-]+:\d+$/.test(h))) {
    fail('purge_hosts must list cache hosts as "host:port"');
  }
  if (!Array.isArray(config.trusted_proxies)) fail('trusted_proxies must list addresses or CIDR ranges');
  for (const proxy of config.trusted_proxies) {
    try {
      parseProxy(proxy);
    } catch (e) {
      fail(`trusted_proxies: ${(e as Error).message}`);
    }
  }
  if (typeof config.follow_changes !== 'boolean' && config.follow_changes !== 'stored') fail('follow_changes must be stored, true or false');
  const followerSettings = Object.keys(defaultConfig().follower);
  for (const [key, value] of Object.entries(config.follower ?? {})) {
    if (!followerSettings.includes(key)) fail(`follower.${key} is not a setting (${followerSettings.join(', ')})`);
    if (key === 'dependents_per_second' ? !(typeof value === 'number' && value >= 0) : typeof value !== 'number' || !(value > 0)) {
      fail(`follower.${key} must be a ${key === 'dependents_per_second' ? 'number, 0 or more' : 'positive number'}`);
    }
  }
  const kill = config.fault_injection?.transaction_kill;
  if (kill !== undefined && !['after-store', 'after-primary-unrecorded', 'after-primary', 'after-dependent', 'random'].includes(kill)) {
    fail('fault_injection.transaction_kill must be after-store, after-primary-unrecorded, after-primary, after-dependent or random');
  }
  if (!Number.isInteger(config.workers) || config.workers < 0 || config.workers > 256) fail('workers must be an integer from 0 to 256');
  if (typeof config.user_agent !== 'string' || !config.user_agent.trim()) fail('user_agent must name this deployment');
  return config;
}

/**
 * A server database named by one URL, as hosting platforms hand it over: its scheme names the
 * engine; the pool size set in the file stays.
 */
function storageFromUrl(url: string, current: StorageConfig): StorageConfig {
  const pool = 'pool_size' in current ? { pool_size: current.pool_size } : {};
  if (/^postgres(ql)?:\/\//.test(url)) return { backend: 'postgres', url, ...pool };
  if (/^(mysql|mariadb):\/\//.test(url)) return { backend: 'mariadb', url, ...pool };
  fail('DATABASE_URL must be a postgres://, mysql:// or mariadb:// URL');
}

/** A duration as the config writes it (`30m`, `12h`, `1d`) in ms, or undefined if it is not one. */
export function intervalMs(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(m|h|d)$/.exec(text.trim());
  if (!m) return undefined;
  const ms = Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
  return ms >= 60_000 ? ms : undefined;
}

/** Defaults, then the YAML file (CONFIG or ./config.yaml when present), then the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = env.DATA_DIR ?? './data';
  const config = defaultConfig(dataDir);
  const file = env.CONFIG ?? (fs.existsSync('config.yaml') ? 'config.yaml' : undefined);
  if (file) {
    let text: string;
    let parsed: Partial<Config> | undefined;
    try {
      text = fs.readFileSync(file, 'utf8');
      // An empty or all-comment file means "all defaults".
      parsed = (text.replace(/#.*$/gm, '').trim() ? loadYaml(text) : undefined) as Partial<Config> | undefined;
    } catch (e) {
      fail(`${file}: ${(e as Error).message.split('\n', 1)[0]}`);
    }
    if (parsed !== undefined && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))) fail(`${file}: settings must be a YAML mapping (key: value)`);
    if (parsed) {
      const wrong = unknownSetting(parsed as Record<string, unknown>, [...Object.keys(defaultConfig()), 'admin_token', 'fault_injection', 'max_streams']);
      if (wrong) fail(`${file}: ${wrong}`);
      Object.assign(config, parsed, {
        listen: { ...config.listen, ...parsed.listen },
        storage: parsed.storage ? { ...parsed.storage } : config.storage,
        wikis: parsed.wikis ?? config.wikis,
        follower: { ...config.follower, ...parsed.follower },
        farm: { ...config.farm, ...parsed.farm },
        snapshots: { ...config.snapshots, ...parsed.snapshots },
      });
      // Following the wiki keeps pages fresh: asking it about each page is then only a safety net.
      if (parsed.follow_changes === true && parsed.latest_check_interval === undefined) config.latest_check_interval = 3600;
    }
  }
  if (env.PORT) config.listen.port = Number(env.PORT);
  if (env.HOST) config.listen.host = env.HOST;
  if (env.ADMIN_TOKEN) config.admin_token = env.ADMIN_TOKEN;
  if (env.LOG_LEVEL) config.log_level = env.LOG_LEVEL;
  if (env.WORKERS) config.workers = Number(env.WORKERS);
  if (env.DATABASE_URL) config.storage = storageFromUrl(env.DATABASE_URL, config.storage);
  return validate(config);
}

import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';

export interface WikiConfig {
  /** The wiki's Action API, e.g. https://en.wikipedia.org/w/api.php */
  action_api: string;
  /** The wiki's REST base (rest.php), where Parsoid answers. */
  rest_api: string;
  /** The domain Parsoid's v3 routes expect (the host of $wgServer); defaults to rest_api's host. */
  parsoid_domain?: string;
}

export type StorageConfig =
  | { backend: 'sqlite'; path: string }
  | { backend: 'postgres'; url: string; pool_size?: number };

export interface Config {
  listen: { host: string; port: number };
  storage: StorageConfig;
  wikis: Record<string, WikiConfig>;
  admin_token?: string;
  user_agent: string;
  log_level: string;
  max_body_bytes: number;
  /** How often expired rows are swept from storage, in seconds (0 = never). */
  ttl_sweep_interval: number;
  /** How old a page's "latest revision" may get before the wiki is asked again, in seconds. */
  latest_check_interval: number;
  /**
   * How long a page's stored state may be served from memory, in ms. This process's own writes
   * are seen at once; other processes' writes after at most this long.
   */
  page_cache_ms: number;
  /** Bytes of rendered content kept in memory (renders are immutable by tid). */
  render_cache_bytes: number;
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
      },
    },
    user_agent: DEFAULT_USER_AGENT,
    log_level: 'info',
    max_body_bytes: 16 * 1024 * 1024,
    ttl_sweep_interval: 300,
    latest_check_interval: 60,
    page_cache_ms: 5000,
    render_cache_bytes: 32 * 1024 * 1024,
  };
}

function fail(message: string): never {
  throw new Error(`Invalid configuration: ${message}`);
}

function validate(config: Config): Config {
  const { host, port } = config.listen;
  if (typeof host !== 'string' || !host) fail('listen.host must be a host name or address');
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('listen.port must be a port number');
  const storage = config.storage;
  if (storage.backend === 'sqlite') {
    if (typeof storage.path !== 'string' || !storage.path) fail('storage.path must name the SQLite file');
  } else if (storage.backend === 'postgres') {
    if (typeof storage.url !== 'string' || !storage.url) fail('storage.url must be a postgres:// URL');
  } else {
    fail(`storage.backend must be sqlite or postgres, not ${(storage as { backend: unknown }).backend}`);
  }
  if (!config.wikis || typeof config.wikis !== 'object') fail('wikis must map domains to their API URLs');
  for (const [domain, wiki] of Object.entries(config.wikis)) {
    if (!/^[a-z0-9][a-z0-9.-]*$/i.test(domain)) fail(`'${domain}' is not a domain name`);
    if (!wiki?.action_api || !wiki?.rest_api) fail(`wikis.${domain} needs action_api and rest_api`);
  }
  if (!Number.isInteger(config.max_body_bytes) || config.max_body_bytes <= 0) fail('max_body_bytes must be a positive integer');
  for (const key of ['ttl_sweep_interval', 'latest_check_interval', 'page_cache_ms', 'render_cache_bytes'] as const) {
    if (typeof config[key] !== 'number' || !(config[key] >= 0)) fail(`${key} must be a number of at least 0`);
  }
  if (typeof config.user_agent !== 'string' || !config.user_agent.trim()) fail('user_agent must name this deployment');
  return config;
}

/** Defaults, then the YAML file (CONFIG or ./config.yaml when present), then the environment. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = env.DATA_DIR ?? './data';
  const config = defaultConfig(dataDir);
  const file = env.CONFIG ?? (fs.existsSync('config.yaml') ? 'config.yaml' : undefined);
  if (file) {
    const text = fs.readFileSync(file, 'utf8');
    // An empty or all-comment file means "all defaults".
    const parsed = (text.replace(/#.*$/gm, '').trim() ? loadYaml(text) : undefined) as Partial<Config> | undefined;
    if (parsed && typeof parsed === 'object') {
      Object.assign(config, parsed, {
        listen: { ...config.listen, ...parsed.listen },
        storage: parsed.storage ? { ...parsed.storage } : config.storage,
        wikis: parsed.wikis ?? config.wikis,
      });
    }
  }
  if (env.PORT) config.listen.port = Number(env.PORT);
  if (env.HOST) config.listen.host = env.HOST;
  if (env.ADMIN_TOKEN) config.admin_token = env.ADMIN_TOKEN;
  if (env.LOG_LEVEL) config.log_level = env.LOG_LEVEL;
  return validate(config);
}

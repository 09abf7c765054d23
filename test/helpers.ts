import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createApp, type App } from '../src/app.js';
import { defaultConfig, type CassandraStorageConfig, type Config, type StorageConfig } from '../src/config.js';

export const ADMIN_TOKEN = 'test-admin-token';
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** The throwaway PostgreSQL database the test command created (or a local default). */
export const PG_URL = process.env.WIKISTORE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function tempDir(prefix = 'wikistore-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function sqliteConfig(): StorageConfig {
  return { backend: 'sqlite', path: path.join(tempDir(), 'store.sqlite3') };
}

export function postgresConfig(): StorageConfig {
  return { backend: 'postgres', url: PG_URL, pool_size: 10 };
}

/** The throwaway MariaDB database the test command created (or a local default). */
export const MARIADB_URL = process.env.WIKISTORE_TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306/test';

export function mariadbConfig(): StorageConfig {
  return { backend: 'mariadb', url: MARIADB_URL, pool_size: 10 };
}

/** The Cassandra node the test command started (one node, replication factor 1). */
export const CASSANDRA_HOST = process.env.WIKISTORE_TEST_CASSANDRA ?? '127.0.0.1';

export function cassandraConfig(overrides: Partial<CassandraStorageConfig> = {}): CassandraStorageConfig {
  return {
    backend: 'cassandra',
    contact_points: [CASSANDRA_HOST],
    local_data_center: 'datacenter1',
    keyspace_prefix: 'wst',
    replication: { datacenter1: 1 },
    consistency: { read: 'local_quorum', write: 'local_quorum', serial: 'serial' },
    ...overrides,
  };
}

const ALL_BACKENDS: { name: string; storage: () => StorageConfig }[] = [
  { name: 'sqlite', storage: sqliteConfig },
  { name: 'postgres', storage: postgresConfig },
  { name: 'mariadb', storage: mariadbConfig },
  { name: 'cassandra', storage: cassandraConfig },
];

/** Every engine, or those WIKISTORE_TEST_BACKENDS names (comma-separated), for a quicker loop on one. */
export const BACKENDS = process.env.WIKISTORE_TEST_BACKENDS
  ? ALL_BACKENDS.filter((b) => process.env.WIKISTORE_TEST_BACKENDS!.split(',').includes(b.name))
  : ALL_BACKENDS;

let domainCounter = 0;
/** A fresh domain per test keeps tests apart even in one shared database. */
export function freshDomain(): string {
  return `t${process.pid}-${Date.now().toString(36)}-${domainCounter++}.test`;
}

export interface TestServer {
  app: App;
  base: string;
  domain: string;
  close(): Promise<void>;
}

/**
 * Seconds a test server waits for one answer of the Action API (the service's default: 15): the
 * suite's files share one wiki and its two cores, and while the longest ones render every article
 * at once an edit or a query of another file can queue behind them for longer. A test of the
 * timeout itself sets its own.
 */
export const TEST_WIKI_TIMEOUT_S = 60;

/** `wiki`: settings of the test domain's wiki (which answers nothing unless overridden). */
export async function startServer(overrides: Partial<Config> = {}, wiki: Partial<Config['wikis'][string]> = {}): Promise<TestServer> {
  const domain = freshDomain();
  const config: Config = {
    ...defaultConfig(tempDir()),
    storage: sqliteConfig(),
    wikis: { [domain]: { action_api: 'http://127.0.0.1:1/api.php', rest_api: 'http://127.0.0.1:1/rest.php', ...wiki } },
    admin_token: ADMIN_TOKEN,
    log_level: 'silent',
    ttl_sweep_interval: 0,
    // Tests that follow say so: a follower polling the wiki would add to the requests they count.
    follow_changes: false,
    ...overrides,
  };
  config.listen = { host: '127.0.0.1', port: 0 };
  for (const settings of Object.values(config.wikis)) settings.timeout ??= TEST_WIKI_TIMEOUT_S;
  const app = await createApp(config, { log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  const address = await app.listen();
  return { app, base: `http://127.0.0.1:${address.port}`, domain, close: () => app.close() };
}

export interface HttpResult {
  /** The URL asked for (what relative Location headers resolve against). */
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  text: string;
  json: any;
}

/** A plain HTTP client (fetch cannot send a GET body, which the table API uses). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; /** The local address to connect from (any of 127.0.0.0/8 on loopback). */ from?: string } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    if (Buffer.isBuffer(options.body) || typeof options.body === 'string') payload = Buffer.from(options.body as string);
    else {
      payload = Buffer.from(JSON.stringify(options.body));
      headers['content-type'] ??= 'application/json';
    }
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers, agent: false, localAddress: options.from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ url, status: res.statusCode ?? 0, headers: res.headers, raw, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A Location (or Content-Location) header resolved as a client resolves it: the path and query it names. */
export function located(res: HttpResult, header: 'location' | 'content-location' = 'location'): string | undefined {
  const value = res.headers[header];
  if (typeof value !== 'string') return undefined;
  const u = new URL(value, res.url);
  return u.pathname + u.search;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Requests a service process has made to a wiki endpoint (Parsoid renders unless told), from its metrics. */
export async function parsoidRequests(base: string, domain: string, endpoint = 'parsoid'): Promise<number> {
  const text = (await request(`${base}/metrics`)).text;
  const m = new RegExp(`wiki_requests_total\\{domain="${domain.replace(/\./g, '\\.')}",endpoint="${endpoint}"\\} (\\d+)`).exec(text);
  return m ? Number(m[1]) : 0;
}

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/bin/main.js');

/** The service as a real process (its config from `env`), and the port it listens on once it does. */
export function startProcess(env: Record<string, string>): { child: ChildProcess; port: Promise<number> } {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"port":(\d+)[^\n]*"msg":"listening"/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code, signal) => reject(new Error(`exited ${code ?? signal}: ${out.slice(-500)}`)));
  });
  port.catch(() => {});
  return { child, port };
}

/**
 * A config file for a service process on a shared SQLite file in `dir`, or on `storage` (two
 * processes, one storage), with short leases so another process finishes a dead one's transactions quickly.
 * `alsoDomains`: more names for the same wiki (each a wiki of its own to the service).
 */
export function processConfig(dir: string, domain: string, wikiUrl: string, extra = '', storage?: StorageConfig, alsoDomains: string[] = []): Record<string, string> {
  const file = path.join(dir, `config-${domainCounter++}.yaml`);
  const shared = storage ?? { backend: 'sqlite', path: path.join(dir, 'shared.sqlite3') };
  fs.writeFileSync(
    file,
    `storage: ${JSON.stringify(shared)}\n` +
      `wikis:\n${[domain, ...alsoDomains].map((d) => `  ${d}:\n    action_api: ${wikiUrl}/api.php\n    rest_api: ${wikiUrl}/rest.php\n    timeout: ${TEST_WIKI_TIMEOUT_S}\n`).join('')}` +
      `admin_token: ${ADMIN_TOKEN}\nlog_level: info\ntransaction_lease: 1\ntransaction_sweep_interval: 0.3\n` +
      `${extra.includes('follow_changes') ? '' : 'follow_changes: false\n'}${extra}`,
  );
  return { CONFIG: file, PORT: '0', WORKERS: '0' };
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { spawnPinned, waitForLine } from './harness.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ADMIN_TOKEN = 'bench-admin-token';
export const DOMAIN = 'bench.example';

export interface Running {
  child: ChildProcess;
  base: string;
  stop(): Promise<void>;
}

async function started(child: ChildProcess, pattern: RegExp): Promise<Running> {
  const m = await waitForLine(child, pattern);
  return {
    child,
    base: `http://127.0.0.1:${m[1]}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The service itself, as `npm start` runs it, pinned to core 0, with its own data dir. */
export async function startService(
  /** SQLite in the service's own dir, SQLite at a path, PostgreSQL, or Cassandra (its storage section as YAML). */
  storage: 'sqlite' | { path: string } | { url: string } | { yaml: string },
  wikiUrl = 'http://127.0.0.1:1',
  env: Record<string, string> = {},
  extraYaml = '',
  /** Worker processes under the supervisor, on every core; 0 is one pinned process, no supervisor. */
  workers = 0,
  /** More settings of the bench wiki (YAML lines indented under it). */
  wikiYaml = '',
  /** The whole `wikis:` section instead of the bench wiki (YAML lines indented under it). */
  wikisYaml?: string,
): Promise<Running & { startupMs: number; dir: string; config: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wikistore-bench-'));
  const config = path.join(dir, 'config.yaml');
  const sqlitePath = storage === 'sqlite' ? path.join(dir, 'db.sqlite3') : 'path' in storage ? storage.path : undefined;
  const storageYaml =
    sqlitePath !== undefined ? `  backend: sqlite\n  path: ${JSON.stringify(sqlitePath)}`
    : typeof storage === 'object' && 'yaml' in storage ? storage.yaml
    : `  backend: postgres\n  url: ${JSON.stringify((storage as { url: string }).url)}`;
  fs.writeFileSync(
    config,
    `storage:\n${storageYaml}\nwikis:\n${wikisYaml ?? `  ${DOMAIN}:\n    action_api: ${wikiUrl}/api.php\n    rest_api: ${wikiUrl}/rest.php\n${wikiYaml}`}admin_token: ${ADMIN_TOKEN}\nlog_level: warn\n${extraYaml.includes('follow_changes') ? '' : 'follow_changes: false\n'}${extraYaml}`,
  );
  const t0 = performance.now();
  // The node flags of `npm start` (package.json): a small young generation and an old generation
  // collected before it grows far past the live data (about 20 MB of 128 MB allowed) keep RSS down
  // under load; the old generation starts at 48 MB, else V8 collects it in full every quarter
  // second under load (a pause of 7 ms each, which made reads' p99 twice the bare server's).
  const child = spawnPinned(
    process.execPath,
    // WIKISTORE_BENCH_NODE_ARGS: more node flags for the service (e.g. --cpu-prof, to see where a scenario's time goes).
    ['--max-semi-space-size=4', '--max-old-space-size=128', '--initial-old-space-size=48', ...(process.env.WIKISTORE_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), path.join(HERE, '../src/bin/main.js')],
    {
      CONFIG: config,
      PORT: '0',
      LOG_LEVEL: 'info',
      // By default one process, no supervisor: what is measured (RSS, CPU) is the process that serves.
      WORKERS: String(workers),
      ...env,
    },
    workers === 0,
  );
  // Every worker listens (on the port the first one was given) before the service counts as started.
  const listening = new RegExp(`(?:"port":(\\d+)[^\\n]*"msg":"listening"[^]*){${Math.max(1, workers)}}`);
  const running = await started(child, listening);
  return { ...running, startupMs: performance.now() - t0, dir, config };
}

/** A bare node:http server answering with exactly these bytes and headers (`batched`: written as the service writes). */
export async function startBare(headers: Record<string, string>, body: Buffer, batched = false): Promise<Running> {
  const file = path.join(os.tmpdir(), `wikistore-bare-${process.pid}-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify({ headers, body: body.toString('base64') }));
  const child = spawnPinned(process.execPath, [path.join(HERE, 'bare-server.js'), file, ...(batched ? ['batched'] : [])]);
  return started(child, /listening (\d+)/);
}

/** The bare server reading a render's row from the store with the engine's driver (bench/bare-row-server.ts). */
export async function startBareRows(store: { domain: string; sqlite?: string; postgres?: string; revision?: boolean }): Promise<Running> {
  const child = spawnPinned(process.execPath, [path.join(HERE, 'bare-row-server.js'), JSON.stringify(store)]);
  return started(child, /listening (\d+)/);
}

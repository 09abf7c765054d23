import { pino } from 'pino';
import { createApp, type App } from '../app.js';
import { loadConfig, type Config } from '../config.js';
import type { RequestContext } from '../router/types.js';
import { WikiEntries } from '../upstream/wiki-entries.js';

/** What the command-line tools (backfill, snapshot) share: the config, the wiki named, the app. */

/** A tool's refusal of its arguments: the reason, then its usage, and status 2. */
export function usageOf(text: string): (message?: string) => never {
  return (message) => {
    if (message) console.error(`${message}\n`);
    console.error(text);
    process.exit(2);
  };
}

/** The config, or the process ends with its error (status 2). */
export function toolConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
}

/** The wiki a tool works on: the one named (listed, or of a pattern), or the only one configured. */
export function toolDomain(config: Config, given: string | undefined, usage: (message: string) => never): string {
  const domain = given ?? (Object.keys(config.wikis).length === 1 ? Object.keys(config.wikis)[0] : undefined);
  if (!domain || !new WikiEntries(config.wikis).match(domain)) usage(`--domain must name a configured wiki, or one of a pattern: ${Object.keys(config.wikis).join(', ')}`);
  return domain;
}

/** The service's own code on the same storage, without listening or following, and a context to run it in. */
export async function toolApp(config: Config, name: string): Promise<{ app: App; ctx: RequestContext }> {
  const log = pino({ level: 'warn', base: { service: `wikistore-${name}` } }, pino.destination(2));
  // A tool reads each row once (a snapshot, a backfill): SQLite's read cache would only cost it the
  // sizing, freezing and keeping of every answer (a tenth of a snapshot's time from storage).
  const storage = config.storage.backend === 'sqlite' ? { ...config.storage, read_cache_mb: 0 } : config.storage;
  const app = await createApp({ ...config, storage, follow_changes: false, ttl_sweep_interval: 0, transaction_sweep_interval: 0 }, { log });
  return { app, ctx: app.router.context({ requestId: name, admin: true, log }) };
}

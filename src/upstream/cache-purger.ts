import type { Logger } from 'pino';
import { HttpError } from '../util/errors.js';

/**
 * Tells the HTTP caches in front of the service (Varnish, see deploy/varnish) which answers
 * changed: one `PURGE /` per cache host naming the surrogate keys (`xkey-purge`, Varnish's xkey
 * module: every URL form tagged with them, query strings and spellings included), and one
 * `PURGE {path}` per URL for caches without it. Without hosts it does nothing.
 *
 * Every purge is sent again `repeatAfterMs` later: another process sharing the storage may serve
 * the old page state from memory for that long (page_cache_ms), and a cache that fetched from it
 * right after the first purge would otherwise keep the old answer until it expires.
 */
export class CachePurger {
  private readonly repeats = new Set<NodeJS.Timeout>();

  constructor(
    private readonly hosts: string[],
    private readonly log: Logger,
    private readonly count: (outcome: 'purged' | 'failed', n: number) => void = () => {},
    private readonly repeatAfterMs = 0,
  ) {}

  get enabled(): boolean {
    return this.hosts.length > 0;
  }

  /** Purges every key and path on every host; rejects (503) if a host could not be told, so callers can retry. */
  async purge(paths: string[], keys: string[] = []): Promise<void> {
    if (!this.enabled || (paths.length === 0 && keys.length === 0)) return;
    if (this.repeatAfterMs > 0) {
      const timer = setTimeout(() => {
        this.repeats.delete(timer);
        this.send(paths, keys).catch(() => undefined);
      }, this.repeatAfterMs);
      timer.unref();
      this.repeats.add(timer);
    }
    await this.send(paths, keys);
  }

  /** Drops the repeats not sent yet (shutdown). */
  close(): void {
    for (const timer of this.repeats) clearTimeout(timer);
    this.repeats.clear();
  }

  private async send(paths: string[], keys: string[]): Promise<void> {
    const results = await Promise.allSettled(
      this.hosts.flatMap((host) => [...(keys.length ? [this.one(host, '/', { 'xkey-purge': keys.join(' ') })] : []), ...paths.map((path) => this.one(host, path))]),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    this.count('purged', results.length - failed.length);
    if (failed.length > 0) {
      this.count('failed', failed.length);
      this.log.warn({ err: (failed[0] as PromiseRejectedResult).reason, failed: failed.length }, 'purging the HTTP caches failed');
      throw new HttpError(503, 'purge-failed', `${failed.length} of ${results.length} purges failed; they will be retried.`, { headers: { 'retry-after': '5' } });
    }
  }

  /** The same, with what to purge as one value. */
  purgeAll(what: { urls: string[]; keys: string[] }): Promise<void> {
    return this.purge(what.urls, what.keys);
  }

  /** Purges in the background: for changes the service learns of itself (a page it re-checked). */
  purgeLater(what: { urls: string[]; keys?: string[] }): void {
    this.purge(what.urls, what.keys ?? []).catch(() => undefined);
  }

  private async one(host: string, path: string, headers: Record<string, string> = {}): Promise<void> {
    const res = await fetch(`http://${host}${path}`, { method: 'PURGE', headers, signal: AbortSignal.timeout(5000) });
    await res.arrayBuffer();
    if (res.status >= 500) throw new Error(`${host} answered ${res.status} to PURGE ${path}`);
  }
}

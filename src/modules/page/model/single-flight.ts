/**
 * One promise per key for all concurrent callers, gone once it settles: how the page module asks
 * the wiki, or renders, once however many readers miss at the same moment.
 */
export class SingleFlight {
  private readonly inflight = new Map<string, Promise<unknown>>();

  /** Runs `fn` once for all concurrent callers with the same key. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.inflight.get(key);
    if (running) return running as Promise<T>;
    const promise = fn().finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    return promise;
  }

  /**
   * Like `run`, but the key stays taken until `settled` (e.g. a render answered before it was
   * stored), so callers arriving meanwhile join instead of starting again.
   */
  runUntil<T>(key: string, fn: () => Promise<{ value: T; settled: Promise<void> }>): Promise<T> {
    const running = this.inflight.get(key);
    if (running) return running as Promise<T>;
    const promise = fn().then(
      ({ value, settled }) => {
        const done = () => this.inflight.delete(key);
        settled.then(done, done);
        return value;
      },
      (err) => {
        this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, promise);
    return promise;
  }
}

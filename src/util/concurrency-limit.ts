import { HttpError } from './errors.js';

/**
 * Runs the tasks handed to it at most `n` at a time, in the order given. What a snapshot asks of
 * p-queue, without its events and timers: p-queue cost about 10 µs a task where this costs 2, and a
 * snapshot runs one task a page.
 */
export function concurrencyLimit(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  return boundedConcurrency(n, Infinity, () => new Error('unreachable'));
}

/**
 * `concurrencyLimit` that lets at most `maxWaiting` tasks wait: one more is refused at once with
 * `busy()` (thrown), not queued behind work it would wait seconds for.
 */
export function boundedConcurrency(n: number, maxWaiting: number, busy: () => Error): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    // A finished task hands its place to the next waiting one: no newcomer takes it in between.
    if (active < n) active++;
    else if (waiting.length >= maxWaiting) throw busy();
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/**
 * Heavy work a process does `n` at a time with `maxWaiting` more waiting (each holding a long
 * article's text or tree while it runs): one more is refused at once, a 503 `kind` with
 * `Retry-After`, saying that `what` are being made.
 */
export function workGate(n: number, maxWaiting: number, kind: string, what: string): <T>(task: () => Promise<T>) => Promise<T> {
  return boundedConcurrency(n, maxWaiting, () => new HttpError(503, kind, `${n + maxWaiting} ${what} are being made or waiting; ask again shortly.`, { headers: { 'retry-after': '2' } }));
}

/**
 * `fn` of each item, at most `n` at a time, the results in the items' order. A request that fans
 * out into one storage read per item (a listing's thousand pages) takes its turns beside other
 * requests' reads instead of queueing all of its own ahead of them in the connection pool.
 */
export function mapAtMost<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const limit = concurrencyLimit(n);
  return Promise.all(items.map((item) => limit(() => fn(item))));
}

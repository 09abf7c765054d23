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
 * `boundedConcurrency` shared fairly by keys (the wikis of a farm): a freed place goes to the next
 * key in turn with a task waiting, not to the oldest waiting task, and when every waiting place is
 * taken a newcomer whose key waits for fewer tasks than the key waiting for the most takes that
 * key's newest place (refused with `busy()` in its stead). One key alone may still use every place;
 * a flood of one key's tasks neither refuses other keys' tasks nor makes them wait behind it.
 */
export function fairConcurrency(n: number, maxWaiting: number, busy: () => Error): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  let active = 0;
  let waitingCount = 0;
  /** Keys with tasks waiting, in the order their turns come (a key served moves to the end). */
  const waiting = new Map<string, { start: () => void; refuse: (err: Error) => void }[]>();
  const handOver = (): boolean => {
    for (const [key, queue] of waiting) {
      const next = queue.shift()!;
      waiting.delete(key);
      if (queue.length > 0) waiting.set(key, queue);
      waitingCount--;
      next.start();
      return true;
    }
    return false;
  };
  /** Takes a waiting place from the key waiting for the most, if it waits for more than `key` would. */
  const displaced = (key: string): boolean => {
    let longest: string | undefined;
    let most = 0;
    for (const [k, queue] of waiting) if (queue.length > most) [longest, most] = [k, queue.length];
    if (longest === undefined || most <= (waiting.get(key)?.length ?? 0) + 1) return false;
    const queue = waiting.get(longest)!;
    queue.pop()!.refuse(busy());
    if (queue.length === 0) waiting.delete(longest);
    waitingCount--;
    return true;
  };
  return async <T>(key: string, task: () => Promise<T>): Promise<T> => {
    if (active < n) active++;
    else {
      if (waitingCount >= maxWaiting && !displaced(key)) throw busy();
      await new Promise<void>((start, refuse) => {
        const queue = waiting.get(key);
        if (queue) queue.push({ start, refuse });
        else waiting.set(key, [{ start, refuse }]);
        waitingCount++;
      });
    }
    try {
      return await task();
    } finally {
      // A finished task hands its place to the next waiting one: no newcomer takes it in between.
      if (!handOver()) active--;
    }
  };
}

/**
 * Heavy work a process does `n` at a time with `maxWaiting` more waiting (each holding a long
 * article's text or tree while it runs), shared fairly by wikis (`fairConcurrency`): one more is
 * refused at once, a 503 `kind` with `Retry-After`, saying that `what` are being made.
 */
export function workGate(n: number, maxWaiting: number, kind: string, what: string): <T>(wiki: string, task: () => Promise<T>) => Promise<T> {
  return fairConcurrency(n, maxWaiting, () => new HttpError(503, kind, `${n + maxWaiting} ${what} are being made or waiting; ask again shortly.`, { headers: { 'retry-after': '2' } }));
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

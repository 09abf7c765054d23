import { LRUCache } from 'lru-cache';
import { SecondSight } from '../util/bounded-map.js';
import type { Reuse } from '../router/types.js';

/** A finished answer as it went out, kept to be sent again while its handler's `Reuse` holds. */
export interface MemoEntry {
  status: number;
  /**
   * Final headers as written (every header the front adds included), as `writeHead` takes them:
   * name, value, ..., the request id's pair last, its value set for each answer (`headersFor`).
   */
  headers: string[];
  body: Buffer;
  /** The route's label, for the request metrics. */
  label: string;
  reuse: Reuse;
  /** The request metrics' recorder of its answers sent again, for one method (GET or HEAD). */
  record?: { method: string; observe: (seconds: number) => void };
}

/** The header list of an answer to keep: its headers but the request id, whose slot comes last. */
export function keptHeaders(headers: Record<string, string>): string[] {
  const list: string[] = [];
  for (const name in headers) if (name !== 'x-request-id') list.push(name, headers[name]!);
  list.push('x-request-id', '');
  return list;
}

/**
 * An entry's headers for one answer, its request id set in place: `writeHead` copies them before it
 * returns, so one list serves every answer sent from the entry, one at a time.
 */
export function headersFor(entry: MemoEntry, requestId: string): string[] {
  entry.headers[entry.headers.length - 1] = requestId;
  return entry.headers;
}

/** Bytes an entry holds beyond its body and key: its headers and the cache's bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 1024;
/**
 * Requests whose answers are kept only once asked again among the last this many: a scan over
 * thousands of renders, each read once, would otherwise keep every answer it made (and the body
 * it holds) for nothing, which cost such reads about a sixth of their throughput.
 */
const SEEN_KEYS = 4096;
/**
 * Longer keys (a URI or `Accept` of kilobytes, which a surface's open query string lets through to a
 * 200) take the full path: remembered, 4,096 of them could hold 60 MB.
 */
const MAX_KEY_LENGTH = 1024;

/**
 * Request headers that change what an answer is (or whether it may be shared): with any of them
 * the request takes the full path. Conditional requests are answered there too (304s), and an
 * admin's `Cache-Control: no-cache` asks for the wiki's answer. Cookies and credentials other than
 * the admin token are never part of an answer a handler lets be reused.
 */
const BYPASS = ['cache-control', 'pragma', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'range'];
/** A GET or HEAD with a body takes the full path: its answer is not for the body-less request. */
const BODY = ['content-length', 'transfer-encoding'];

/**
 * Answers to GETs sent again without routing, handling or serialising, while the handler's
 * `Reuse` says they are what the handler would answer now (SQLite's data version unchanged, the
 * page's state in memory unchanged, and before a time). The full path costs about as much again as
 * node:http itself for a hot read; this one a lookup and a check.
 *
 * The key is everything a reusable answer may depend on: the path and query as sent, whether the
 * admin credential came, and the `Accept` and `Accept-Encoding` headers (answers vary by both).
 * An answer that depends on who asks too (a private draft) is kept per caller, under that key and
 * the `Cookie` and `Authorization` sent.
 */
export class AnswerMemo {
  private readonly entries: LRUCache<string, Kept>;
  private readonly seen = new SecondSight(SEEN_KEYS);

  constructor(maxBytes: number) {
    this.entries = new LRUCache({ maxSize: Math.max(1, maxBytes), sizeCalculation: (e, key) => ENTRY_OVERHEAD_BYTES + 2 * key.length + (isMark(e) ? 0 : e.body.length) });
  }

  /** The key of a request whose answer may be memoised, or undefined when it must take the full path. */
  static keyOf(method: string, uri: string, admin: boolean, headers: Record<string, string | undefined>): string | undefined {
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    for (const name of BODY) if (headers[name] !== undefined) return undefined;
    return AnswerMemo.key(admin ? 'a' : '-', uri, headers, '');
  }

  /**
   * The key of a POST that only reads (a query sent in its body; see `Route.readsOnly`): its
   * body and type are part of it, and a body of over 1 KB takes the full path.
   */
  static keyOfRead(uri: string, admin: boolean, headers: Record<string, string | undefined>, body: Buffer): string | undefined {
    if (body.length > MAX_KEY_LENGTH) return undefined;
    return AnswerMemo.key(admin ? 'A' : 'P', uri, headers, `\u0000${headers['content-type'] ?? ''}\u0000${body.toString('latin1')}`);
  }

  private static key(kind: string, uri: string, headers: Record<string, string | undefined>, rest: string): string | undefined {
    for (const name of BYPASS) if (headers[name] !== undefined) return undefined;
    const key = `${kind}${uri}\u0000${headers.accept ?? ''}\u0000${headers['accept-encoding'] ?? ''}${rest}`;
    return key.length <= MAX_KEY_LENGTH ? key : undefined;
  }

  /** The entry for `key` if it may still be sent; one that may not is dropped. */
  get(key: string, now: number, headers: Record<string, string | undefined>): MemoEntry | undefined {
    const found = this.find(key, now, headers);
    return found && this.confirm(found) ? found.entry : undefined;
  }

  /**
   * The entry for `key` if its time has not run out, before asking whether what it was made from
   * is unchanged (`confirm`): the question can then be asked once the answer is about to go out,
   * which, for answers written together, is once for all of them (see `Reuse.valid`).
   */
  find(key: string, now: number, headers: Record<string, string | undefined>): Found | undefined {
    let found = this.entries.get(key);
    if (found && isMark(found)) {
      key = callerKey(key, headers) ?? '';
      found = key ? this.entries.get(key) : undefined;
    }
    if (!found || isMark(found)) return undefined;
    if (now < found.reuse.until) return { key, entry: found };
    this.entries.delete(key);
    // Asked again after its time ran out: the answer made next is kept at once.
    this.seen.note(key);
    return undefined;
  }

  /** Whether a found entry may be sent now; one that may not is dropped (unless replaced since). */
  confirm({ key, entry }: Found): boolean {
    if (entry.reuse.valid?.() ?? true) {
      entry.reuse.onReuse?.();
      return true;
    }
    if (this.entries.peek(key) === entry) {
      this.entries.delete(key);
      this.seen.note(key);
    }
    return false;
  }

  /**
   * Keeps an answer, if its request was made before among the last `SEEN_KEYS` (see there) and it
   * may be sent again at all; one that depends on its caller under the caller's own key, the
   * request's key marking that answers to it are kept so.
   */
  set(key: string, entry: MemoEntry, now: number, headers: Record<string, string | undefined>): void {
    if (!(now < entry.reuse.until)) return;
    if (!entry.reuse.perCaller) {
      if (this.seen.admits(key)) this.entries.set(key, entry);
      return;
    }
    const own = callerKey(key, headers);
    if (own === undefined || !this.seen.admits(own)) return;
    this.entries.set(key, PER_CALLER);
    this.entries.set(own, entry);
  }
}

/** An entry found, under the key it was kept under (the caller's own, for a per-caller answer). */
export interface Found {
  key: string;
  entry: MemoEntry;
}

/** Kept under a request's key where its answers depend on who asks (see `Reuse.perCaller`). */
const PER_CALLER = Object.freeze({ perCaller: true as const });
type Kept = MemoEntry | typeof PER_CALLER;
const isMark = (kept: Kept): kept is typeof PER_CALLER => kept === PER_CALLER;

/** Cookies and a token can be long: a caller's key may be, up to this. */
const MAX_CALLER_KEY_LENGTH = 4096;

/** The key of one caller's answer: the request's key and the credentials it carried, as sent. */
function callerKey(key: string, headers: Record<string, string | undefined>): string | undefined {
  const own = `${key}\u0001${headers.cookie ?? ''}\u0000${headers.authorization ?? ''}`;
  return own.length <= MAX_CALLER_KEY_LENGTH ? own : undefined;
}

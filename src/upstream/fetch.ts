import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { HttpError } from '../util/errors.js';
import { decompress } from '../http/encoding.js';

export interface FetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** Retries after a 5xx or a connection error (not after a timeout: the wiki is busy). */
  retries?: number;
  /** The largest answer taken, as sent and decoded (MAX_ANSWER_BYTES unless told). */
  maxBytes?: number;
}

/** An answer's headers, looked up by name in any case. */
export interface AnswerHeaders {
  get(name: string): string | null;
}

export interface UpstreamResponse {
  status: number;
  headers: AnswerHeaders;
  body: Buffer;
}

const RETRY_BACKOFF_MS = [100, 400, 1000];
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ETIMEDOUT']);

/**
 * Connections to the wiki are kept open between requests (where the wiki allows it): a TLS
 * handshake per request would cost more than most API answers.
 */
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/**
 * Far above the largest page bundle a wiki sends (a few MB for the longest articles): an answer
 * past it, or a small one that decodes past it, is refused rather than held in memory.
 */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

class Timeout extends Error {}
/**
 * A kept-alive connection the wiki (or a proxy before it) had closed as idle just as a request
 * was sent on it: reset before any answer came. The request never reached the wiki's handler, so
 * it is sent again on a new connection, edits too (the pattern node documents for `reusedSocket`).
 */
class StaleConnection extends Error {
  constructor(cause: unknown) {
    super('a kept-alive connection was closed by the wiki', { cause });
  }
}
const STALE_CONNECTION_ERRORS = new Set(['ECONNRESET', 'EPIPE']);
class TooLarge extends Error {
  constructor(readonly limit: number) {
    super(`larger than ${limit} bytes`);
  }
}

/** Wiki requests begun so far, and those not yet written to their sockets (nor failed first), by number. */
let begun = 0;
const unwritten = new Map<Promise<void>, number>();

/** A mark for `requestsWritten`: the requests begun from now on. */
export function requestMark(): number {
  return begun;
}

/**
 * Resolves once the wiki requests begun since `mark` are on the wire; earlier ones (a large body
 * a slow wiki reads bit by bit) are not waited for. Synchronous work (SQLite writes) done before
 * then would hold up their connections and the requests themselves, though the wiki is what the
 * caller waits for: the turn after a request is begun is too early, as a socket's connection is
 * only reported in the event loop's next poll.
 */
export async function requestsWritten(mark: number): Promise<void> {
  await Promise.all([...unwritten].filter(([, n]) => n >= mark).map(([writing]) => writing));
}

function headersOf(raw: IncomingHttpHeaders): AnswerHeaders {
  return {
    get(name) {
      const value = raw[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/**
 * One exchange through node's own client: a wiki request costs about a third of the CPU of
 * `fetch` and answers sooner (on a cold page miss three of them wait in line).
 */
function exchange(url: string, userAgent: string, options: FetchOptions, timeoutMs: number, fresh = false): Promise<UpstreamResponse> {
  const maxBytes = options.maxBytes ?? MAX_ANSWER_BYTES;
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const agent = agents[target.protocol as keyof typeof agents];
    if (!agent) return reject(new Error(`Unsupported protocol ${target.protocol}`));
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const req = client.request(target, {
      method: options.method ?? 'GET',
      // `fresh`: a connection of its own, closed after the answer.
      agent: fresh ? false : agent,
      headers: {
        'user-agent': userAgent,
        'accept-encoding': 'gzip',
        ...(body ? { 'content-length': String(body.length) } : {}),
        ...options.headers,
      },
    });
    let written!: () => void;
    const writing = new Promise<void>((resolve) => (written = resolve));
    unwritten.set(writing, begun++);
    void writing.then(() => unwritten.delete(writing));
    req.once('finish', written);
    let settled = false;
    let answered = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      written();
      outcome();
    };
    const fail = (err: unknown) => settle(() => reject(err));
    // The whole exchange, not only the wait for headers: a wiki trickling its answer is as slow.
    const timer = setTimeout(() => {
      fail(new Timeout());
      req.destroy();
    }, timeoutMs);
    // Not once: a request destroyed after failing may report its socket's end as one more error.
    req.on('error', (err: NodeJS.ErrnoException) => fail(!answered && req.reusedSocket && STALE_CONNECTION_ERRORS.has(err.code ?? '') ? new StaleConnection(err) : err));
    req.once('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received <= maxBytes) return void chunks.push(chunk);
        fail(new TooLarge(maxBytes));
        req.destroy();
      });
      res.on('error', fail);
      res.once('end', () => {
        const raw = Buffer.concat(chunks);
        const decoded = res.headers['content-encoding'] === 'gzip' ? decompress(raw, 'gzip', maxBytes) : Promise.resolve(raw);
        const tooLarge = (err: unknown) => fail(err instanceof RangeError ? new TooLarge(maxBytes) : err);
        decoded.then((bytes) => settle(() => resolve({ status: res.statusCode ?? 502, headers: headersOf(res.headers), body: bytes })), tooLarge);
      });
    });
    req.end(body);
  });
}

/**
 * Requests to a wiki: a descriptive User-Agent, a timeout, retries with backoff, and failures
 * turned into the gateway errors clients should see (502 bad answer, 503 unreachable, 504 slow).
 * Redirects are answers, not followed.
 */
export async function upstreamFetch(url: string, userAgent: string, options: FetchOptions = {}): Promise<UpstreamResponse> {
  const retries = options.retries ?? 2;
  const timeoutMs = options.timeoutMs ?? 30_000;
  let fresh = false;
  for (let attempt = 0; ; attempt++) {
    let failure: HttpError;
    try {
      const res = await exchange(url, userAgent, options, timeoutMs, fresh);
      if (res.status < 500) return res;
      failure = new HttpError(502, 'upstream-error', `The wiki answered ${res.status} for ${new URL(url).pathname}.`);
    } catch (err) {
      // Sent again at once on a connection of its own (the other kept ones may be as stale, and
      // one of its own is never reused), not counted as an attempt: the wiki never saw it.
      if (err instanceof StaleConnection && !fresh) {
        fresh = true;
        attempt--;
        continue;
      }
      if (err instanceof Timeout) throw new HttpError(504, 'upstream-timeout', `The wiki did not answer within ${timeoutMs} ms.`);
      if (err instanceof TooLarge) throw new HttpError(502, 'upstream-too-large', `The wiki's answer is larger than ${err.limit} bytes.`);
      if (!CONNECTION_ERRORS.has((err as { code?: string }).code ?? '')) throw new HttpError(502, 'upstream-error', `Talking to the wiki failed: ${(err as Error).message}`);
      failure = new HttpError(503, 'upstream-unavailable', 'The wiki cannot be reached.', { headers: { 'retry-after': '5' } });
    }
    if (attempt >= retries) throw failure;
    await new Promise((r) => setTimeout(r, RETRY_BACKOFF_MS[attempt] ?? 1000));
  }
}

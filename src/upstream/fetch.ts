import { HttpError } from '../errors.js';

export interface FetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** Retries after a 5xx or a connection error (not after a timeout: the wiki is busy). */
  retries?: number;
}

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

const RETRY_BACKOFF_MS = [100, 400, 1000];

function isConnectionError(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'EPIPE'].includes(cause?.code ?? '');
}

/**
 * Requests to a wiki: a descriptive User-Agent, a timeout, retries with backoff, and failures
 * turned into the gateway errors clients should see (502 bad answer, 503 unreachable, 504 slow).
 */
export async function upstreamFetch(url: string, userAgent: string, options: FetchOptions = {}): Promise<UpstreamResponse> {
  const retries = options.retries ?? 2;
  for (let attempt = 0; ; attempt++) {
    let failure: HttpError;
    try {
      const res = await fetch(url, {
        method: options.method ?? 'GET',
        headers: { 'user-agent': userAgent, ...options.headers },
        body: options.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status < 500) return { status: res.status, headers: res.headers, body };
      failure = new HttpError(502, 'upstream-error', `The wiki answered ${res.status} for ${new URL(url).pathname}.`);
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') {
        throw new HttpError(504, 'upstream-timeout', `The wiki did not answer within ${options.timeoutMs ?? 30_000} ms.`);
      }
      if (!isConnectionError(err)) throw new HttpError(502, 'upstream-error', `Talking to the wiki failed: ${(err as Error).message}`);
      failure = new HttpError(503, 'upstream-unavailable', 'The wiki cannot be reached.', { headers: { 'retry-after': '5' } });
    }
    if (attempt >= retries) throw failure;
    await new Promise((r) => setTimeout(r, RETRY_BACKOFF_MS[attempt] ?? 1000));
  }
}

import { randomUUID, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';
import { HttpError } from '../util/errors.js';
import type { Metrics } from '../util/metrics.js';
import type { RouteMatch, Router } from '../router/router.js';
import type { ProblemRenderer } from '../router/surface.js';
import type { BodyKind, Response } from '../router/types.js';
import { AnswerMemo, headersFor, keptHeaders, type Found } from './answer-memo.js';
import { drainBody, parseBody, readBodyBytes } from './body.js';
import { NOT_MODIFIED_HEADERS, conditionalRead } from './conditional.js';
import { addBrowserHeaders, isPreflight, preflightResponse } from './browser-headers.js';
import { encodeBody, varyForEncoding } from './encoding.js';
import { relativeLocation } from './relative-location.js';
import { bodyToBytes, toJson } from './serialize.js';
import { BodyBudget } from './body-budget.js';
import { ClientAddress } from './client-address.js';
import { SendWatch } from './send-watch.js';
import { StreamGate } from './stream-gate.js';
import { WriteBatch } from './write-batch.js';
import { PipelineGate } from './pipeline-gate.js';

export interface HttpOptions {
  maxBodyBytes: number;
  adminToken: string | undefined;
  /** Seconds a client may take to send its headers, and its whole request. */
  headersTimeout: number;
  requestTimeout: number;
  /** Seconds an idle keep-alive connection stays open. */
  keepAliveTimeout: number;
  /** Open connections beyond which requests are answered 503 (load shedding). */
  maxConnections: number;
  /** Bytes of answers kept to be sent again (see AnswerMemo); 0 or unset: none. */
  answerMemoBytes?: number;
  /** Proxies whose `X-Forwarded-For` is believed (`trusted_proxies`); none by default. */
  clientAddress?: ClientAddress;
  /** Seconds an answer's bytes may wait untouched by its client before the connection is closed (`send_timeout`). */
  sendTimeout?: number;
  /** Bytes of request bodies held at once (see BodyBudget); by default an eighth of the heap's limit. */
  bodyBudgetBytes?: number;
  /** Streamed answers at once: per client (`max_streams_per_client`) and in all (`max_streams`). */
  streams?: { perClient: number; total: number };
}

const REQUEST_ID = /^[\w\-.:]{1,128}$/;
const SYS_PATH = /^\/[^/?]*\/sys(\/|\?|$)/;

/** Whether a path reaches the internal API, however its segments are percent-encoded. */
function isSysPath(uri: string): boolean {
  if (SYS_PATH.test(uri)) return true;
  if (!uri.includes('%')) return false;
  try {
    return SYS_PATH.test(decodeURIComponent(uri.split('?', 1)[0]!));
  } catch {
    return false;
  }
}

const secondsSince = (started: number) => (performance.now() - started) / 1000;

/** Past this many unread body bytes, draining the rest costs more than resetting the connection. */
const MAX_DRAIN_FACTOR = 4;

const sameBytes = (given: Buffer, expected: Buffer) => given.length === expected.length && timingSafeEqual(given, expected);

/**
 * Whether an `Authorization` value carries the admin token: as `Bearer` (the scheme compared
 * without case, RFC 9110 §11.1) it grants admin access; in any other spelling it still names our
 * credential, which must never travel further (to the wiki as a caller's, say).
 * `expected`: the admin token's bytes, made once.
 */
function adminCredential(authorization: string | undefined, expected: Buffer | undefined): 'admin' | 'misspelt' | undefined {
  if (!expected || !authorization) return undefined;
  const value = authorization.trim();
  const space = value.search(/\s/);
  const scheme = space < 0 ? '' : value.slice(0, space);
  const given = Buffer.from(space < 0 ? value : value.slice(space).trim());
  if (!sameBytes(given, expected)) return sameBytes(Buffer.from(value), expected) ? 'misspelt' : undefined;
  return scheme.toLowerCase() === 'bearer' ? 'admin' : 'misspelt';
}

/** How many times a header came (node keeps only the first `Authorization` of several). */
function countHeader(req: IncomingMessage, name: string): number {
  let n = 0;
  const raw = req.rawHeaders;
  // Lower-cased only when the length matches: every request with a credential passes here.
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name) n++;
  return n;
}

/** Node joins repeated request headers itself; only set-cookie stays a list, and requests do not send it. */
function flatHeaders(req: IncomingMessage): Record<string, string> {
  return req.headers as Record<string, string>;
}

/** A request as it arrived, with what the front made of it before answering. */
interface Arrival {
  /** `performance.now()` when it arrived. */
  started: number;
  method: string;
  uri: string;
  requestId: string;
  /** The request's headers, as handlers will see them (the admin credential taken out). */
  headers: Record<string, string>;
  /** Whether it asks for the internal API (/sys/). */
  internal: boolean;
  path: string;
}

/** An error as problem+json (RFC 9457), or in the shape of the surface the path belongs to. */
function errorResponse(err: unknown, arrival: Pick<Arrival, 'path' | 'uri' | 'headers' | 'method'>, log: Logger, render?: ProblemRenderer): Response {
  const error =
    err instanceof HttpError
      ? err
      : new HttpError(500, 'internal-error', 'The server failed to handle this request; it has been logged.');
  // A failure of our own is an error with its stack; an answer the service chose (a wiki or storage
  // that could not answer: 502/503/504) is expected in operation: noted, without a stack.
  if (!(err instanceof HttpError) || error.status === 500) log.error({ err }, 'request failed');
  else if (error.status > 500) log.info({ status: error.status, type: error.problemType, detail: error.message }, 'request answered with a server-side problem');
  const own = render?.(error, arrival);
  return {
    status: error.status,
    headers: { ...error.headers, 'content-type': own?.contentType ?? 'application/problem+json', 'cache-control': 'no-cache' },
    body: toJson(own?.body ?? error.toProblem(arrival.path)),
  };
}

/** The node:http front: parsing, access, conditional GET, HEAD, compression, problem rendering. */
export function createHttpServer(router: Router, log: Logger, metrics: Metrics, options: HttpOptions): http.Server {
  const adminToken = options.adminToken ? Buffer.from(options.adminToken) : undefined;
  const clientAddress = options.clientAddress ?? new ClientAddress();
  const memo = options.answerMemoBytes ? new AnswerMemo(options.answerMemoBytes) : undefined;
  const sending = new SendWatch((options.sendTimeout ?? 60) * 1000, () => metrics.sendTimeouts.inc());
  const bodies = new BodyBudget(options.bodyBudgetBytes ?? Math.floor(getHeapStatistics().heap_size_limit / 8));
  const streams = new StreamGate(options.streams?.perClient ?? Infinity, options.streams?.total ?? Infinity);
  /**
   * Answers being made for a key of the memo: a request that arrives meanwhile waits for the
   * answer kept rather than making its own. When a kept answer's second ran out under load, every
   * request of the next few milliseconds made it again (an answer compressed anew for each: about
   * 40 a second for one page's `with_html`, a tenth of the service's time).
   */
  const making = new Map<string, Promise<void>>();
  /** How long a request waits for the same request's answer before making its own. */
  const MAKING_WAIT_MS = 100;

  /**
   * A memoised answer sent again (only the request id and the body of a HEAD differ), if it still
   * holds when the batch it joins is written: asked then, the question whether anything changed
   * since it was made comes after every request of the batch arrived, and is asked once for all
   * of them (see `SqliteDriver.dataVersion`). One that no longer holds is answered in full.
   */
  function resend(res: ServerResponse, found: Found, arrival: Arrival, inFull: () => Promise<void>): void {
    const { entry } = found;
    writes.send(() => {
      let holds = false;
      try {
        holds = memo!.confirm(found);
      } catch (err) {
        // The question itself failed (storage closing, say): the full path answers, or says why not.
        log.warn({ err }, 'asking whether a kept answer holds failed');
      }
      if (!holds) {
        inFull().catch((err) => failed(res, err));
        return;
      }
      try {
        res.writeHead(entry.status, headersFor(entry, arrival.requestId));
        res.end(arrival.method === 'HEAD' ? undefined : entry.body);
        sending.watch(res.socket);
      } catch (err) {
        failed(res, err);
      }
      let record = entry.record;
      if (record?.method !== arrival.method) record = entry.record = { method: arrival.method, observe: metrics.recorder(entry.label, arrival.method, entry.status) };
      record.observe(secondsSince(arrival.started));
    });
  }

  /**
   * Takes a request in: refused, sent a kept answer again, or handed to `answer`. Synchronous, so
   * that an answer sent again costs no promise of its own (a hot read is mostly such answers).
   */
  function handle(req: IncomingMessage, res: ServerResponse): void {
    const method = (req.method ?? 'GET').toUpperCase();
    const uri = req.url ?? '/';
    const incomingId = req.headers['x-request-id'];
    const query = uri.indexOf('?');
    const arrival: Arrival = {
      started: performance.now(),
      method,
      uri,
      requestId: typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : randomUUID(),
      headers: flatHeaders(req),
      internal: isSysPath(uri),
      path: query < 0 ? uri : uri.slice(0, query),
    };
    const { headers } = arrival;
    let admin: boolean;
    let memoKey: string | undefined;
    try {
      // Two credentials leave it open which one a request acts with: refused, not guessed.
      if (headers.authorization !== undefined && countHeader(req, 'authorization') > 1) {
        throw new HttpError(400, 'duplicate-authorization', 'A request may carry one Authorization header.');
      }
      const credential = adminCredential(headers.authorization, adminToken);
      admin = credential === 'admin';
      // The admin credential stops here: no handler sees it, so none can pass it on.
      if (credential) delete headers.authorization;
      // The internal API is closed to outsiders as a whole: no route, listing or 404 leaks.
      if (!admin && arrival.internal) throw new HttpError(403, 'admin-required', 'The internal API (/sys/) needs the admin credential.');
      memoKey = memo && AnswerMemo.keyOf(method, uri, admin, headers);
      const found = memoKey ? memo!.find(memoKey, Date.now(), headers) : undefined;
      if (found) return resend(res, found, arrival, () => answer(req, res, arrival, admin, memoKey));
    } catch (err) {
      finish(req, res, arrival, errorResponse(err, arrival, log, router.surfaceOf(arrival.path)?.renderProblem)).catch((e) => failed(res, e));
      return;
    }
    if (memoKey === undefined) {
      answer(req, res, arrival, admin, memoKey).catch((err) => failed(res, err));
      return;
    }
    const key = memoKey;
    const made = making.get(key);
    if (made) {
      // The same request is being answered: its answer, once kept, is this one's too. If it is not
      // kept (not reusable, or not for this caller), or takes longer than a kept answer is made in
      // (a render, a wiki that does not answer), this one takes the full path.
      let waiting = true;
      const go = () => {
        if (!waiting) return;
        waiting = false;
        clearTimeout(timer);
        const kept = memo!.find(key, Date.now(), headers);
        if (kept) resend(res, kept, arrival, () => answer(req, res, arrival, admin, key));
        else answer(req, res, arrival, admin, key).catch((err) => failed(res, err));
      };
      const timer = setTimeout(go, MAKING_WAIT_MS);
      made.then(go);
      return;
    }
    const answered = answer(req, res, arrival, admin, key).catch((err) => failed(res, err));
    making.set(key, answered);
    answered.then(() => {
      if (making.get(key) === answered) making.delete(key);
    });
  }

  /** A request answered by its handler (or the front's own preflight answer). */
  async function answer(req: IncomingMessage, res: ServerResponse, arrival: Arrival, admin: boolean, memoKey: string | undefined): Promise<void> {
    const { method, uri, headers } = arrival;
    let match: RouteMatch | undefined;
    // An answer made here (a preflight, a failure before the handler), or the handler to call:
    // each request is finished once, by exactly one of the two.
    let next: { response: Response } | { call: RouteMatch; bytes: Buffer | undefined };
    try {
      clientAddress.forward(headers, req.socket.remoteAddress);
      if (!arrival.internal && isPreflight(method, headers, router.surfaceOf(arrival.path)?.optionsArePreflights === true)) {
        next = { response: preflightResponse() };
      } else {
        const matched = router.resolve(method, uri);
        match = matched;
        await holdBody(req, res, matched.route?.body);
        const bytes = await readBodyBytes(req, matched.route?.body, options.maxBodyBytes);
        if (memo && bytes && method === 'POST' && matched.route?.readsOnly) {
          const readKey = AnswerMemo.keyOfRead(uri, admin, headers, bytes);
          const found = readKey ? memo.find(readKey, Date.now(), headers) : undefined;
          if (found) return resend(res, found, arrival, () => invoke(req, res, arrival, admin, readKey, matched, bytes));
          memoKey = readKey;
        }
        next = { call: matched, bytes };
      }
    } catch (err) {
      next = { response: errorResponse(err, arrival, log, router.surfaceOf(arrival.path)?.renderProblem) };
    }
    if ('call' in next) return invoke(req, res, arrival, admin, memoKey, next.call, next.bytes);
    return finish(req, res, arrival, next.response, match, memoKey);
  }

  /**
   * Room in the body budget for the body a route reads, held until its answer is sent: its
   * declared length, or `max_body_bytes` for one sent in chunks. None for a route that reads no
   * body, and none for one declared too large (refused with a 413 unread).
   */
  async function holdBody(req: IncomingMessage, res: ServerResponse, kind: BodyKind | undefined): Promise<void> {
    if (!kind) return;
    const declared = req.headers['content-length'];
    const length = declared !== undefined ? Number(declared) : req.headers['transfer-encoding'] !== undefined ? options.maxBodyBytes : 0;
    if (!(length > 0) || length > options.maxBodyBytes) return;
    const release = await bodies.take(length);
    res.once('close', release);
  }

  /** The matched route's handler called with the body read. */
  async function invoke(req: IncomingMessage, res: ServerResponse, arrival: Arrival, admin: boolean, memoKey: string | undefined, match: RouteMatch, bytes: Buffer | undefined): Promise<void> {
    const { method, uri, headers, requestId } = arrival;
    let response: Response;
    try {
      const admitting = router.admission(match);
      if (admitting) await admitting;
      if (match.api !== 'global' && match.params.domain) metrics.servedFor(match.params.domain);
      const reqBody = await parseBody(bytes, match.route?.body, headers['content-type']);
      const ctx = router.context({ requestId, admin, log, external: true, root: { method, uri }, client: () => clientAddress.outsideClientOf(headers['x-forwarded-for'], req.socket.remoteAddress) });
      response = await router.invoke(match, { method, uri, headers, body: reqBody }, ctx);
    } catch (err) {
      response = errorResponse(err, arrival, log, router.surfaceOf(arrival.path)?.renderProblem);
    }
    await finish(req, res, arrival, response, match, memoKey);
  }

  /**
   * A body that is a stream (change events, a download): headers at once, the body as it comes,
   * never compressed or kept; within the client's share of streams (`StreamGate`), else refused.
   */
  function streamed(req: IncomingMessage, res: ServerResponse, arrival: Arrival, response: Response & { body: Readable }, match?: RouteMatch): Promise<void> | void {
    const release = arrival.method === 'HEAD' ? () => undefined : streams.take(clientAddress.clientOf(arrival.headers['x-forwarded-for'], req.socket.remoteAddress));
    if (release instanceof HttpError) {
      response.body.destroy();
      metrics.streamsRefused.inc({ reason: release.status === 429 ? 'client' : 'total' });
      return finish(req, res, arrival, errorResponse(release, arrival, log, router.surfaceOf(arrival.path)?.renderProblem), match);
    }
    metrics.streams.set(streams.size);
    res.once('close', () => {
      release();
      metrics.streams.set(streams.size);
    });
    const headers: Record<string, string> = {};
    for (const k in response.headers) headers[k.toLowerCase()] = String(response.headers[k]);
    headers['x-request-id'] = arrival.requestId;
    addBrowserHeaders(headers, arrival.internal);
    res.writeHead(response.status, headers);
    res.flushHeaders();
    metrics.observe(match?.label ?? '(unmatched)', arrival.method, response.status, secondsSince(arrival.started));
    if (arrival.method === 'HEAD') {
      response.body.destroy();
      res.end();
      return;
    }
    response.body.on('error', (err) => log.warn({ err }, 'a streamed answer failed'));
    res.on('close', () => response.body.destroy());
    // A stream cut short (too slow a client) cuts the connection: a pipe would leave it silent.
    response.body.on('close', () => response.body.readableEnded || res.destroy());
    // Held back by its client (the pipe waits for it to read): watched from then.
    response.body.on('pause', () => sending.watch(res.socket));
    response.body.pipe(res);
  }

  /** Headers made final, the body encoded, the answer kept to be sent again if it may be, and written. */
  async function finish(req: IncomingMessage, res: ServerResponse, arrival: Arrival, response: Response, match?: RouteMatch, memoKey?: string): Promise<void> {
    if (response.body instanceof Readable) return streamed(req, res, arrival, response as Response & { body: Readable }, match);
    const { method, path, headers, requestId, started } = arrival;
    let body: Buffer = Buffer.alloc(0);
    const outHeaders: Record<string, string> = {};
    const given = response.headers;
    for (const k in given) outHeaders[k.toLowerCase()] = String(given[k]);
    for (const k of ['location', 'content-location']) if (outHeaders[k] !== undefined) outHeaders[k] = relativeLocation(path, outHeaders[k]);
    let status = response.status;
    try {
      const { bytes, contentType } = bodyToBytes(response.body);
      if (contentType && !outHeaders['content-type']) outHeaders['content-type'] = contentType;
      if ((method === 'GET' || method === 'HEAD') && status >= 200 && status < 300 && conditionalRead(headers, outHeaders.etag, outHeaders['last-modified']) === 'not-modified') {
        status = 304;
        // The same Vary as the 200 it stands for, so a cache keys both alike.
        varyForEncoding(outHeaders);
        for (const k of Object.keys(outHeaders)) if (!NOT_MODIFIED_HEADERS.includes(k)) delete outHeaders[k];
      } else if (bytes.length > 0) {
        body = await encodeBody(bytes, outHeaders, headers['accept-encoding']);
        outHeaders['content-length'] = String(body.length);
      } else if (status !== 204) {
        outHeaders['content-length'] = '0';
      }
    } catch (err) {
      const failure = errorResponse(err, arrival, log, router.surfaceOf(arrival.path)?.renderProblem);
      status = failure.status;
      body = Buffer.from(failure.body as string);
      // The error's own headers alone: none of the answer it replaces (its ETag, its caching).
      for (const k of Object.keys(outHeaders)) delete outHeaders[k];
      Object.assign(outHeaders, failure.headers, { 'content-length': String(body.length) });
    }
    outHeaders['x-request-id'] = requestId;
    addBrowserHeaders(outHeaders, arrival.internal);
    // An unread body (a route without one, or one rejected early) is read before the answer goes
    // out, so the answer survives a close; one far over the limit is not worth reading: the answer
    // then closes the connection and may be lost to the reset, which such a client has earned.
    if (!req.complete) {
      const declared = Number(headers['content-length'] ?? 0);
      const cap = options.maxBodyBytes * MAX_DRAIN_FACTOR;
      if (declared > cap || !(await drainBody(req, cap))) outHeaders.connection = 'close';
    }
    const payload = method === 'HEAD' || status === 304 ? undefined : body;
    if (memoKey && status === 200 && response.reuse && outHeaders.connection === undefined) {
      memo!.set(memoKey, { status, headers: keptHeaders(outHeaders), body, label: match?.label ?? '(unmatched)', reuse: response.reuse }, Date.now(), headers);
    }
    const label = match?.label ?? '(unmatched)';
    writes.send(() => {
      try {
        const written: http.OutgoingHttpHeaders = outHeaders;
        // Several cookies an answer passed on from the wiki sets (a surface that passes requests on).
        if (outHeaders['set-cookie']?.includes('\n')) written['set-cookie'] = outHeaders['set-cookie'].split('\n');
        res.writeHead(status, written);
        res.end(payload);
        sending.watch(res.socket);
      } catch (err) {
        failed(res, err);
      }
      metrics.observe(label, method, status, secondsSince(started));
    });
  }

  /** The last resort for an answer that could not be written (a header node refuses, say). */
  const failed = (res: ServerResponse, err: unknown) => {
    log.error({ err }, 'unhandled error while responding');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/problem+json' });
    res.end();
  };
  const writes = new WriteBatch((err) => log.error({ err }, 'writing an answer failed'));

  const shed = (res: ServerResponse) => {
    metrics.shed.inc();
    const body = toJson({ type: 'urn:problem:overloaded', title: 'Service Unavailable', status: 503, detail: 'Too many open connections; try again shortly.' });
    res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1', connection: 'close', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  };

  const pipelined = new PipelineGate(() => metrics.pipelineCut.inc());
  const server = http.createServer(
    {
      headersTimeout: options.headersTimeout * 1000,
      requestTimeout: options.requestTimeout * 1000,
      keepAliveTimeout: options.keepAliveTimeout * 1000,
      // How often node looks for connections past those timeouts (30 s by default).
      connectionsCheckingInterval: 1000,
    },
    (req, res) => {
      if (open > options.maxConnections) return shed(res);
      pipelined.admit(req, res, () => {
        try {
          handle(req, res);
        } catch (err) {
          failed(res, err);
        }
      });
    },
  );
  // Beyond the shedding threshold node refuses connections outright, before descriptors run out.
  server.maxConnections = Math.ceil(options.maxConnections * 1.1) + 16;
  let open = 0;
  let lastIdleSweep = 0;
  server.on('connection', (socket) => {
    open++;
    metrics.connections.set(open);
    socket.once('close', () => metrics.connections.set(--open));
    // Near the limit, idle keep-alive connections make room for clients with a request to send.
    if (open > options.maxConnections * 0.8 && Date.now() - lastIdleSweep > 1000) {
      lastIdleSweep = Date.now();
      server.closeIdleConnections();
    }
  });
  return server;
}

/** Stops accepting, lets in-flight requests finish, then closes idle keep-alive connections. */
export function closeGracefully(server: http.Server, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, timeoutMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}


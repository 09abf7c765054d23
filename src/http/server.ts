import { randomUUID, timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { HttpError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { RouteMatch, Router } from '../router/router.js';
import type { Response } from '../router/types.js';
import { readBody } from './body.js';
import { NOT_MODIFIED_HEADERS, etagMatches } from './conditional.js';
import { encodeBody } from './encoding.js';
import { bodyToBytes, toJson } from './serialize.js';

export interface HttpOptions {
  maxBodyBytes: number;
  adminToken: string | undefined;
}

const REQUEST_ID = /^[\w\-.:]{1,128}$/;
const SYS_PATH = /^\/[^/?]*\/sys(\/|\?|$)/;

function isAdmin(authorization: string | undefined, token: string | undefined): boolean {
  if (!token || !authorization?.startsWith('Bearer ')) return false;
  const given = Buffer.from(authorization.slice(7).trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Node joins repeated request headers itself; only set-cookie stays a list, and requests do not send it. */
function flatHeaders(req: IncomingMessage): Record<string, string> {
  return req.headers as Record<string, string>;
}

function errorResponse(err: unknown, instance: string, log: Logger): Response {
  const error =
    err instanceof HttpError
      ? err
      : new HttpError(500, 'internal-error', 'The server failed to handle this request; it has been logged.');
  if (!(err instanceof HttpError) || error.status >= 500) log.error({ err }, 'request failed');
  return {
    status: error.status,
    headers: { ...error.headers, 'content-type': 'application/problem+json', 'cache-control': 'no-cache' },
    body: toJson(error.toProblem(instance)),
  };
}

/** The node:http front: parsing, access, conditional GET, HEAD, compression, problem rendering. */
export function createHttpServer(router: Router, log: Logger, metrics: Metrics, options: HttpOptions): http.Server {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = process.hrtime.bigint();
    const method = (req.method ?? 'GET').toUpperCase();
    const uri = req.url ?? '/';
    const incomingId = req.headers['x-request-id'];
    const requestId = typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
    const headers = flatHeaders(req);
    let match: RouteMatch | undefined;
    let response: Response;
    let body: Buffer = Buffer.alloc(0);
    try {
      const admin = isAdmin(headers.authorization, options.adminToken);
      // The internal API is closed to outsiders as a whole: no route, listing or 404 leaks.
      if (!admin && SYS_PATH.test(uri)) throw new HttpError(403, 'admin-required', 'The internal API (/sys/) needs the admin credential.');
      match = router.resolve(method, uri);
      const reqBody = await readBody(req, options.maxBodyBytes, match.route?.rawBody === true);
      const ctx = router.context({ requestId, admin, log, external: true });
      response = await router.invoke(match, { method, uri, headers, body: reqBody }, ctx);
    } catch (err) {
      response = errorResponse(err, uri.split('?', 1)[0]!, log);
    }
    const outHeaders: Record<string, string> = {};
    for (const [k, v] of Object.entries(response.headers ?? {})) outHeaders[k.toLowerCase()] = String(v);
    let status = response.status;
    try {
      const { bytes, contentType } = bodyToBytes(response.body);
      if (contentType && !outHeaders['content-type']) outHeaders['content-type'] = contentType;
      if ((method === 'GET' || method === 'HEAD') && status >= 200 && status < 300 && etagMatches(headers['if-none-match'], outHeaders.etag)) {
        status = 304;
        for (const k of Object.keys(outHeaders)) if (!NOT_MODIFIED_HEADERS.includes(k)) delete outHeaders[k];
      } else if (bytes.length > 0) {
        body = await encodeBody(bytes, outHeaders, headers['accept-encoding']);
        outHeaders['content-length'] = String(body.length);
      } else if (status !== 204) {
        outHeaders['content-length'] = '0';
      }
    } catch (err) {
      const failure = errorResponse(err, uri, log);
      status = failure.status;
      body = Buffer.from(failure.body as string);
      Object.assign(outHeaders, failure.headers, { 'content-length': String(body.length) });
    }
    outHeaders['x-request-id'] = requestId;
    // Drain an unread body (rejected early) so the connection can be reused, or close it when too large.
    if (!req.complete) outHeaders.connection = 'close';
    res.writeHead(status, outHeaders);
    res.end(method === 'HEAD' || status === 304 ? undefined : body);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics.observe(match?.label ?? '(unmatched)', method, status, seconds);
  }

  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch((err) => {
      log.error({ err }, 'unhandled error while responding');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/problem+json' });
      res.end();
    });
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

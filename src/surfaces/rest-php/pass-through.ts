import http from 'node:http';
import https from 'node:https';
import { HttpError, badRequest } from '../../util/errors.js';
import type { Response, RouteRequest } from '../../router/types.js';

/** Headers that belong to one connection, not to the request or answer passed on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);
/** Set by the service's HTTP front for its own answer (request id, browser headers). */
const OWN_ANSWER_HEADERS = new Set(['x-request-id', 'date', 'server', 'x-content-type-options']);

const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** Far above any answer of the REST API's routes; a larger one is refused rather than held. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** The routes passed to the wiki: `/v1/page/…`, `/v1/revision/…`, `/v1/transform/…`. */
const PASSED = /^\/v1\/(page|revision|transform)(\/|$)/;
/** How many rounds of percent-decoding are undone before a path is judged (a server may decode twice). */
const DECODING_ROUNDS = 4;

const ESCAPES = /%[0-9A-Fa-f]{2}/;
const ESCAPE_RUNS = /(?:%[0-9A-Fa-f]{2})+/g;
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** A run of percent-escapes as the text its bytes spell; throws for bytes that are not UTF-8. */
const strictUtf8 = (run: string) => UTF8.decode(Buffer.from(run.replace(/%/g, ''), 'hex'));

/**
 * Whether a path below `rest.php` (its query included) stays under the routes passed to the wiki
 * however a server in front of the wiki reads it: percent-escapes decoded (once, or again), a
 * backslash taken for a slash, `.` and `..` segments resolved. MediaWiki's titles never hold a
 * `.` or `..` segment nor a percent-escape, so no title a client may ask for is refused. Bytes that
 * are not UTF-8 (overlong forms of `.` and `/` among them) and control characters are refused.
 */
export function staysUnderPassedRoutes(below: string): boolean {
  let path = below.split('?', 1)[0]!;
  try {
    for (let round = 0; round < DECODING_ROUNDS && ESCAPES.test(path); round++) path = path.replace(ESCAPE_RUNS, strictUtf8);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return false;
  const segments = path.replace(/\\/g, '/').split('/');
  if (segments.some((segment) => segment === '.' || segment === '..')) return false;
  return PASSED.test(path);
}

/**
 * A request the service does not answer itself, sent to the wiki's own `rest.php` unchanged (method,
 * path below `rest.php`, query, headers but those of the connection, body) and its answer sent
 * back unchanged (status, headers, bytes). The client's `X-Forwarded-For` arrives here already
 * checked and extended with the client's address by the HTTP front. Never retried: the request
 * may be an edit.
 */
export async function passToWiki(restBase: string, req: RouteRequest, timeoutMs: number): Promise<Response> {
  const below = req.uri.slice(req.uri.indexOf('/rest.php/') + '/rest.php'.length);
  const base = new URL(restBase.replace(/\/$/, ''));
  const url = new URL(`${base.href}${below}`);
  if (!staysUnderPassedRoutes(below) || !url.pathname.startsWith(`${base.pathname}/v1/`) || url.host !== base.host) {
    throw badRequest('The path leaves the wiki\'s REST API.', 'invalid-path');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  // Answers come back as they are; the service's front compresses for the client as it would its own.
  delete headers['accept-encoding'];
  // Raw bytes as sent; a JSON body a route of the service read first (and then passed on) as JSON.
  const body = Buffer.isBuffer(req.body) ? req.body : req.body !== undefined ? Buffer.from(JSON.stringify(req.body)) : undefined;
  if (body) headers['content-length'] = String(body.length);
  const answer = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, { method: req.method, headers, agent: agents[url.protocol as 'http:'], timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) return res.destroy(new Error(`the wiki's answer is larger than ${MAX_ANSWER_BYTES} bytes`));
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new HttpError(504, 'upstream-timeout', `The wiki did not answer within ${timeoutMs / 1000} s.`)));
    request.on('error', reject);
    request.end(body);
  }).catch((e: unknown) => {
    if (e instanceof HttpError) throw e;
    throw new HttpError(502, 'upstream-unavailable', `The wiki could not be reached: ${(e as Error).message}`);
  });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || OWN_ANSWER_HEADERS.has(name)) continue;
    // Several cookies stay several headers (a newline never occurs in a header value).
    out[name] = Array.isArray(value) ? value.join('\n') : value;
  }
  return { status: answer.status, headers: out, body: answer.body };
}

import type { Response } from '../router/types.js';

/**
 * What browsers are told, as Wikimedia's REST API tells them: any origin may read (and call the
 * public routes: credentials are never shared with `*`, so a page elsewhere cannot act with a
 * reader's cookies), ETag is readable by scripts, and served content is inert (no sniffing, no
 * scripts, not framed elsewhere).
 */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, PUT',
  'access-control-allow-headers':
    'accept, accept-encoding, accept-language, api-user-agent, authorization, cache-control, content-type, dnt, if-match, if-modified-since, if-none-match, x-csrf-token, x-request-id',
  'access-control-expose-headers': 'etag, content-location, location, retry-after, x-request-id',
};

/** Stored HTML may carry anything an editor wrote: images and styles load, scripts never run. */
const HTML_POLICY = "default-src 'none'; media-src *; img-src *; style-src * 'unsafe-inline'; frame-ancestors 'self'";
const OTHER_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** Adds the browser headers to an answer (a handler that set its own policy keeps it). */
export function addBrowserHeaders(headers: Record<string, string>, internal: boolean): void {
  if (!internal) Object.assign(headers, CORS);
  headers['x-content-type-options'] = 'nosniff';
  headers['referrer-policy'] = 'origin-when-cross-origin';
  headers['content-security-policy'] ??= /^text\/html\b/i.test(headers['content-type'] ?? '') ? HTML_POLICY : OTHER_POLICY;
}

/**
 * A CORS preflight (OPTIONS with Access-Control-Request-Method): answered for every public path.
 * On a surface whose every OPTIONS is one (MediaWiki's REST API answers them 204, with or without
 * an Origin), any OPTIONS.
 */
export function isPreflight(method: string, headers: Record<string, string | undefined>, optionsArePreflights: boolean): boolean {
  if (method !== 'OPTIONS') return false;
  return headers['access-control-request-method'] !== undefined || optionsArePreflights;
}

export function preflightResponse(): Response {
  return { status: 204, headers: { 'access-control-max-age': '86400', 'cache-control': 'public, max-age=86400' } };
}

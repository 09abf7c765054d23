import { preconditionFailed } from '../util/errors.js';

/** Weak comparison of an ETag against an If-None-Match header (RFC 9110 13.1.2). */
function etagMatches(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (!ifNoneMatch || !etag) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((candidate) => opaque(candidate) === wanted);
}

/**
 * Whether a GET may answer 304 (RFC 9110 13.2.2): If-None-Match decides when present; else
 * If-Modified-Since, against Last-Modified (at second precision, as HTTP dates are).
 */
export function notModified(headers: { 'if-none-match'?: string; 'if-modified-since'?: string }, etag: string | undefined, lastModified: string | undefined): boolean {
  if (headers['if-none-match'] !== undefined) return etagMatches(headers['if-none-match'], etag);
  if (!headers['if-modified-since'] || !lastModified) return false;
  const since = Date.parse(headers['if-modified-since']);
  const modified = Date.parse(lastModified);
  return !Number.isNaN(since) && !Number.isNaN(modified) && modified <= since;
}

/**
 * Whether a GET's preconditions fail (RFC 9110 13.2.2), a 412 as MediaWiki's REST API answers it:
 * If-Match decides when present (`*`, or one of its ETags strongly equal to the answer's); else
 * If-Unmodified-Since, against Last-Modified.
 */
function preconditionsFail(headers: { 'if-match'?: string; 'if-unmodified-since'?: string }, etag: string | undefined, lastModified: string | undefined): boolean {
  const ifMatch = headers['if-match'];
  if (ifMatch !== undefined) {
    // `*`: any current representation, which a 2xx answer is.
    if (ifMatch.trim() === '*') return false;
    return !etag || etag.startsWith('W/') || !ifMatch.split(',').some((candidate) => candidate.trim() === etag);
  }
  if (!headers['if-unmodified-since'] || !lastModified) return false;
  const since = Date.parse(headers['if-unmodified-since']);
  const modified = Date.parse(lastModified);
  return !Number.isNaN(since) && !Number.isNaN(modified) && modified > since;
}

/**
 * What a GET's conditional headers make of its 2xx answer, in RFC 9110's order: its preconditions
 * failed (thrown: a 412), `not-modified` (a 304), or the answer as it is.
 */
export function conditionalRead(headers: Record<string, string | undefined>, etag: string | undefined, lastModified: string | undefined): 'not-modified' | undefined {
  if (preconditionsFail(headers, etag, lastModified)) {
    throw preconditionFailed('The resource has changed since the version the request names (If-Match, If-Unmodified-Since).');
  }
  return notModified(headers, etag, lastModified) ? 'not-modified' : undefined;
}

/** Headers a 304 keeps (RFC 9110 15.4.5). */
export const NOT_MODIFIED_HEADERS = ['etag', 'cache-control', 'content-location', 'date', 'expires', 'vary', 'last-modified', 'x-request-id'];

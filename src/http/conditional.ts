/** Weak comparison of an ETag against an If-None-Match header (RFC 9110 13.1.2). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string | undefined): boolean {
  if (!ifNoneMatch || !etag) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((candidate) => opaque(candidate) === wanted);
}

/** Headers a 304 keeps (RFC 9110 15.4.5). */
export const NOT_MODIFIED_HEADERS = ['etag', 'cache-control', 'content-location', 'date', 'expires', 'vary', 'last-modified', 'x-request-id'];

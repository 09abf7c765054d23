import { createHash } from 'node:crypto';
import { HttpError, badRequest } from '../../util/errors.js';
import { isCompressible } from '../../http/encoding.js';
import { toJson } from '../../http/serialize.js';
import type { RouteRequest } from '../../router/types.js';
import { isTid } from '../../util/tid.js';
import { gzip, gunzip } from '../../util/compression.js';

const MIN_COMPRESS_BYTES = 1024;
/** What a gzip body stored as sent may inflate to (it is inflated for clients without gzip). */
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;
/** Entity headers kept with a stored value and answered with it (besides its type and encoding). */
const ENTITY_HEADERS = ['content-language', 'content-disposition', 'content-location'] as const;

/** The SHA-1 a client sent (hex, or base64 as in Content-MD5's style), as hex; a malformed one is a 400. */
function claimedSha1(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^[0-9a-f]{40}$/i.test(text)) return text.toLowerCase();
  if (/^[A-Za-z0-9+/]{27}=$/.test(text)) return Buffer.from(text, 'base64').toString('hex');
  throw badRequest('content-sha1 must be a SHA-1 of the content, as 40 hex digits or base64.', 'invalid-content-sha1');
}

/** The content of a body sent gzipped: checked now, so no later read fails to decompress it. */
async function inflate(body: Buffer): Promise<Buffer> {
  try {
    return await gunzip(body, { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new HttpError(413, 'body-too-large', `The gzip body inflates to more than ${MAX_INFLATED_BYTES} bytes.`);
    }
    throw badRequest(`The body is labelled Content-Encoding: gzip but is not valid gzip: ${(e as Error).message}`, 'invalid-content-encoding');
  }
}

/** What a bucket stores of a PUT: the bytes as stored and the entity headers to answer with. */
export interface Entity {
  value: Buffer;
  headers: Record<string, string>;
}

/**
 * Turns a PUT into what is stored: compressible content is gzipped once here, so reads send the
 * stored bytes to clients that accept gzip and decompress only for those that do not.
 */
export async function entityFromRequest(req: RouteRequest): Promise<Entity> {
  const contentType = req.headers['content-type'];
  if (!contentType) throw badRequest('A content-type header is required.', 'missing-content-type');
  let body: Buffer;
  if (Buffer.isBuffer(req.body)) body = req.body;
  else if (typeof req.body === 'string') body = Buffer.from(req.body);
  else if (req.body === undefined || req.body === null) body = Buffer.alloc(0);
  else body = Buffer.from(toJson(req.body));
  if (body.length === 0) throw badRequest('The body is empty.', 'empty-body');
  const encoding = req.headers['content-encoding']?.toLowerCase();
  if (encoding && encoding !== 'identity' && encoding !== 'gzip') {
    throw new HttpError(415, 'unsupported-encoding', `Content-Encoding '${encoding}' is not supported; send identity or gzip.`);
  }
  // The hash names the content, whichever encoding it travelled in.
  const content = encoding === 'gzip' ? await inflate(body) : body;
  const sha1 = createHash('sha1').update(content).digest('hex');
  const claimed = claimedSha1(req.headers['content-sha1']);
  // Checked before anything is written: a body damaged on its way is refused, not stored.
  if (claimed !== undefined && claimed !== sha1) {
    throw badRequest(`The content's SHA-1 is ${sha1}, not the ${claimed} that content-sha1 says; nothing was written.`, 'content-sha1-mismatch');
  }
  const headers: Record<string, string> = {
    'content-type': contentType,
    'content-sha1': sha1,
    'content-sha256': createHash('sha256').update(content).digest('hex'),
  };
  // A stored redirect: reads answer 302 with it.
  const location = req.headers['location'];
  if (location) headers.location = location;
  // Entity headers that describe the content travel with it.
  for (const name of ENTITY_HEADERS) {
    const value = req.headers[name];
    if (value) headers[name] = value;
  }
  if (encoding === 'gzip') return { value: body, headers: { ...headers, 'content-encoding': 'gzip' } };
  if (isCompressible(contentType) && body.length >= MIN_COMPRESS_BYTES) {
    return { value: await gzip(body, { level: 6 }), headers: { ...headers, 'content-encoding': 'gzip' } };
  }
  return { value: body, headers };
}

/** The tid an If-Match header names (quoted or not), `*` (any current value, RFC 9110), or undefined; anything else is a 400. */
export function checkedIfMatch(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const ifMatch = header.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
  if (ifMatch !== undefined && ifMatch !== '*' && !isTid(ifMatch)) throw badRequest('If-Match must be * or an ETag this bucket gave out.', 'invalid-precondition');
  return ifMatch;
}

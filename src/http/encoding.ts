import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';
import zlib from 'node:zlib';
import { gzip, gunzip, brotliCompress as brotli, brotliDecompress as unbrotli } from '../util/compression.js';

/** Below this size compression costs more than it saves. */
const MIN_COMPRESS_BYTES = 1024;
/** gzip first: stored content is gzip, and gzip is far cheaper to produce than good brotli. */
const PREFERRED = ['gzip', 'br', 'identity'];

export function isCompressible(contentType: string | undefined): boolean {
  if (!contentType) return false;
  return /^(text\/|application\/(json|problem\+json|javascript|xml|[\w.+-]+\+json|[\w.+-]+\+xml))|image\/svg\+xml/i.test(contentType);
}

function negotiateEncoding(acceptEncoding: string | undefined): string {
  if (!acceptEncoding) return 'identity';
  // negotiator 1.x takes the server's preference order as a second argument (its typings predate it).
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }) as unknown as {
    encoding(available: string[], options: { preferred: string[] }): string | undefined;
  };
  return negotiator.encoding(PREFERRED, { preferred: PREFERRED }) ?? 'identity';
}

function acceptsEncoding(acceptEncoding: string | undefined, encoding: string): boolean {
  if (!acceptEncoding) return false;
  // Fast path for the common header without weights ("gzip, deflate, br").
  if (!acceptEncoding.includes(';')) return acceptEncoding.split(',').some((e) => e.trim().toLowerCase() === encoding);
  return new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encodings([encoding]).length > 0;
}

/**
 * Bodies below this size are (de)compressed on the main thread: handing ~100 µs of work to the
 * thread pool costs more than it saves, and the pool's per-thread malloc arenas grow RSS.
 */
export const SYNC_BYTES = 256 * 1024;

export async function compress(body: Buffer, encoding: string): Promise<Buffer> {
  const sync = body.length < SYNC_BYTES;
  if (encoding === 'gzip') return sync ? zlib.gzipSync(body, { level: 6 }) : gzip(body, { level: 6 });
  if (encoding === 'br') {
    const options = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } };
    return sync ? zlib.brotliCompressSync(body, options) : brotli(body, options);
  }
  return body;
}

/** `maxBytes`: past this many decoded bytes it fails (a RangeError) instead of growing memory. */
export async function decompress(body: Buffer, encoding: string, maxBytes?: number): Promise<Buffer> {
  const sync = body.length < SYNC_BYTES / 4;
  const options = maxBytes === undefined ? {} : { maxOutputLength: maxBytes };
  if (encoding === 'gzip') return sync ? zlib.gunzipSync(body, options) : gunzip(body, options);
  if (encoding === 'br') return sync ? zlib.brotliDecompressSync(body, options) : unbrotli(body, options);
  return body;
}

/** Bytes of decompressed bodies kept for clients that do not accept the stored encoding. */
const DECOMPRESSED_BYTES = 8 * 1024 * 1024;
const decompressedBodies = new LRUCache<Buffer, Buffer>({ maxSize: DECOMPRESSED_BYTES, sizeCalculation: (b) => Math.max(1, b.length) });
/** Stored bodies sent decompressed once: the second time, the result is kept. */
const seenOnce = new WeakSet<Buffer>();

/**
 * A stored body decompressed, remembered by the identity of its compressed bytes: a hot render is
 * one Buffer shared by every request for it (immutable by tid), so it is decompressed once, not
 * per request. Bodies read anew for each request (a bucket value) are new Buffers and are only
 * ever seen once, so they do not crowd the cache out.
 */
async function decompressed(body: Buffer, encoding: string): Promise<Buffer> {
  const hit = decompressedBodies.get(body);
  if (hit) return hit;
  const plain = await decompress(body, encoding);
  if (seenOnce.has(body)) decompressedBodies.set(body, plain);
  else seenOnce.add(body);
  return plain;
}

/**
 * Chooses how to send a body: a body the handler already compressed (stored compressed) goes out
 * as-is to clients that accept it and is decompressed for the others; other compressible bodies are
 * compressed on the fly.
 */
export async function encodeBody(
  body: Buffer,
  headers: Record<string, string>,
  acceptEncoding: string | undefined,
): Promise<Buffer> {
  const stored = headers['content-encoding'];
  if (stored && stored !== 'identity') {
    headers.vary = appendVary(headers.vary, 'Accept-Encoding');
    if (acceptsEncoding(acceptEncoding, stored)) return body;
    delete headers['content-encoding'];
    return decompressed(body, stored);
  }
  if (!isCompressible(headers['content-type'])) return body;
  headers.vary = appendVary(headers.vary, 'Accept-Encoding');
  if (body.length < MIN_COMPRESS_BYTES) return body;
  const encoding = negotiateEncoding(acceptEncoding);
  if (encoding === 'identity') return body;
  headers['content-encoding'] = encoding;
  return compress(body, encoding);
}

/** The Vary a body's answer carries for its encoding, also when it is a 304 and sends no body. */
export function varyForEncoding(headers: Record<string, string>): void {
  const stored = headers['content-encoding'];
  if ((stored && stored !== 'identity') || isCompressible(headers['content-type'])) headers.vary = appendVary(headers.vary, 'Accept-Encoding');
}

function appendVary(vary: string | undefined, field: string): string {
  if (!vary) return field;
  return vary.toLowerCase().split(/\s*,\s*/).includes(field.toLowerCase()) ? vary : `${vary}, ${field}`;
}

import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** zlib's compressors as promises (off the event loop, on libuv's threads), one definition for every layer. */
export const gzip = promisify(zlib.gzip);
export const gunzip = promisify(zlib.gunzip);
export const brotliCompress = promisify(zlib.brotliCompress);
export const brotliDecompress = promisify(zlib.brotliDecompress);

/**
 * Inflates at once, on the event loop: for a reader going through many stored parts in a row (a
 * snapshot), where a part of a few tens of KB inflates in less time than a round trip through the
 * thread pool costs (a stream, its window and its callbacks for each part).
 */
export const gunzipNow = (data: Buffer): Buffer => zlib.gunzipSync(data);

/** The most one stored deflate block holds. */
const STORED_BLOCK = 0xffff;
/** A gzip member's header: deflate, no name, no time, unknown OS (RFC 1952). */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * `data` as one gzip member of stored (uncompressed) deflate blocks: for a few hundred bytes
 * among large compressed ones, where deflating costs zlib's set-up for each call (tens of µs)
 * and saves a few hundred bytes. Any gzip reader reads it as it reads a compressed member.
 */
export function storedGzip(data: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / STORED_BLOCK));
  const out = Buffer.allocUnsafe(GZIP_HEADER.length + blocks * 5 + data.length + 8);
  let at = GZIP_HEADER.copy(out, 0);
  for (let block = 0; block < blocks; block++) {
    const part = data.subarray(block * STORED_BLOCK, (block + 1) * STORED_BLOCK);
    out[at] = block === blocks - 1 ? 1 : 0; // BFINAL on the last; BTYPE 00, stored
    out.writeUInt16LE(part.length, at + 1);
    out.writeUInt16LE(~part.length & 0xffff, at + 3);
    at += 5 + part.copy(out, at + 5);
  }
  out.writeUInt32LE(zlib.crc32(data), at);
  out.writeUInt32LE(data.length % 2 ** 32, at + 4);
  return out;
}

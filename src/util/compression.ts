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

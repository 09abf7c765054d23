import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** zlib's compressors as promises (off the event loop, on libuv's threads), one definition for every layer. */
export const gzip = promisify(zlib.gzip);
export const gunzip = promisify(zlib.gunzip);
export const brotliCompress = promisify(zlib.brotliCompress);
export const brotliDecompress = promisify(zlib.brotliDecompress);

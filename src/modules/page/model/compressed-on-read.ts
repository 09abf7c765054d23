import zlib from 'node:zlib';
import { compress, SYNC_BYTES } from '../../../http/encoding.js';

/** Parts gzipped as storage keeps them, each made when first read, or all by `settle`. */
export interface CompressedOnRead<K extends string> {
  parts: Record<K, Buffer>;
  /** Every part compressed: before the parts are stored or copied. */
  settle(): Promise<void>;
}

/**
 * A render's parts compressed only when something reads them. A cold miss's reader is answered
 * from parts it reads uncompressed (the 2.x HTML) or from one part (the 999.x HTML): the others
 * are compressed after the answer has gone out, not before it. Large parts are compressed on the
 * thread pool at once, so that a read of one does not hold the event loop for milliseconds (only
 * one read before the pool is done compresses it here). The same bytes either way (gzip at the
 * level `compress` uses).
 */
export function compressedOnRead<K extends string>(raw: Record<K, Buffer>): CompressedOnRead<K> {
  const keys = Object.keys(raw) as K[];
  const done = new Map<K, Buffer>();
  const remember = (key: K, zipped: Buffer) => {
    if (!done.has(key)) done.set(key, zipped);
    return done.get(key)!;
  };
  const parts = {} as Record<K, Buffer>;
  for (const key of keys) {
    Object.defineProperty(parts, key, { enumerable: true, get: () => done.get(key) ?? remember(key, zlib.gzipSync(raw[key], { level: 6 })) });
  }
  const onPool = keys.filter((key) => raw[key].length >= SYNC_BYTES).map(async (key) => remember(key, await compress(raw[key], 'gzip')));
  // Its failure is `settle`'s to report, not an unhandled rejection meanwhile.
  for (const zipping of onPool) zipping.catch(() => {});
  return {
    parts,
    settle: async () => {
      await Promise.all([...onPool, ...keys.filter((key) => !done.has(key) && raw[key].length < SYNC_BYTES).map(async (key) => remember(key, await compress(raw[key], 'gzip')))]);
    },
  };
}

import { LRUCache } from 'lru-cache';
import { gzip } from '../../../util/compression.js';

/**
 * Branch versions' bodies as they are sent, gzipped once per version and form (a version never
 * changes), bounded in bytes: a draft read again and again is not compressed again each time.
 * The HTTP layer decompresses for the clients that do not take gzip, as it does stored renders.
 */
export class VersionBodies {
  private readonly made: LRUCache<string, Buffer>;

  constructor(maxBytes: number) {
    this.made = new LRUCache({ maxSize: Math.max(1, maxBytes), sizeCalculation: (b) => Math.max(1, b.length) });
  }

  async gzipped(key: string, text: () => Promise<string> | string): Promise<Buffer> {
    const hit = this.made.get(key);
    if (hit) return hit;
    const made = await gzip(Buffer.from(await text()));
    this.made.set(key, made);
    return made;
  }
}

/**
 * How often each key was used lately, estimated in fixed memory: a count-min sketch of four rows
 * of small saturating counters, all halved once `sampleSize` uses have been counted, so that
 * what was popular long ago fades (TinyLFU's frequency sketch, as in Caffeine). A cache asks it
 * whether a key it could keep is used more often than the entry it would push out.
 */
export class FrequencySketch {
  private readonly counters: Uint8Array;
  private readonly mask: number;
  private counted = 0;

  /** `width`: counters a row (rounded up to a power of two); `sampleSize`: uses counted between halvings. */
  constructor(width: number, private readonly sampleSize: number) {
    const size = 2 ** Math.ceil(Math.log2(Math.max(16, width)));
    this.counters = new Uint8Array(4 * size);
    this.mask = size - 1;
  }

  /** Counts one use of `key`. */
  increment(key: string): void {
    const h = hash(key);
    let added = false;
    for (let row = 0; row < 4; row++) {
      const i = this.slot(h, row);
      if (this.counters[i]! < MAX_COUNT) {
        this.counters[i]!++;
        added = true;
      }
    }
    if (added && ++this.counted >= this.sampleSize) this.halve();
  }

  /** The estimated uses of `key` (at most `MAX_COUNT`): the least of its four counters. */
  frequency(key: string): number {
    const h = hash(key);
    let least = MAX_COUNT;
    for (let row = 0; row < 4; row++) least = Math.min(least, this.counters[this.slot(h, row)]!);
    return least;
  }

  /**
   * Row `row`'s counter of a key hashed to `h`: four indexes by double hashing, the step taken from
   * the hash's high half (the index's low bits are the low half's: two keys alike there would
   * otherwise meet in every row).
   */
  private slot(h: number, row: number): number {
    const step = ((h >>> 16) | (h << 16)) | 1;
    return row * (this.mask + 1) + ((h + Math.imul(row, step)) & this.mask);
  }

  private halve(): void {
    for (let i = 0; i < this.counters.length; i++) this.counters[i]! >>= 1;
    this.counted = Math.floor(this.counted / 2);
  }
}

/** Counters saturate here: a key used more often than this is simply popular. */
const MAX_COUNT = 15;

/** FNV-1a over a string's UTF-16 code units, mixed (murmur3's finaliser) so its low bits spread. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

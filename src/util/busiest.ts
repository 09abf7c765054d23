/**
 * The most frequent keys of a stream in bounded memory (Metwally et al.'s Space-Saving): at most
 * `kept` counters; a new key takes the place of the least counted, inheriting its count, so a key
 * as frequent as the `kept`-th is never missed and counts are over-estimates by at most the count
 * it inherited. For an operator's "which wikis of the farm are busiest" at any number of wikis.
 */
export class Busiest {
  private readonly counts = new Map<string, number>();

  constructor(private readonly kept: number) {}

  add(key: string): void {
    const count = this.counts.get(key);
    if (count !== undefined) {
      this.counts.set(key, count + 1);
      return;
    }
    if (this.counts.size < this.kept) {
      this.counts.set(key, 1);
      return;
    }
    let least: string | undefined;
    let fewest = Infinity;
    for (const [k, c] of this.counts) {
      if (c < fewest) [least, fewest] = [k, c];
    }
    this.counts.delete(least!);
    this.counts.set(key, fewest + 1);
  }

  /** The `n` most counted, most first. */
  top(n: number): [string, number][] {
    return [...this.counts].sort((a, b) => b[1] - a[1]).slice(0, n);
  }
}

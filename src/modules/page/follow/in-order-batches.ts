/**
 * Batches of the wiki's changes under way, each finished (its cursor stored) only after the ones
 * read before it: a batch that fails fails every one read after it, and the failure is told once.
 */
export class InOrderBatches {
  private readonly applying: Promise<void>[] = [];
  private failed: unknown;

  /** Batches not yet finished. */
  get size(): number {
    return this.applying.length;
  }

  /** Runs `finish` once the batches added before it have finished, unless one of them failed. */
  add(finish: () => Promise<void>): void {
    const before = this.applying.at(-1);
    const applied = (async () => {
      await before;
      await finish();
    })();
    this.applying.push(applied);
    const settled = () => this.applying.splice(this.applying.indexOf(applied), 1);
    applied.then(settled, (err: unknown) => {
      settled();
      this.failed ??= err;
    });
  }

  /** Waits until at most `count` batches are under way. */
  async atMost(count: number): Promise<void> {
    while (this.applying.length > count) await this.applying[0]!.catch(() => undefined);
  }

  /** Throws, once, the failure of a batch under way. */
  throwIfFailed(): void {
    if (this.failed === undefined) return;
    const err = this.failed;
    this.failed = undefined;
    throw err;
  }

  /** Resolves once every batch under way has finished or failed. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.applying);
  }
}

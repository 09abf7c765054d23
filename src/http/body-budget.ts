import { HttpError } from '../util/errors.js';

/**
 * The bytes of request bodies this process holds at once, however many requests bring them. A
 * body is held from its first byte until its answer is sent, parsed meanwhile into strings of up
 * to twice its size and passed on (to Parsoid, to storage): eight HTML documents of 8 MB posted
 * at once to a transform, each within `max_body_bytes`, ran a 128 MB heap out and ended the
 * process. A request whose body would not fit waits, unread (its bytes stay with the kernel and
 * its client), for bodies ahead of it to be answered, up to 10 s, and is then refused with a 503.
 * A body larger than the whole budget waits until it is alone.
 */
export class BodyBudget {
  private held = 0;
  private readonly waiting: { bytes: number; admit: () => void }[] = [];

  /** `maxWaitMs`: how long a request waits for room before it is refused. */
  constructor(readonly total: number, private readonly maxWaitMs = 10_000) {}

  /** Bytes held now. */
  get size(): number {
    return this.held;
  }

  /** Room for a body of `bytes`: the function that gives it back (once), when there is room. */
  async take(bytes: number): Promise<() => void> {
    const want = Math.min(bytes, this.total);
    if (this.waiting.length > 0 || this.held + want > this.total) {
      await new Promise<void>((resolve, reject) => {
        const entry = { bytes: want, admit: () => {
          clearTimeout(timer);
          resolve();
        } };
        const timer = setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          // One refused may have held back smaller ones behind it.
          this.admitWaiting();
          reject(new HttpError(503, 'bodies-busy', 'The service is taking in as many request bodies as it holds at once; send this again shortly.', { headers: { 'retry-after': '2', connection: 'close' } }));
        }, this.maxWaitMs);
        this.waiting.push(entry);
      });
    } else {
      this.held += want;
    }
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= want;
      this.admitWaiting();
    };
  }

  /** Lets in the waiting ones, in order, while the first of them fits. */
  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.held + this.waiting[0]!.bytes <= this.total) {
      const next = this.waiting.shift()!;
      this.held += next.bytes;
      next.admit();
    }
  }
}

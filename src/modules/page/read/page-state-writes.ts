/**
 * A page's state being written after the wiki named its latest revision, by domain and title: a
 * render started meanwhile writes its pointers after it (they would be overwritten otherwise).
 */
export class PageStateWrites {
  private readonly inFlight = new Map<string, Promise<void>>();

  /** Resolves once the page's state write in flight, if any, is done. */
  written(domain: string, title: string): Promise<void> | undefined {
    return this.inFlight.get(`${domain}\u0000${title}`);
  }

  /** Runs `write` as the page's state write in flight. */
  async writing<T>(domain: string, title: string, write: () => Promise<T>): Promise<T> {
    const key = `${domain}\u0000${title}`;
    let finished!: () => void;
    const settled = new Promise<void>((resolve) => (finished = resolve));
    this.inFlight.set(key, settled);
    try {
      return await write();
    } finally {
      finished();
      if (this.inFlight.get(key) === settled) this.inFlight.delete(key);
    }
  }
}

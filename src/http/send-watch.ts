import type { Socket } from 'node:net';

/** What is waiting on a connection: the bytes node holds, and those libuv holds for the kernel (which go down as the client reads). */
function waitingOf(socket: Socket): string {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle;
  return `${socket.writableLength}/${handle?.writeQueueSize ?? 0}`;
}

/**
 * Connections whose client takes nothing of an answer written to it. node:http keeps an answer's
 * bytes until its client reads them, with no limit of time: a client that asks and never reads
 * held the answer's memory and its connection for good (forty such for snapshot pages held half a
 * gigabyte). A connection with bytes waiting that do not move for `timeoutMs` is closed, as
 * nginx's `send_timeout` closes one: a slow client that takes some of them now and then is not.
 */
export class SendWatch {
  private readonly watched = new Map<Socket, { waiting: string; since: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number, private readonly onCut: () => void) {}

  /** After an answer (or part of a stream) was written: watched while any of it waits. */
  watch(socket: Socket | null): void {
    if (!socket || socket.destroyed || socket.writableLength === 0 || this.watched.has(socket)) return;
    this.watched.set(socket, { waiting: waitingOf(socket), since: Date.now() });
    this.timer ??= setInterval(this.sweep, Math.max(10, Math.min(1000, this.timeoutMs / 4))).unref();
  }

  /** Connections watched now (for tests). */
  get size(): number {
    return this.watched.size;
  }

  private readonly sweep = () => {
    const now = Date.now();
    for (const [socket, seen] of this.watched) {
      if (socket.destroyed || socket.writableLength === 0) {
        this.watched.delete(socket);
        continue;
      }
      const waiting = waitingOf(socket);
      if (waiting !== seen.waiting) {
        seen.waiting = waiting;
        seen.since = now;
      } else if (now - seen.since >= this.timeoutMs) {
        this.watched.delete(socket);
        this.onCut();
        socket.destroy();
      }
    }
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests of one connection handled at once. HTTP/1.1 answers a connection's requests in order
 * (RFC 9112 §9.3.2), so the next one waits for this one's answer to be sent (handed to the
 * system): as nginx does, which reads a connection's next request only then.
 */
const ACTIVE_PER_CONNECTION = 1;

/**
 * Requests of one connection that may wait behind it, parsed (a client pipelines a handful; apt
 * sends ten). One more closes the connection: its client retries what was not answered (RFC 9112
 * §9.3.2), and nothing of its is waiting any more.
 */
const WAITING_PER_CONNECTION = 16;

interface ConnectionState {
  gate: PipelineGate;
  socket: Socket;
  active: number;
  waiting: { res: ServerResponse; run: () => void }[];
}

/** A connection's state, on the connection and on each answer begun: no map lookup, no closure per request. */
const STATE = Symbol('pipeline-gate');
type Tracked<T> = T & { [STATE]?: ConnectionState };

/** An answer's 'close': it was sent, or its connection is gone. */
function answered(this: Tracked<ServerResponse>): void {
  const state = this[STATE];
  if (state) state.gate.finished(state);
}

/**
 * Bounds what a connection that pipelines requests can make the service hold. Node parses every
 * request a connection sends and hands each over at once; it stops reading only once answers wait
 * to be written, and answers are made after a handler's storage reads. So a client that sent
 * requests without reading the answers had all of them handled side by side: 100 connections each
 * sending 256 KB of GETs (some 2,000 each) and reading nothing took a process with a 128 MB heap
 * to out-of-memory in about three seconds. Here each connection has one request handled at a time
 * (the next once the answer before it is sent), a few more waiting, and no more.
 *
 * Node still parses the whole of what it read from a connection at once (up to 64 KB: hundreds of
 * small requests) before anything can stop it; those it hands over after the connection was closed
 * are dropped here at once.
 */
export class PipelineGate {
  /** `onCut`: a connection closed for sending more than may wait. */
  constructor(private readonly onCut: () => void, private readonly active = ACTIVE_PER_CONNECTION, private readonly waiting = WAITING_PER_CONNECTION) {}

  /** Runs `run` for the request now, or once the requests before it on its connection are answered. */
  admit(req: IncomingMessage, res: ServerResponse, run: () => void): void {
    const socket: Tracked<Socket> = req.socket;
    // Left in a buffer already parsed when its connection was closed: nothing will read its answer.
    if (socket.destroyed) return;
    const state = (socket[STATE] ??= { gate: this, socket, active: 0, waiting: [] });
    if (state.active < this.active) return start(state, res, run);
    if (state.waiting.length >= this.waiting) {
      state.waiting = [];
      this.onCut();
      socket.destroy();
      return;
    }
    state.waiting.push({ res, run });
  }

  /** One of a connection's answers is done: the requests waiting behind it go on, as many as may. */
  finished(state: ConnectionState): void {
    state.active--;
    if (state.socket.destroyed) {
      state.waiting = [];
      return;
    }
    while (state.active < this.active && state.waiting.length > 0) {
      const next = state.waiting.shift()!;
      start(state, next.res, next.run);
    }
  }
}

function start(state: ConnectionState, res: Tracked<ServerResponse>, run: () => void): void {
  state.active++;
  res[STATE] = state;
  res.on('close', answered);
  run();
}

import os from 'node:os';
import { Piscina } from 'piscina';
import type { Html2Maker, Html2Parts } from '../model/html-versions.js';
import type { PackedBody } from '../tables/snapshot-bodies.js';
import type { BodyParts, PlainBodyParts, RecordInput } from '../snapshot/record-format.js';
import type { RecordFormatter } from '../snapshot/record-formatter.js';

/**
 * The page module's worker threads: the CPU work of a long article kept off the event loop (its
 * 2.x HTML for the read path, its snapshot body as its render is stored, a snapshot's records).
 * Their code is page-thread-worker.ts.
 */

/** The parts copied and moved, not cloned: the storage layer's buffers may be kept (its read cache), and a move costs nothing on the way. */
function moved<T extends BodyParts>(input: T): { value: T; transferList: ArrayBuffer[] } {
  const parts = { html: new Uint8Array(input.html), dataMw: new Uint8Array(input.dataMw), wikitext: new Uint8Array(input.wikitext) };
  return { value: { ...input, ...parts }, transferList: [parts.html.buffer, parts.dataMw.buffer, parts.wikitext.buffer] };
}

/** A body as a thread answers it (its bytes a plain Uint8Array), with a Buffer, as storage answers one. */
const asPacked = (body: PackedBody): PackedBody => ({ ...body, gz: Buffer.from(body.gz.buffer, body.gz.byteOffset, body.gz.byteLength) });

/** A page's worker thread ends after this long without work, and starts again with the next. */
export const PAGE_THREAD_IDLE_MS = 60_000;

export interface WorkerOptions {
  /**
   * Threads that have had nothing to do for this long end (started again when needed): for a
   * process that makes bodies now and then (a service), not one that makes a wiki's at once.
   */
  idleMs?: number;
}

/**
 * Records and bodies made on `threads` worker threads. A long page's body (inflating its parts,
 * inlining data-mw, escaping the HTML into JSON, deflating it) is milliseconds of CPU: on the main
 * thread alone, beside the storage reads and the chunks' writing, it left the other cores idle.
 * The threads start with the first page to make: a snapshot that copies every body as stored
 * needs none, and their start (loading the service's code, a heap each) would take the cores
 * from its main thread.
 */
export function workerFormatter(threads = os.availableParallelism(), options: WorkerOptions = {}): RecordFormatter & { html2: Html2Maker } {
  type Pool = Piscina<RecordInput | BodyParts | PlainBodyParts | Html2Parts, string | PackedBody | Uint8Array>;
  let started: Pool | undefined;
  const pool = (): Pool => (started ??= new Piscina<RecordInput | BodyParts | PlainBodyParts | Html2Parts, string | PackedBody | Uint8Array>({
    filename: new URL('./page-thread-worker.js', import.meta.url).href,
    minThreads: options.idleMs === undefined ? threads : 0,
    maxThreads: threads,
    ...(options.idleMs === undefined ? {} : { idleTimeout: options.idleMs }),
    // No bound of the pool's own: its callers bound the pages under way (a snapshot's window).
  }));
  return {
    format: async (input) => {
      const { value, transferList } = moved(input);
      return (await pool().run(value, { transferList })) as string;
    },
    pack: async (parts) => {
      const { value, transferList } = moved({ html: parts.html, dataMw: parts.dataMw, wikitext: parts.wikitext });
      return asPacked((await pool().run(value, { name: 'pack', transferList })) as PackedBody);
    },
    packPlain: async (parts) => {
      const { value, transferList } = moved({ html: parts.html, dataMw: parts.dataMw, wikitext: parts.wikitext });
      return asPacked((await pool().run(value, { name: 'packPlain', transferList })) as PackedBody);
    },
    /** A render's 2.x HTML (see model/html-versions.ts), its parts copied for the thread: the render keeps its own. */
    html2: async (parts) => {
      const sent = { html: new Uint8Array(parts.html), dataMw: new Uint8Array(parts.dataMw), gzipped: parts.gzipped };
      const gz = (await pool().run(sent, { name: 'html2', transferList: [sent.html.buffer, sent.dataMw.buffer] })) as Uint8Array;
      return Buffer.from(gz.buffer, gz.byteOffset, gz.byteLength);
    },
    close: async () => {
      const closing = started;
      // Started again if asked after (a pool destroyed takes no work).
      started = undefined;
      await closing?.destroy();
    },
  };
}

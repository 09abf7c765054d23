import os from 'node:os';
import { Piscina } from 'piscina';
import type { PackedBody } from '../tables/snapshot-bodies.js';
import { formatRecord, packBody, type BodyParts, type RecordInput } from './record-format.js';

/** Makes snapshot records and bodies: in the calling thread, or spread over worker threads. */
export interface RecordFormatter {
  /** A page's whole line (the HTTP snapshot). */
  format(input: RecordInput): Promise<string>;
  /** A render's body packed for an archive (made once per render: see tables/snapshot-bodies.ts). */
  pack(parts: BodyParts): Promise<PackedBody>;
  close(): Promise<void>;
}

/** In the calling thread: for the few pages an HTTP snapshot page holds, where a thread's start costs more. */
export const inThread: RecordFormatter = {
  format: async (input) => formatRecord(input),
  pack: async (parts) => packBody(parts),
  close: async () => {},
};

/** The parts copied and moved, not cloned: the storage layer's buffers may be kept (its read cache), and a move costs nothing on the way. */
function moved<T extends BodyParts>(input: T): { value: T; transferList: ArrayBuffer[] } {
  const parts = { html: new Uint8Array(input.html), dataMw: new Uint8Array(input.dataMw), wikitext: new Uint8Array(input.wikitext) };
  return { value: { ...input, ...parts }, transferList: [parts.html.buffer, parts.dataMw.buffer, parts.wikitext.buffer] };
}

/**
 * Records and bodies made on `threads` worker threads. A long page's body (inflating its parts,
 * inlining data-mw, escaping the HTML into JSON, deflating it) is milliseconds of CPU: on the main
 * thread alone, beside the storage reads and the chunks' writing, it left the other cores idle.
 * The threads start with the first page to make: a snapshot that copies every body as stored
 * needs none, and their start (loading the service's code, a heap each) would take the cores
 * from its main thread.
 */
export function workerFormatter(threads = os.availableParallelism()): RecordFormatter {
  let started: Piscina<RecordInput | BodyParts, string | PackedBody> | undefined;
  const pool = () => (started ??= new Piscina<RecordInput | BodyParts, string | PackedBody>({
    filename: new URL('./record-worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // No bound of the pool's own: its callers bound the pages under way (a snapshot's window).
  }));
  return {
    format: async (input) => {
      const { value, transferList } = moved(input);
      return (await pool().run(value, { transferList })) as string;
    },
    pack: async (parts) => {
      const { value, transferList } = moved({ html: parts.html, dataMw: parts.dataMw, wikitext: parts.wikitext });
      return (await pool().run(value, { name: 'pack', transferList })) as PackedBody;
    },
    close: async () => {
      await started?.destroy();
    },
  };
}

import os from 'node:os';
import { Piscina } from 'piscina';
import { formatRecord, type RecordInput } from './record-format.js';

/** Makes snapshot records: in the calling thread, or spread over worker threads. */
export interface RecordFormatter {
  format(input: RecordInput): Promise<string>;
  close(): Promise<void>;
}

/** In the calling thread: for the few pages an HTTP snapshot page holds, where a thread's start costs more. */
export const inThread: RecordFormatter = {
  format: async (input) => formatRecord(input),
  close: async () => {},
};

/**
 * Records made on `threads` worker threads. A long page's record (inflating its parts, inlining
 * data-mw, escaping the HTML into JSON) is milliseconds of CPU: on the main thread alone, beside
 * the storage reads and the chunks' writing, it left the other cores idle (a third more pages/s
 * at 100,000 long renders on two cores; short pages gain nothing, see bench/README.md).
 */
export function workerFormatter(threads = os.availableParallelism()): RecordFormatter {
  const pool = new Piscina<RecordInput, string>({
    filename: new URL('./record-worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    // No bound of the pool's own: its callers bound the pages under way (a snapshot's window).
  });
  return {
    format: (input) => {
      // The parts copied and moved, not cloned: the storage layer's buffers may be kept (its read
      // cache), and a move costs nothing on the way.
      const parts = { html: new Uint8Array(input.html), dataMw: new Uint8Array(input.dataMw), wikitext: new Uint8Array(input.wikitext) };
      return pool.run({ ...input, ...parts }, { transferList: [parts.html.buffer, parts.dataMw.buffer, parts.wikitext.buffer] });
    },
    close: () => pool.destroy(),
  };
}

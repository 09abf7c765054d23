import type { PackedBody } from '../tables/snapshot-bodies.js';
import { formatRecord, packBody, packPlainBody, type BodyParts, type PlainBodyParts, type RecordInput } from './record-format.js';

/** Makes snapshot records and bodies: in the calling thread, or spread over worker threads (thread/page-thread.ts). */
export interface RecordFormatter {
  /** A page's whole line (the HTTP snapshot). */
  format(input: RecordInput): Promise<string>;
  /** A render's body packed for an archive (made once per render: see tables/snapshot-bodies.ts). */
  pack(parts: BodyParts): Promise<PackedBody>;
  /** The same from a render's parts as they came (a render just made: see bodies-on-render.ts). */
  packPlain(parts: PlainBodyParts): Promise<PackedBody>;
  close(): Promise<void>;
}

/** In the calling thread: for the few pages an HTTP snapshot page holds, where a thread's start costs more. */
export const inThread: RecordFormatter = {
  format: async (input) => formatRecord(input),
  pack: async (parts) => packBody(parts),
  packPlain: packPlainBody,
  close: async () => {},
};

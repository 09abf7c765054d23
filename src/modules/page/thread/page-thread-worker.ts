import { html2Gzipped, type Html2Parts } from '../model/html-versions.js';
import type { PackedBody } from '../tables/snapshot-bodies.js';
import { formatRecord, packBody, packPlainBodyNow, type BodyParts, type PlainBodyParts, type RecordInput } from '../snapshot/record-format.js';

/** A worker thread of `workerFormatter` (page-thread.ts): one record a call. */
export default function format(input: RecordInput): string {
  return formatRecord(input);
}

/** A worker thread of `workerFormatter` (page-thread.ts): one body a call. */
export function pack(parts: BodyParts): PackedBody {
  return packBody(parts);
}

/** Bytes come to a thread as plain Uint8Arrays: Buffers again, for their UTF-8 decoding. */
const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A worker thread of `workerFormatter` (page-thread.ts): one body a call, from a render's parts as they came. */
export function packPlain(parts: PlainBodyParts): PackedBody {
  return packPlainBodyNow({ html: asBuffer(parts.html), dataMw: asBuffer(parts.dataMw), wikitext: asBuffer(parts.wikitext) });
}

/** A worker thread of `workerFormatter`'s `html2`: a render's 2.x HTML, gzipped. */
export function html2(parts: Html2Parts): Uint8Array {
  return html2Gzipped(parts);
}

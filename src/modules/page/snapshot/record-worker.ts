import type { PackedBody } from '../tables/snapshot-bodies.js';
import { formatRecord, packBody, type BodyParts, type RecordInput } from './record-format.js';

/** A worker thread of `RecordFormatter`: one record a call. */
export default function format(input: RecordInput): string {
  return formatRecord(input);
}

/** A worker thread of `RecordFormatter`: one body a call. */
export function pack(parts: BodyParts): PackedBody {
  return packBody(parts);
}

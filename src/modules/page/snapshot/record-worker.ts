import { formatRecord, type RecordInput } from './record-format.js';

/** A worker thread of `RecordFormatter`: one record a call. */
export default function format(input: RecordInput): string {
  return formatRecord(input);
}

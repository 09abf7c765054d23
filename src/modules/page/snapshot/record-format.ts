import { gunzipNow } from '../../../util/compression.js';
import { toHtml2 } from '../model/html-versions.js';
import type { RevisionRow } from '../model/revision.js';
import { enterpriseRecord, type WikiFacts } from './enterprise.js';

/**
 * What one page's line is made of, as storage gave it: the parts still gzipped. Plain data, so
 * that it can be handed to a worker thread as it is (a structured clone of a few small buffers).
 */
export interface RecordInput {
  row: RevisionRow;
  /** The title as the wiki writes it, and its namespace. */
  text: string;
  ns: number;
  facts: WikiFacts;
  /** The snapshot's moment (ISO 8601): every record's event time. */
  eventTime: string;
  html: Uint8Array;
  dataMw: Uint8Array;
  wikitext: Uint8Array;
}

/**
 * One page's line of an Enterprise snapshot: its parts inflated, its HTML made 2.x (data-mw
 * inline), its record serialized. Nearly all of a snapshot's work for a page stored here.
 */
export function formatRecord(input: RecordInput): string {
  const inflate = (part: Uint8Array) => gunzipNow(Buffer.from(part.buffer, part.byteOffset, part.byteLength)).toString('utf8');
  const html = toHtml2(inflate(input.html), JSON.parse(inflate(input.dataMw)) as { ids?: Record<string, unknown> });
  const record = enterpriseRecord(input.row, input.text, input.ns, input.facts, html, inflate(input.wikitext), input.eventTime);
  return `${JSON.stringify(record)}\n`;
}

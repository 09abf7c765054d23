import { gzipSync } from 'node:zlib';
import { gunzipNow } from '../../../util/compression.js';
import { HTML_2, toHtml2 } from '../model/html-versions.js';
import type { RevisionRow } from '../model/revision.js';
import type { PackedBody } from '../tables/snapshot-bodies.js';
import { enterpriseRecord, type WikiFacts } from './enterprise.js';

/** How bodies are made: a body stored under another name is made again. */
export const BODY_FORMAT = `enterprise-1/html-${HTML_2}`;

/** What a page's line says beside its body. */
export interface RecordMeta {
  row: RevisionRow;
  /** The title as the wiki writes it, and its namespace. */
  text: string;
  ns: number;
  facts: WikiFacts;
  /** The snapshot's moment (ISO 8601): every record's event time. */
  eventTime: string;
}

/**
 * A render's parts a body is made of, as storage gave them (still gzipped). Plain data, so that
 * it can be handed to a worker thread as it is (a structured clone of a few small buffers).
 */
export interface BodyParts {
  html: Uint8Array;
  dataMw: Uint8Array;
  wikitext: Uint8Array;
}

export type RecordInput = RecordMeta & BodyParts;

/** The `article_body` as JSON: the parts inflated, the HTML made 2.x (data-mw inline). Nearly all of a record's work. */
function articleBody(parts: BodyParts): { json: string; wikitextBytes: number } {
  const inflate = (part: Uint8Array) => gunzipNow(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
  const html = toHtml2(inflate(parts.html).toString('utf8'), JSON.parse(inflate(parts.dataMw).toString('utf8')) as { ids?: Record<string, unknown> });
  const wikitext = inflate(parts.wikitext);
  return { json: JSON.stringify({ html, wikitext: wikitext.toString('utf8') }), wikitextBytes: wikitext.length };
}

/**
 * A record's JSON before its body and after it (ending the line): head, body and tail together
 * are the bytes of the whole record serialized at once, fields in the same order.
 */
export function recordAround(meta: RecordMeta, wikitextBytes: number): { head: string; tail: string } {
  const entries = Object.entries(enterpriseRecord(meta.row, meta.text, meta.ns, meta.facts, null, wikitextBytes, meta.eventTime));
  const at = entries.findIndex(([key]) => key === 'article_body');
  const head = JSON.stringify(Object.fromEntries(entries.slice(0, at)));
  const tail = JSON.stringify(Object.fromEntries(entries.slice(at + 1)));
  return { head: `${head.slice(0, -1)},"article_body":`, tail: `,${tail.slice(1)}\n` };
}

/** One page's line of an Enterprise snapshot. */
export function formatRecord(input: RecordInput): string {
  const body = articleBody(input);
  const { head, tail } = recordAround(input, body.wikitextBytes);
  return head + body.json + tail;
}

/** A render's body as an archive holds it: one gzip member (deflate's default level, so the same parts give the same bytes). */
export function packBody(parts: BodyParts): PackedBody {
  const { json, wikitextBytes } = articleBody(parts);
  return { gz: gzipSync(json), bytes: Buffer.byteLength(json), wikitextBytes };
}

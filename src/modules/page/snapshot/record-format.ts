import { gzipSync } from 'node:zlib';
import { gunzipNow, gzip } from '../../../util/compression.js';
import { HTML_2, toHtml2 } from '../model/html-versions.js';
import type { RevisionRow } from '../model/revision.js';
import type { PackedBody } from '../tables/snapshot-bodies.js';
import { abstractOf } from '../model/html-structure.js';
import { characters } from '../../../upstream/page-facts.js';
import { enterpriseRecord, type RecordFacts, type RenderFacts } from './enterprise.js';
import type { WikiFacts } from '../model/wiki-facts.js';

/** How bodies are made: a body stored under another name is made again. */
export const BODY_FORMAT = `enterprise-2.1/html-${HTML_2}`;

/** What a page's line says beside its body. */
export interface RecordMeta {
  row: RevisionRow;
  /** The title as the wiki writes it, and its namespace. */
  text: string;
  ns: number;
  facts: WikiFacts;
  /** The snapshot's moment (ISO 8601): every record's event time. */
  eventTime: string;
  /** What the wiki says of the page (categories, templates, ...), where known. */
  page?: RecordFacts['page'];
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

/** A render's parts a body is made of, uncompressed (as Parsoid and the wiki gave them). */
export interface PlainBodyParts {
  html: Buffer;
  dataMw: Buffer;
  wikitext: Buffer;
}

/**
 * The end of a record's line: its `article_body` (the HTML made 2.x, data-mw inline), the last
 * field, as JSON, and the record's close. Nearly all of a record's work.
 */
function plainRecordEnd(parts: PlainBodyParts): { json: string; wikitextBytes: number; render: RenderFacts } {
  const html = toHtml2(parts.html.toString('utf8'), JSON.parse(parts.dataMw.toString('utf8')) as { ids?: Record<string, unknown> });
  const wikitext = parts.wikitext.toString('utf8');
  const { abstract, leadImage } = abstractOf(html);
  const render: RenderFacts = { abstract, characters: characters(wikitext), ...(leadImage ? { leadImage: { src: leadImage.content_url, ...(leadImage.width ? { width: leadImage.width } : {}), ...(leadImage.height ? { height: leadImage.height } : {}) } } : {}) };
  return { json: `${JSON.stringify({ html, wikitext })}}\n`, wikitextBytes: parts.wikitext.length, render };
}

/** The same from the parts as storage gave them (gzipped). */
function recordEnd(parts: BodyParts): { json: string; wikitextBytes: number; render: RenderFacts } {
  const inflate = (part: Uint8Array) => gunzipNow(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
  return plainRecordEnd({ html: inflate(parts.html), dataMw: inflate(parts.dataMw), wikitext: inflate(parts.wikitext) });
}

/**
 * A record's JSON up to its body (the last field): it and the body's JSON are the bytes of the
 * whole record serialized at once.
 */
export function recordHead(meta: RecordMeta, wikitextBytes: number, render?: RenderFacts): string {
  const whole = JSON.stringify(enterpriseRecord(meta.row, meta.text, meta.ns, meta.facts, null, wikitextBytes, meta.eventTime, { page: meta.page, render }));
  const closing = ',"article_body":null}';
  if (!whole.endsWith(closing)) throw new Error('a record\'s article_body must be its last field');
  return whole.slice(0, -'null}'.length);
}

/** One page's line of an Enterprise snapshot. */
export function formatRecord(input: RecordInput): string {
  const end = recordEnd(input);
  return recordHead(input, end.wikitextBytes, end.render) + end.json;
}

/**
 * A render's part of every line that holds it, as an archive holds it: the record's end (its body
 * and close) as one gzip member, deflate's default level, so the same parts give the same bytes.
 */
export function packBody(parts: BodyParts): PackedBody {
  const { json, wikitextBytes, render } = recordEnd(parts);
  return { gz: gzipSync(json), bytes: Buffer.byteLength(json), wikitextBytes, render };
}

/**
 * The same body from a render's parts as they came (a render just made), deflated on the thread
 * pool: the same bytes as `packBody` makes of them stored, so a snapshot's lines do not depend on
 * which made it.
 */
export async function packPlainBody(parts: PlainBodyParts): Promise<PackedBody> {
  const { json, wikitextBytes, render } = plainRecordEnd(parts);
  const text = Buffer.from(json);
  return { gz: await gzip(text), bytes: text.length, wikitextBytes, render };
}

/** `packPlainBody` all in the calling thread (a worker thread's: see record-formatter.ts). */
export function packPlainBodyNow(parts: PlainBodyParts): PackedBody {
  const { json, wikitextBytes, render } = plainRecordEnd(parts);
  return { gz: gzipSync(json), bytes: Buffer.byteLength(json), wikitextBytes, render };
}

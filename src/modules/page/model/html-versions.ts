import zlib from 'node:zlib';
import { Parser } from 'htmlparser2';
import { LRUCache } from 'lru-cache';
import { HttpError } from '../../../util/errors.js';
import type { BundleRender } from './render.js';
import { SingleFlight } from './single-flight.js';
import { workGate } from '../../../util/concurrency-limit.js';
import { compress, decompress } from '../../../http/encoding.js';

const SPEC = 'https://www.mediawiki.org/wiki/Specs/HTML/';
/** What a 2.x client gets: the version Parsoid itself answers 2.x requests with. */
export const HTML_2 = '2.6.0';
export const HTML_2_TYPE = `text/html; charset=utf-8; profile="${SPEC}${HTML_2}"`;
/** The stored form: data-mw apart from the HTML, as Parsoid's 999.x page bundle has it. */
export const HTML_999_TYPE = `text/html; charset=utf-8; profile="${SPEC}999.0.0"`;
export const DATA_MW_999_TYPE = 'application/json; charset=utf-8; profile="https://www.mediawiki.org/wiki/Specs/data-mw/999.0.0"';

/** Which HTML a client can take: 2.x (data-mw inline, what RESTBase's clients read) or 999.x as stored. */
export type HtmlVersion = '2' | '999';

/**
 * The HTML version an `Accept` header asks for; without a profile, `fallback` (rest_v1 serves 2.x
 * as RESTBase did, /v1/ the stored 999.x). A profile this service cannot answer compatibly
 * (another major, or a 2.x newer than 2.6) is a 406.
 */
export function negotiateHtml(accept: string | undefined, fallback: HtmlVersion): HtmlVersion {
  if (!accept) return fallback;
  const profiles = [...accept.matchAll(/profile="?https?:\/\/www\.mediawiki\.org\/wiki\/Specs\/HTML\/(\d+)\.(\d+)\.(\d+)"?/g)];
  if (profiles.length === 0) return fallback;
  for (const [, major, minor] of profiles) {
    if (major === '999') return '999';
    if (major === '2' && Number(minor) <= 6) return '2';
  }
  const asked = profiles.map((p) => `${p[1]}.${p[2]}.${p[3]}`).join(', ');
  throw new HttpError(406, 'not-acceptable', `HTML ${asked} cannot be served; this wiki's renders are HTML ${HTML_2} (2.x) and 999.x.`);
}

const VERSION_META = /<meta\s[^>]*?property=["']mw:(?:htmlVersion|html:version)["'][^>]*>/i;
const VERSION_PROFILE = /profile="?https?:\/\/www\.mediawiki\.org\/wiki\/Specs\/HTML\/(\d+\.\d+\.\d+)"?/;

/**
 * The HTML version a document is in, as the document itself says (`<meta property="mw:htmlVersion">`,
 * which Parsoid writes in every full document), else as the profile of its Content-Type says;
 * undefined if neither does (a body-only fragment sent as text).
 */
export function htmlVersionOf(html: string, contentType?: string): string | undefined {
  const meta = VERSION_META.exec(html.slice(0, 64 * 1024));
  const content = meta && /\scontent=["']?(\d+\.\d+\.\d+)/.exec(meta[0]);
  if (content) return content[1];
  return contentType ? VERSION_PROFILE.exec(contentType)?.[1] : undefined;
}

/** The Content-Type of HTML in `version`. */
export const htmlTypeOf = (version: string) => `text/html; charset=utf-8; profile="${SPEC}${version}"`;

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/'/g, '&#39;');

/** Where each element's data-mw goes back inline: the offset of its start tag's end (before `>` or `/>`). */
type Inserts = { at: number; text: string }[];

const dataMwAttribute = (value: unknown) => ` data-mw='${escapeAttribute(JSON.stringify(value))}'`;

/**
 * The inserts found by a real HTML tokenizer: exact for any HTML, attribute values holding `>`
 * or ids written with entities included.
 */
function insertsByTokenizer(html: string, ids: Record<string, unknown>): Inserts {
  const inserts: Inserts = [];
  const parser = new Parser(
    {
      onopentag(_name, attributes) {
        const id = attributes.id;
        if (id !== undefined && Object.hasOwn(ids, id) && attributes['data-mw'] === undefined) {
          const end = parser.endIndex;
          const at = html[end - 1] === '/' ? end - 1 : end;
          inserts.push({ at, text: dataMwAttribute(ids[id]) });
        }
      },
    },
    { decodeEntities: true, recognizeSelfClosing: true },
  );
  parser.end(html);
  return inserts;
}

/** A start tag's name and attributes as Parsoid writes them (values double-quoted, `<` and `"` escaped in them). */
const TAG_BEFORE_ID = /^<[A-Za-z][^\s/>]*(?:\s+[^\s"'=<>/]+(?:="[^"]*")?)*$/;
const ATTRIBUTES_TO_END = /(?:\s+[^\s"'=<>/]+(?:="[^"]*")?)*\s*(\/?)>/y;
const ID_ATTRIBUTE = /\sid="([^"<&]*)"/g;

/**
 * The inserts found without tokenizing: each id of `ids` written once as ` id="…"` in the whole
 * document, inside a start tag as Parsoid serializes one. A tenth of the tokenizer's time on a
 * long page. Undefined when any id is not found exactly so (written twice, say once in a comment
 * or a text, or with an entity): the tokenizer decides then.
 */
function insertsByIds(html: string, ids: Record<string, unknown>): Inserts | undefined {
  const found = new Map<string, number>();
  for (const m of html.matchAll(ID_ATTRIBUTE)) {
    const id = m[1]!;
    if (!Object.hasOwn(ids, id)) continue;
    if (found.has(id)) return undefined;
    found.set(id, m.index!);
  }
  if (found.size !== Object.keys(ids).length) return undefined;
  const inserts: Inserts = [];
  for (const [id, index] of found) {
    const tagStart = html.lastIndexOf('<', index);
    if (tagStart < 0 || !TAG_BEFORE_ID.test(html.slice(tagStart, index))) return undefined;
    ATTRIBUTES_TO_END.lastIndex = index + ` id="${id}"`.length;
    const end = ATTRIBUTES_TO_END.exec(html);
    if (!end) return undefined;
    // An element keeping its own data-mw keeps it (as the tokenizer's path does).
    if (/\sdata-mw=/.test(html.slice(tagStart, end.index + end[0].length))) continue;
    const tagEnd = end.index + end[0].length;
    inserts.push({ at: end[1] ? tagEnd - 2 : tagEnd - 1, text: dataMwAttribute(ids[id]) });
  }
  return inserts.sort((a, b) => a.at - b.at);
}

/**
 * A stored 999.x render as 2.x HTML: each element's data-mw goes back inline, as Parsoid writes
 * it for 2.x (the ids, and so the render's data-parsoid, stay the same), and the version metas say
 * 2.x. Tags are found by their ids where each is written once, else by a real HTML tokenizer, so
 * attribute values holding `>` do not confuse it.
 */
export function toHtml2(html: string, dataMw: { ids?: Record<string, unknown> }, version = HTML_2): string {
  const ids = dataMw.ids ?? {};
  return withInserts(html, insertsByIds(html, ids) ?? insertsByTokenizer(html, ids), version);
}

/** `toHtml2` by the tokenizer alone: what the faster path must equal. */
export function toHtml2ByTokenizer(html: string, dataMw: { ids?: Record<string, unknown> }, version = HTML_2): string {
  return withInserts(html, insertsByTokenizer(html, dataMw.ids ?? {}), version);
}

function withInserts(html: string, inserts: Inserts, version: string): string {
  let out = '';
  let from = 0;
  for (const { at, text } of inserts) {
    out += html.slice(from, at) + text;
    from = at;
  }
  out += html.slice(from);
  return out.replace(/(<meta property="mw:(?:htmlVersion|html:version)" content=")999\.\d+\.\d+(")/g, `$1${version}$2`);
}

/**
 * A render whose HTML and data-mw are this large at least (as Parsoid gave them; a fifth of it
 * gzipped, as stored) is made 2.x on a worker thread: made here, a long article's (800 KB of HTML)
 * held the event loop, and every request the process was serving, for 10 to 20 ms on its first
 * read. Below it, a few milliseconds at most: the hand-off and the thread's start cost more.
 */
export const THREAD_HTML2_BYTES = 128 * 1024;
const GZIP_RATIO = 5;

/** A render's HTML and data-mw as a thread gets them: gzipped as stored, or as Parsoid gave them. */
export interface Html2Parts {
  html: Uint8Array;
  dataMw: Uint8Array;
  gzipped: boolean;
}

/**
 * Makes a render's 2.x HTML, gzipped as `compress` gzips, elsewhere (a worker thread the
 * composition gives: see snapshot/record-formatter.ts); the same bytes as made here.
 */
export type Html2Maker = (parts: Html2Parts) => Promise<Buffer>;

/** A render's 2.x HTML, gzipped as `compress` gzips: what an `Html2Maker`'s thread runs. */
export function html2Gzipped(parts: Html2Parts): Buffer {
  const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const plain = (bytes: Uint8Array) => (parts.gzipped ? zlib.gunzipSync(asBuffer(bytes)) : asBuffer(bytes));
  const html = toHtml2(plain(parts.html).toString('utf8'), JSON.parse(plain(parts.dataMw).toString('utf8')) as { ids?: Record<string, unknown> });
  return zlib.gzipSync(Buffer.from(html), { level: 6 });
}

/**
 * Large renders made 2.x at once and waiting to be: each waiting one holds its parts' copy for the
 * thread; past them, a 503 to ask again rather than a queue without end.
 */
const THREAD_MAKING = 4;
const THREAD_WAITING = 256;

/** The 2.x form of stored renders, gzipped, made once per render (renders never change), bounded in bytes. */
export class Html2Cache {
  private readonly made: LRUCache<string, Buffer>;
  /** A render asked for again while it is made waits for that one. */
  private readonly making = new SingleFlight();
  private readonly threadTurn = workGate(THREAD_MAKING, THREAD_WAITING, 'html-busy', 'long renders in 2.x form');

  /** `thread`: where large renders are made 2.x (none: all here). */
  constructor(maxBytes: number, private readonly thread?: Html2Maker) {
    this.made = new LRUCache({ maxSize: Math.max(1, maxBytes), sizeCalculation: (b) => Math.max(1, b.length) });
  }

  /** The render's HTML in 2.x form, as text (made and kept as `of` does). */
  async textOf(domain: string, render: BundleRender): Promise<string> {
    return (await decompress(await this.of(domain, render), 'gzip')).toString('utf8');
  }

  /** The render's HTML in 2.x form, gzipped (as it is sent). */
  async of(domain: string, render: BundleRender): Promise<Buffer> {
    const key = `${domain}\u0000${render.tid}`;
    const hit = this.made.get(key);
    if (hit) return hit;
    return this.making.run(key, async () => {
      const made = (await this.onThread(domain, render)) ?? (await this.here(render));
      this.made.set(key, made);
      return made;
    });
  }

  /** A large render's 2.x HTML, made on the thread; undefined for one made here. */
  private onThread(domain: string, render: BundleRender): Promise<Buffer> | undefined {
    if (!this.thread) return undefined;
    if (render.plain) {
      const { html, dataMw } = render.plain;
      return html.length + dataMw.length >= THREAD_HTML2_BYTES ? this.threadTurn(domain, () => this.thread!({ html, dataMw, gzipped: false })) : undefined;
    }
    const html = render.parts.html;
    const dataMw = render.parts['data-mw'];
    return (html.length + dataMw.length) * GZIP_RATIO >= THREAD_HTML2_BYTES ? this.threadTurn(domain, () => this.thread!({ html, dataMw, gzipped: true })) : undefined;
  }

  private async here(render: BundleRender): Promise<Buffer> {
    // A render just made has its parts as Parsoid gave them; a stored one's are inflated (small
    // parts on this thread: the thread pool's hand-offs cost more than the work; large ones on the pool).
    const [html, dataMw] = render.plain
      ? [render.plain.html, render.plain.dataMw]
      : await Promise.all([decompress(render.parts.html, 'gzip'), decompress(render.parts['data-mw'], 'gzip')]);
    return compress(Buffer.from(toHtml2(html.toString('utf8'), JSON.parse(dataMw.toString('utf8')) as { ids?: Record<string, unknown> })), 'gzip');
  }
}

/** A tag's data-mw attribute as written (single, double or unquoted value). */
const DATA_MW_ATTRIBUTE = /\sdata-mw=(?:'[^']*'|"[^"]*"|[^\s>'"]+)/;

/**
 * 2.x HTML (data-mw inline, as MediaWiki's core REST API serves it) split into the stored form:
 * HTML without data-mw, and `{ids: {id: data-mw}}` beside it, as Parsoid's 999.x page bundle has
 * them. Only elements with an id can have theirs moved out (toHtml2 puts it back by id); any
 * other keeps it inline. The inverse of `toHtml2`.
 */
export function splitDataMw(html: string): { html: string; dataMw: { ids: Record<string, unknown> } } {
  const ids: Record<string, unknown> = {};
  const cuts: { from: number; to: number }[] = [];
  const parser = new Parser(
    {
      onopentag(_name, attributes) {
        const id = attributes.id;
        const value = attributes['data-mw'];
        if (id === undefined || value === undefined || Object.hasOwn(ids, id)) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return; // not JSON: left as it is
        }
        const start = parser.startIndex;
        const m = DATA_MW_ATTRIBUTE.exec(html.slice(start, parser.endIndex + 1));
        if (!m) return;
        ids[id] = parsed;
        cuts.push({ from: start + m.index, to: start + m.index + m[0].length });
      },
    },
    { decodeEntities: true, recognizeSelfClosing: true },
  );
  parser.end(html);
  let out = '';
  let from = 0;
  for (const cut of cuts) {
    out += html.slice(from, cut.from);
    from = cut.to;
  }
  out += html.slice(from);
  return { html: out.replace(/(<meta property="mw:(?:htmlVersion|html:version)" content=")2\.\d+\.\d+(")/g, '$1999.0.0$2'), dataMw: { ids } };
}

import { decodeToken, encodeToken } from '../model/paging-token.js';
import { Readable } from 'node:stream';
import { badRequest } from '../../../util/errors.js';
import type { Module } from '../../../router/types.js';
import { parseTime } from '../../../util/tid.js';
import { TIMEUUID_EPOCH_MS } from '../../../util/timeuuid.js';
import type { SiteInfo } from '../../../upstream/action-api-types.js';
import { wikiFacts } from '../model/wiki-facts.js';
import { deletionsThen, withDeletions } from './deletions-then.js';
import { SnapshotWriter, type SnapshotSources } from './snapshot-writer.js';
import { linesInOrder } from './lines-in-order.js';
import { titlesThen, withTitlesThen } from './titles-then.js';

/** Where the next page of a snapshot starts: its moment, its namespace, and the wiki's listing position. */
interface Cursor {
  at: number;
  ns: number;
  prefix?: string;
  cont?: Record<string, string>;
}

/** The continuation keys MediaWiki gives for the listing asked (allpages with revisions): nothing else goes back to it. */
const CONTINUATION: Record<string, RegExp | 'title'> = { continue: /^[a-z|-]*$/, gapcontinue: 'title', rvcontinue: /^[\d|]+$/ };
const CURSOR_KEYS = new Set(['at', 'ns', 'prefix', 'cont']);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A cursor read back: only what this route put in it, each of its type, and of the wiki's
 * continuation only the keys MediaWiki defines for this listing, as short strings. A forged one
 * can neither add parameters to the query sent to the wiki nor name an impossible moment.
 */
function decode(text: string): Cursor {
  const c = decodeToken(text);
  const valid = isPlainObject(c) && Object.keys(c).every((k) => CURSOR_KEYS.has(k))
    && typeof c.at === 'number' && isMoment(c.at)
    && Number.isSafeInteger(c.ns) && (c.ns as number) >= 0
    && (c.prefix === undefined || (typeof c.prefix === 'string' && c.prefix.length <= 255 && !CONTROL.test(c.prefix)))
    && (c.cont === undefined || (isPlainObject(c.cont) && Object.entries(c.cont).every(([k, v]) => Object.hasOwn(CONTINUATION, k) && typeof v === 'string' && v.length <= 1024 && !CONTROL.test(v) && (CONTINUATION[k] === 'title' || (CONTINUATION[k] as RegExp).test(v)))));
  if (valid) return c as unknown as Cursor;
  throw badRequest('next is not a cursor this service gave.', 'invalid-next');
}

/** A moment a snapshot can be taken at: a whole millisecond a time-uuid can name, not in the future. */
const isMoment = (ms: number) => Number.isSafeInteger(ms) && ms >= TIMEUUID_EPOCH_MS && ms <= Date.now() + 60_000;

/** The `ts` asked for, as a moment. */
function momentOf(ts: string): number {
  const at = parseTime(ts);
  if (at < TIMEUUID_EPOCH_MS) throw badRequest(`ts ${ts.slice(0, 64)} is before 1582-10-15, the earliest time a time-uuid names.`, 'invalid-time');
  return at;
}

/** A namespace the wiki has (its site info), else a 400 naming the parameter. */
function checkNamespace(info: SiteInfo, ns: number, given: string): void {
  if (ns < 0 || !Object.hasOwn(info.namespaces, String(ns))) throw badRequest(`namespace ${given.slice(0, 32)} is not a namespace of this wiki with pages.`, 'invalid-namespace');
}

/**
 * Whether text has only characters the wiki allows in titles (its `legaltitlechars`). The wiki's
 * pattern is over UTF-8 bytes: its `\x80-\xFF` is every character beyond ASCII.
 */
function titleLike(info: SiteInfo, text: string): boolean {
  const legal = info.general.legaltitlechars.replace('\\x80-\\xFF', '\\u0080-\\u{10FFFF}');
  return new RegExp(`^[${legal}]*$`, 'u').test(text) && !/%[0-9A-Fa-f]{2}/.test(text);
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 500;

/**
 * `GET /{domain}/v1/snapshot/?ts=T`: the snapshot's lines over HTTP, a page of titles at a time
 * (NDJSON, the same lines as `npm run snapshot` writes), each page's `Link: rel="next"` carrying a
 * cursor that pins `T`. Pages deleted since `T` are left out here (the CLI writes those stored).
 */
export function snapshotModule(service: SnapshotSources): Module {
  return {
    name: 'page-snapshot',
    api: 'v1',
    tables: ['snapshot_bodies'],
    routes: [{
      method: 'GET',
      path: '/snapshot/',
      spec: {
        summary: 'The wiki as it was at a moment, as Wikimedia Enterprise NDJSON lines, paged (Link rel="next")',
        tags: ['snapshot'],
        parameters: [
          { name: 'ts', in: 'query', schema: { type: 'string' }, description: 'The moment (ISO 8601); default now, pinned by the next cursor' },
          { name: 'namespace', in: 'query', schema: { type: 'integer', minimum: 0 } },
          { name: 'prefix', in: 'query', schema: { type: 'string', maxLength: 255 }, description: 'Only titles starting with this (in the namespace, without its name)' },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT } },
          { name: 'next', in: 'query', schema: { type: 'string', maxLength: 4096 } },
        ],
        responses: { 200: { description: 'NDJSON, one page a line', content: { 'application/x-ndjson': { schema: { type: 'string' } } } } },
      },
      async handler(req, ctx) {
        const next = req.query.get('next');
        const ts = req.query.get('ts');
        const prefix = req.query.get('prefix')?.replace(/_/g, ' ') || undefined;
        const namespace = req.query.get('namespace') ?? '0';
        const cursor: Cursor = next ? decode(next) : { at: ts ? momentOf(ts) : Math.floor(Date.now() / 1000) * 1000, ns: Number(namespace), ...(prefix ? { prefix } : {}) };
        const limit = Number(req.query.get('limit') ?? DEFAULT_LIMIT);
        const wiki = service.wiki(req.domain);
        // What the wiki would refuse is refused here, and the wiki is not asked.
        const info = await wiki.siteInfo();
        checkNamespace(info, cursor.ns, next ? String(cursor.ns) : namespace);
        if (cursor.prefix && !titleLike(info, cursor.prefix)) throw badRequest(`prefix ${cursor.prefix.slice(0, 64)} has characters no title may have.`, 'invalid-prefix');
        if (cursor.cont?.gapcontinue !== undefined && !titleLike(info, cursor.cont.gapcontinue)) throw badRequest('next is not a cursor this service gave.', 'invalid-next');
        const listed = await wiki.api.listLatest({ gapnamespace: String(cursor.ns), gaplimit: String(limit), ...(cursor.prefix ? { gapprefix: cursor.prefix } : {}) }, cursor.cont);
        const writer = new SnapshotWriter(service, req.domain);
        const facts = wikiFacts(info);
        // Pages moved since the moment are written under their titles then (one look at the move
        // log); pages deleted then and restored since are not (one look at the deletion log).
        const [then, deletions] = await Promise.all([titlesThen(wiki.api, cursor.at), deletionsThen(wiki.api, cursor.at, cursor.ns)]);
        const entries = withDeletions(withTitlesThen(listed.pages.map((p) => ({ ...p, title: p.title.replace(/ /g, '_') })), then), deletions, () => false);
        const headers: Record<string, string> = { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' };
        if (listed.cont) headers.link = `</${req.domain}/v1/snapshot/?next=${encodeToken({ ...cursor, cont: listed.cont })}>; rel="next"`;
        const lines = linesInOrder(entries, async (entry) => (await writer.page(ctx, facts, entry, { at: cursor.at })).line);
        return { status: 200, headers, body: Readable.from(lines, { objectMode: false }) };
      },
    }],
  };
}

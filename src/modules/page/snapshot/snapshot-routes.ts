import { decodeToken, encodeToken } from '../model/paging-token.js';
import PQueue from 'p-queue';
import { badRequest } from '../../../util/errors.js';
import type { Module } from '../../../router/types.js';
import { parseTime } from '../../../util/tid.js';
import { wikiFacts } from './enterprise.js';
import { deletionsThen, withDeletions } from './deletions-then.js';
import { SnapshotWriter, type SnapshotSources } from './snapshot-writer.js';
import { titlesThen, withTitlesThen } from './titles-then.js';

/** Where the next page of a snapshot starts: its moment, its namespace, and the wiki's listing position. */
interface Cursor {
  at: number;
  ns: number;
  prefix?: string;
  cont?: Record<string, string>;
}

function decode(text: string): Cursor {
  const c = decodeToken(text) as Cursor | undefined;
  if (c && Number.isFinite(c.at) && Number.isInteger(c.ns)) return c;
  throw badRequest('next is not a cursor this service gave.', 'invalid-next');
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
        const cursor: Cursor = next ? decode(next) : { at: ts ? parseTime(ts) : Math.floor(Date.now() / 1000) * 1000, ns: Number(req.query.get('namespace') ?? 0), ...(prefix ? { prefix } : {}) };
        const limit = Number(req.query.get('limit') ?? DEFAULT_LIMIT);
        const wiki = service.wiki(req.domain);
        const listed = await wiki.api.listLatest({ gapnamespace: String(cursor.ns), gaplimit: String(limit), ...(cursor.prefix ? { gapprefix: cursor.prefix } : {}) }, cursor.cont);
        const writer = new SnapshotWriter(service, req.domain);
        const facts = wikiFacts(await wiki.siteInfo());
        // A few at a time: pages the store lacks are rendered by the wiki.
        const queue = new PQueue({ concurrency: 4 });
        // Pages moved since the moment are written under their titles then (one look at the move
        // log); pages deleted then and restored since are not (one look at the deletion log).
        const [then, deletions] = await Promise.all([titlesThen(wiki.api, cursor.at), deletionsThen(wiki.api, cursor.at, cursor.ns)]);
        const entries = withDeletions(withTitlesThen(listed.pages.map((p) => ({ ...p, title: p.title.replace(/ /g, '_') })), then), deletions, () => false);
        const lines = await Promise.all(entries.map((entry) => queue.add(async () => (await writer.page(ctx, facts, entry, { at: cursor.at })).line ?? '')));
        const headers: Record<string, string> = { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' };
        if (listed.cont) headers.link = `</${req.domain}/v1/snapshot/?next=${encodeToken({ ...cursor, cont: listed.cont })}>; rel="next"`;
        return { status: 200, headers, body: Buffer.from(lines.join('')) };
      },
    }],
  };
}

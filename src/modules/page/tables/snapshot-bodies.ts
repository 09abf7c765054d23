import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';
import type { RenderFacts } from '../model/html-structure.js';

/**
 * A render's `article_body` as a snapshot writes it: the JSON text (2.x HTML and wikitext, escaped,
 * and the record's close) as one gzip member, its length uncompressed, and the wikitext's size (a
 * record's `version.size` where the revision's is not known).
 */
export interface PackedBody {
  gz: Uint8Array;
  bytes: number;
  wikitextBytes: number;
  /** What the render gives its record beside its body (its abstract, its length, its lead image). */
  render: RenderFacts;
}

const SNAPSHOT_BODIES_SCHEMA = {
  // 2: `render` (what the render gives its record beside its body).
  version: 2,
  attributes: { title: 'string', rev: 'varint', tid: 'timeuuid', format: 'string', body: 'blob', bytes: 'int', wikitext_bytes: 'int', render: 'json' },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'rev', type: 'range', order: 'desc' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
  // What the next snapshots read: each page's newest bodies; older ones a week more (a snapshot of
  // an earlier moment makes any it lacks again).
  revisionRetentionPolicy: { type: 'latest', count: 2, grace_ttl: 7 * 86400 },
};

/**
 * Snapshot bodies by render (`snapshot_bodies`): made once per render (as a page's latest render
 * is stored, or by the first snapshot that writes it), and read by every snapshot instead of the
 * render. A render never changes, so neither
 * does its body, but the way a body is made may: `format` names it, and a body made another way is
 * made again.
 */
export class SnapshotBodies {
  private readonly table: TableClient;

  constructor(domain: string, private readonly format: string) {
    this.table = new TableClient(domain, 'snapshot_bodies');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, SNAPSHOT_BODIES_SCHEMA);
  }

  async get(ctx: RequestContext, title: string, rev: number, tid: string): Promise<PackedBody | undefined> {
    const row = (await this.table.query(ctx, { attributes: { title, rev, tid }, limit: 1 })).items[0];
    if (!row || row.format !== this.format || !row.render) return undefined;
    return { gz: row.body as Buffer, bytes: Number(row.bytes), wikitextBytes: Number(row.wikitext_bytes), render: row.render as RenderFacts };
  }

  async put(ctx: RequestContext, title: string, rev: number, tid: string, body: PackedBody): Promise<void> {
    await this.table.put(ctx, {
      attributes: { title, rev, tid, format: this.format, body: body.gz, bytes: body.bytes, wikitext_bytes: body.wikitextBytes, render: body.render },
    });
  }
}

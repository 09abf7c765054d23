import { TableClient } from '../../../table-access/table-client.js';
import type { RequestContext } from '../../../router/types.js';
import { newTid } from '../../../util/tid.js';
import { gzip, gunzip } from '../../../util/compression.js';

/** How long a stashed transform is kept: an editing session (RESTBase kept its stash a day). */
export const STASH_SECONDS = 24 * 3600;

const STASH_SCHEMA = {
  version: 1,
  attributes: { title: 'string', tid: 'timeuuid', rev: 'varint', original: 'blob' },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'tid', type: 'range', order: 'desc' },
  ],
};

/** What Parsoid needs as the original of a later edit: the HTML and its data-parsoid (a page bundle). */
export type StashedOriginal = Record<string, unknown>;

/**
 * HTML made from wikitext a client is editing (`stash=true`, VisualEditor's switch from source to
 * visual), kept with its data-parsoid under a new tid for a day, so the HTML that comes back is
 * serialised selectively from it: the wikitext the editor did not touch stays as they wrote it.
 */
export class TransformStash {
  private readonly tables = new Map<string, TableClient>();

  private table(domain: string): TableClient {
    let table = this.tables.get(domain);
    if (!table) this.tables.set(domain, (table = new TableClient(domain, 'transform_stash')));
    return table;
  }

  async create(ctx: RequestContext, domain: string): Promise<void> {
    await this.table(domain).create(ctx, STASH_SCHEMA);
  }

  /** Keeps `original` for `title` (at revision `rev`, 0 for none); answers its tid. */
  async put(ctx: RequestContext, domain: string, title: string, rev: number, original: StashedOriginal): Promise<string> {
    const tid = newTid();
    const bytes = await gzip(JSON.stringify(original));
    await this.table(domain).put(ctx, { attributes: { title, tid, rev, original: bytes, _ttl: STASH_SECONDS } });
    return tid;
  }

  async get(ctx: RequestContext, domain: string, title: string, tid: string): Promise<{ rev: number; original: StashedOriginal } | undefined> {
    const [row] = (await this.table(domain).query(ctx, { attributes: { title, tid }, limit: 1 })).items;
    if (!row) return undefined;
    return { rev: Number(row.rev), original: JSON.parse((await gunzip(row.original as Buffer)).toString('utf8')) as StashedOriginal };
  }
}

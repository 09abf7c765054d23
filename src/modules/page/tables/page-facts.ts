import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';
import type { PageFacts } from '../../../upstream/page-facts.js';

const PAGE_FACTS_SCHEMA = {
  version: 1,
  attributes: { title: 'string', rev: 'varint', facts: 'json' },
  index: [
    { attribute: 'title', type: 'hash' },
    { attribute: 'rev', type: 'range', order: 'desc' },
  ],
  // A snapshot of an earlier moment reads the facts its revision had; a few revisions back are enough.
  revisionRetentionPolicy: { type: 'latest', count: 3, grace_ttl: 7 * 86400 },
};

/**
 * Each page's Enterprise facts by revision (`page_facts`): asked of the wiki while the revision
 * was the page's latest (the wiki lists a page's categories and templates as they are now), so a
 * record of that revision says what the wiki said of it then; the newest marked stale when the
 * wiki changes the page or what points at it (a redirect, a protection).
 */
export class PageFactsTable {
  private readonly table: TableClient;

  constructor(domain: string) {
    this.table = new TableClient(domain, 'page_facts');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, PAGE_FACTS_SCHEMA);
  }

  /** The facts asked for a revision, or (no `rev`) for the page's newest asked. */
  async get(ctx: RequestContext, title: string, rev?: number): Promise<PageFacts | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { title, ...(rev === undefined ? {} : { rev }) }, limit: 1 })).items;
    return row?.facts ? (row.facts as PageFacts) : undefined;
  }

  async put(ctx: RequestContext, title: string, facts: PageFacts): Promise<void> {
    await this.table.put(ctx, { attributes: { title, rev: facts.rev, facts } });
  }
}

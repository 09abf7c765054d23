import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';
import type { PageFacts } from '../enterprise/page-facts.js';

const PAGE_FACTS_SCHEMA = {
  version: 1,
  attributes: { title: 'string', facts: 'json' },
  index: [{ attribute: 'title', type: 'hash' }],
};

/**
 * Each page's Enterprise facts as last asked of the wiki (`page_facts`): one row a page, written
 * when its latest render is stored or a record lacks them, dropped when the wiki changes the page
 * or what points at it (a redirect, a protection), so the next record asks anew.
 */
export class PageFactsTable {
  private readonly table: TableClient;

  constructor(domain: string) {
    this.table = new TableClient(domain, 'page_facts');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, PAGE_FACTS_SCHEMA);
  }

  async get(ctx: RequestContext, title: string): Promise<PageFacts | undefined> {
    const [row] = (await this.table.query(ctx, { attributes: { title }, limit: 1 })).items;
    return row?.facts ? (row.facts as PageFacts) : undefined;
  }

  async put(ctx: RequestContext, title: string, facts: PageFacts): Promise<void> {
    await this.table.put(ctx, { attributes: { title, facts } });
  }

  async delete(ctx: RequestContext, title: string): Promise<void> {
    await this.table.delete(ctx, { title });
  }
}

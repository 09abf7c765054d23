import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';

const SCHEMA = { version: 1, attributes: { wiki: 'string', added: 'timestamp' }, index: [{ attribute: 'wiki', type: 'hash' }] };

/**
 * The wikis of a storage group found so far (by any process, since the group began), kept under
 * the group's home domain: what its poller polls, its snapshots take and its sweeps look in.
 */
export class FarmWikis {
  private readonly table: TableClient;

  constructor(home: string) {
    this.table = new TableClient(home, 'farm_wikis');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, SCHEMA);
  }

  /** Records `domain` once (a read when it is there already). */
  async add(ctx: RequestContext, domain: string): Promise<void> {
    const [row] = (await this.table.query(ctx, { attributes: { wiki: domain } })).items;
    if (!row) await this.table.put(ctx, { attributes: { wiki: domain, added: Date.now() } });
  }

  /** A page of the wikis, from `next` on. */
  async page(ctx: RequestContext, limit: number, next?: string): Promise<{ wikis: string[]; next?: string }> {
    const page = await this.table.query(ctx, { limit, ...(next ? { next } : {}) });
    return { wikis: page.items.map((r) => r.wiki as string), ...(page.next ? { next: page.next } : {}) };
  }

  /** Every wiki of the group, a page at a time. */
  async *all(ctx: RequestContext): AsyncGenerator<string> {
    let next: string | undefined;
    do {
      const page = await this.page(ctx, 1000, next);
      yield* page.wikis;
      next = page.next;
    } while (next);
  }
}

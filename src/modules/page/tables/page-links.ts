import type { RequestContext } from '../../../router/types.js';
import { TableClient } from '../../../table-access/table-client.js';

const PAGE_LINKS_SCHEMA = {
  version: 1,
  attributes: { title: 'string', target: 'string', tid: 'timeuuid' },
  index: [{ attribute: 'title', type: 'hash' }, { attribute: 'tid', type: 'static' }, { attribute: 'target', type: 'range', order: 'asc' }],
  // The reverse lookup: which pages link to a target (purged when its state changes).
  secondaryIndexes: { by_target: [{ attribute: 'target', type: 'hash' }, { attribute: 'title', type: 'range', order: 'asc' }] },
};

/** Pages linking to one target, a listing page at a time. */
const LINKERS_PAGE = 500;

/**
 * The internal links of each page's latest render (the targets its display HTML marks), recorded
 * with the render's tid, and the reverse: the pages that link to a target.
 */
export class PageLinks {
  readonly table: TableClient;

  constructor(domain: string) {
    this.table = new TableClient(domain, 'page_links');
  }

  async create(ctx: RequestContext): Promise<void> {
    await this.table.create(ctx, PAGE_LINKS_SCHEMA);
  }

  /** The render whose links are recorded for `title`, if any. */
  async recordedTid(ctx: RequestContext, title: string): Promise<string | undefined> {
    const { items } = await this.table.query(ctx, { attributes: { title }, distinct: true });
    return (items[0]?.tid as string | null | undefined) ?? undefined;
  }

  /** Records the links of `title`'s render `tid`: new targets added, those it no longer has removed. */
  async record(ctx: RequestContext, title: string, tid: string, targets: Iterable<string>): Promise<void> {
    const now = new Set(targets);
    const before = new Set<string>();
    let next: string | undefined;
    do {
      const page = await this.table.query(ctx, { attributes: { title }, proj: ['target'], limit: 1000, next });
      for (const row of page.items) if (typeof row.target === 'string') before.add(row.target);
      next = page.next;
    } while (next);
    await Promise.all([
      ...[...now].filter((t) => !before.has(t)).map((target) => this.table.put(ctx, { attributes: { title, target } })),
      ...[...before].filter((t) => !now.has(t)).map((target) => this.table.delete(ctx, { title, target })),
    ]);
    // Last: a crash before it leaves the render unrecorded, so it is recorded again.
    await this.table.put(ctx, { attributes: { title, tid } });
  }

  /** Every page whose recorded render links to `target`. */
  async linking(ctx: RequestContext, target: string): Promise<string[]> {
    const titles: string[] = [];
    let next: string | undefined;
    do {
      const page = await this.table.query(ctx, { index: 'by_target', attributes: { target }, limit: LINKERS_PAGE, next });
      for (const row of page.items) titles.push(row.title as string);
      next = page.next;
    } while (next);
    return titles;
  }
}

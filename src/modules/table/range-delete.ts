import type { TableStorage } from '../../storage/table-storage.js';
import type { Delete, Row } from '../../storage/types.js';

/** Rows read per page while a range is deleted. */
const PAGE = 500;

const isCondition = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v) && !(v instanceof Uint8Array);

/** Whether a delete names a range of a key ({tid: {lt: t}}) rather than keys. */
export function namesRange(del: { attributes?: unknown }): boolean {
  return typeof del.attributes === 'object' && del.attributes !== null && Object.values(del.attributes).some(isCondition);
}

/**
 * A delete of the rows a range condition matches, as RESTBase's clients send it: the rows are
 * read as a query reads them (the same validation: a range only on a range key, within one
 * partition) and each is deleted by its key, so every engine removes its index entries with it.
 */
export async function deleteRange(storage: TableStorage, domain: string, del: Delete): Promise<void> {
  const schema = await storage.getSchema(domain, del.table);
  const keys = schema.index.filter((e) => e.type === 'hash' || e.type === 'range').map((e) => e.attribute);
  let next: string | undefined;
  do {
    const page = await storage.get(domain, { table: del.table, attributes: del.attributes as never, proj: keys, limit: PAGE, ...(next ? { next } : {}) });
    for (const row of page.items as Row[]) await storage.delete(domain, { table: del.table, attributes: Object.fromEntries(keys.map((k) => [k, row[k]])) as never });
    next = page.items.length === PAGE ? page.next : undefined;
  } while (next);
}

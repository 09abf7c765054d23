import { GroupedStorage } from './storage-groups.js';
import type { TableStorage } from './table-storage.js';
import type { Row } from './types.js';

/** How far a move got: the tables done, and where the one under way stopped (resumable from here). */
export interface MoveState {
  domain: string;
  group: string;
  tables: string[];
  done: string[];
  current?: { table: string; next?: string; staticsDone: boolean };
  rows: number;
}

export interface MoveOptions {
  /** Called after every page of rows: the state to keep, to go on from it later. */
  checkpoint(state: MoveState): void;
  progress(table: string, rows: number): void;
  /** Asked between pages: true stops the move there (it goes on from the last checkpoint). */
  stopped(): boolean;
}

const PAGE = 500;

/**
 * Copies a wiki's tables of its own (as stores made before storage groups hold them) into a
 * storage group's, row by row with their time-uuids and what is left of their TTLs: each table
 * is made in the group first, its static columns copied, then its rows a page at a time, and the
 * rows counted on both sides before the table counts as done. The wiki's own tables are left as
 * they are (served until the config names the group). Idempotent: copying a row again writes the
 * same row, so a move stopped anywhere goes on from its last checkpoint, or starts over.
 */
export async function moveIntoGroup(storage: TableStorage, state: MoveState, options: MoveOptions): Promise<{ state: MoveState; complete: boolean }> {
  const { domain, group } = state;
  const grouped = new GroupedStorage(storage, (d) => (d === domain ? group : undefined));
  for (const table of state.tables) {
    if (state.done.includes(table)) continue;
    const schema = await storage.getSchema(domain, table);
    const { domain: _domain, ...definition } = schema;
    await grouped.createTable(domain, table, schema.given ?? definition);
    let current = state.current?.table === table ? state.current : { table, staticsDone: false };
    const hasStatics = schema.index.some((e) => e.type === 'static');
    if (hasStatics && !current.staticsDone) {
      // Partitions may hold static columns and no row: copied from the list of partitions.
      let next: string | undefined;
      do {
        const page = await storage.get(domain, { table, distinct: true, limit: PAGE, ...(next ? { next } : {}) });
        for (const item of page.items) await grouped.put(domain, { table, attributes: item });
        next = page.next;
      } while (next);
      current = { table, staticsDone: true };
    }
    do {
      if (options.stopped()) return { state: { ...state, current }, complete: false };
      const page = await storage.get(domain, { table, limit: PAGE, withTTL: true, ...(current.next ? { next: current.next } : {}) });
      for (const item of page.items) {
        const attributes = copyOf(item);
        if (attributes) await grouped.put(domain, { table, attributes });
      }
      state.rows += page.items.length;
      current = { table, staticsDone: current.staticsDone, ...(page.next ? { next: page.next } : {}) };
      state = { ...state, current };
      options.checkpoint(state);
      options.progress(table, state.rows);
    } while (current.next);
    const [mine, copied] = [await count(storage, domain, table), await count(grouped, domain, table)];
    if (copied < mine) throw new Error(`${table}: ${mine} rows in the wiki's table, ${copied} in the group's: nothing is marked done; run the move again`);
    state = { ...state, done: [...state.done, table] };
    delete state.current;
    options.checkpoint(state);
  }
  return { state, complete: true };
}

/** A row as written again: its TTL what is left of it; a row whose TTL ran out is not copied. */
function copyOf(item: Row): Row | undefined {
  const { _ttl: ttl, ...attributes } = item;
  if (ttl === null || ttl === undefined) return attributes;
  if (typeof ttl !== 'number' || ttl <= 0) return undefined;
  return { ...attributes, _ttl: ttl };
}

async function count(storage: TableStorage, domain: string, table: string): Promise<number> {
  let rows = 0;
  let next: string | undefined;
  do {
    const page = await storage.get(domain, { table, limit: 1000, ...(next ? { next } : {}) });
    rows += page.items.length;
    next = page.next;
  } while (next);
  return rows;
}

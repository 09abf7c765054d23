import { BoundedMap } from '../util/bounded-map.js';
import type { Row } from './types.js';

/** One column's value in an item, from its value in the engine's row. */
export type ColumnValue = (column: string, stored: unknown) => unknown;
/** Makes an item of a row's columns, each value given by `value`. */
export type ItemMaker = (row: Record<string, unknown>, value: ColumnValue) => Row;

const byArray = new WeakMap<readonly string[], ItemMaker>();
const byNames = new BoundedMap<string, ItemMaker>(1024);

/** For names an object literal cannot hold as they are (none an attribute may have). */
const oneByOne = (columns: readonly string[]): ItemMaker => (row, value) => {
  const item: Row = {};
  for (const c of columns) item[c] = value(c, row[c]);
  return item;
};

/** One object literal of the columns; made one by one where code may not be made (`--disallow-code-generation-from-strings`). */
function literalOf(columns: readonly string[]): ItemMaker {
  const fields = columns.map((c) => `${JSON.stringify(c)}: value(${JSON.stringify(c)}, row[${JSON.stringify(c)}])`).join(',\n');
  try {
    return new Function('row', 'value', `return {\n${fields}\n};`) as ItemMaker;
  } catch {
    return oneByOne(columns);
  }
}

/**
 * The maker of items of these columns: one object literal of them, made once per set of columns.
 * Made by assigning each column in turn, an item of more than 16 columns (a page's revision with
 * its page's state has 26) was a dictionary: V8 keeps at most 12 properties added by a computed
 * name outside an object before it turns them into a hash table. Such an item took 1.6 KB where a
 * literal takes a fifth of that, was read through hash lookups, and gave the collector more to
 * mark. Column names are attribute names (a letter, then letters, digits, `_` or `-`, or one of
 * the layer's own `_`-names), written as JSON strings.
 */
export function itemMaker(columns: readonly string[]): ItemMaker {
  const kept = byArray.get(columns);
  if (kept) return kept;
  const names = columns.join('\u0000');
  let maker = byNames.get(names);
  if (!maker) {
    maker = columns.some((c) => c === '__proto__') ? oneByOne(columns) : literalOf(columns);
    byNames.set(names, maker);
  }
  byArray.set(columns, maker);
  return maker;
}

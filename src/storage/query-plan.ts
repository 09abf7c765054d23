import { invalidInput } from './errors.js';
import { decodeToken, queryFingerprint } from './paging.js';
import { GROUP_DOMAIN, type TableInfo } from './schema.js';
import { own, type IndexElement, type Query, type SortOrder } from './types.js';
import { normalizeValue, type ToEngine } from './values.js';

export const MAX_LIMIT = 1000;
const OPERATORS = new Set(['eq', 'lt', 'gt', 'le', 'ge', 'between']);

export interface Predicate {
  column: string;
  op: 'eq' | 'lt' | 'gt' | 'le' | 'ge';
  value: unknown;
}

export interface QueryPlan {
  predicates: Predicate[];
  /** The full, unique keyset order. */
  order: { column: string; dir: SortOrder }[];
  output: string[];
  /** Columns that must not be null (the keys of a secondary index). */
  notNull: string[];
  limit: number;
  after?: unknown[];
  /** Ties paging tokens to the query's shape; computed only when paging (it costs a hash). */
  fingerprint(): string;
  joinStatics: boolean;
  distinct: boolean;
  /** Whether items carry `_ttl`, the seconds left of rows written with one. */
  withTTL: boolean;
  /**
   * A query on an index of a versioned table (its last range key a timeuuid) that does not name
   * that timeuuid: it finds each entity's current version only (the entity: the row's key without
   * the tid; its current version: its newest tid), as RESTBase's indexes do.
   */
  currentVersions?: { tid: string; entity: string[] };
  /**
   * A storage group's table read across one wiki's partitions: its domain pinned, no other hash
   * key given. SQL engines answer it from the key's prefix; Cassandra from its index on the domain
   * (filtering where it has none).
   */
  scoped: boolean;
  /** The secondary index read, if any: an engine that may not choose it by itself is told to (see Dialect.indexHint). */
  index?: { name: string; elements: IndexElement[] };
}

function toPredicates(info: TableInfo, column: string, condition: unknown, encode: ToEngine): Predicate[] {
  const type = info.schema.attributes[column]!;
  const value = (v: unknown) => {
    const normalized = normalizeValue(type, v, column);
    if (normalized === null) throw invalidInput(`Attribute '${column}' cannot be compared with null.`, 'invalid-query');
    return encode(type, normalized);
  };
  const isOperatorObject =
    typeof condition === 'object' && condition !== null && !Array.isArray(condition) && !Buffer.isBuffer(condition) && !(condition instanceof Uint8Array);
  if (!isOperatorObject) return [{ column, op: 'eq', value: value(condition) }];
  const entries = Object.entries(condition as Record<string, unknown>);
  if (entries.length === 0) throw invalidInput(`Condition on '${column}' is empty.`, 'invalid-query');
  return entries.flatMap(([given, operand]): Predicate[] => {
    // RESTBase's clients spell operators in either case ({BETWEEN: [a, b]}).
    const op = given.toLowerCase();
    if (!OPERATORS.has(op)) throw invalidInput(`Unknown operator '${given}' on '${column}'.`, 'invalid-query');
    if (op !== 'between') return [{ column, op: op as Predicate['op'], value: value(operand) }];
    if (!Array.isArray(operand) || operand.length !== 2) throw invalidInput(`'between' on '${column}' takes [low, high].`, 'invalid-query');
    return [
      { column, op: 'ge', value: value(operand[0]) },
      { column, op: 'le', value: value(operand[1]) },
    ];
  });
}

/** Validates a query against the table and turns it into an engine-neutral plan. */
export function planQuery(info: TableInfo, query: Query, encode: ToEngine): QueryPlan {
  const { schema } = info;
  let hash = info.hash;
  let range = info.range;
  let rangeOrder = info.rangeOrder;
  let notNull: string[] = [];
  let projectable = Object.keys(schema.attributes);
  let currentVersions: QueryPlan['currentVersions'];
  let index: QueryPlan['index'];
  if (query.index !== undefined) {
    const elements = typeof query.index === 'string' ? own(schema.secondaryIndexes, query.index) : undefined;
    if (!elements) throw invalidInput(`Table '${schema.table}' has no index ${JSON.stringify(query.index)}.`, 'unknown-index');
    index = { name: query.index as string, elements };
    hash = elements.filter((e) => e.type === 'hash').map((e) => e.attribute);
    range = elements.filter((e) => e.type === 'range').map((e) => e.attribute);
    rangeOrder = Object.fromEntries(elements.filter((e) => e.type === 'range').map((e) => [e.attribute, e.order ?? 'asc']));
    notNull = [...hash, ...range];
    const tid = info.tidColumn;
    if (tid !== undefined && info.range.at(-1) === tid && !elements.some((e) => e.attribute === tid && e.type !== 'proj')) {
      currentVersions = { tid, entity: [...info.hash, ...info.range.slice(0, -1)] };
    }
  }

  const distinct = query.distinct === true;
  if (query.distinct !== undefined && typeof query.distinct !== 'boolean') throw invalidInput('distinct must be a boolean.', 'invalid-query');
  if (distinct) {
    if (query.index !== undefined) throw invalidInput('distinct lists partitions of the table itself, not of an index.', 'invalid-query');
    range = [];
    projectable = [...info.hash, ...info.statics];
  }

  const conditions = query.attributes ?? {};
  if (typeof conditions !== 'object' || Array.isArray(conditions)) throw invalidInput('Query attributes must be an object.', 'invalid-query');
  const predicates: Predicate[] = [];
  for (const [column, condition] of Object.entries(conditions)) {
    if (!hash.includes(column) && !range.includes(column)) {
      throw invalidInput(`Cannot query on '${column}': only the hash and range keys of the index used can be queried.`, 'invalid-query');
    }
    predicates.push(...toPredicates(info, column, condition, encode));
  }
  if (predicates.some((p) => hash.includes(p.column) && p.op !== 'eq')) throw invalidInput('Hash keys can only be matched with eq.', 'invalid-query');
  // In a storage group's table the domain (always given) scopes the query; the other hash keys
  // are then given all or none, as in a wiki's own table.
  const scope = hash[0] === GROUP_DOMAIN && predicates.some((p) => p.column === GROUP_DOMAIN) ? GROUP_DOMAIN : undefined;
  if (scope !== undefined) hash = hash.slice(1);
  const hashGiven = hash.filter((h) => predicates.some((p) => p.column === h));
  const hashComplete = hashGiven.length === hash.length;
  if (hashGiven.length > 0 && !hashComplete) throw invalidInput(`Give all hash keys (${hash.join(', ')}) or none.`, 'invalid-query');
  if (query.index !== undefined && !hashComplete) throw invalidInput(`A query on index '${query.index}' needs its hash keys (${hash.join(', ')}).`, 'invalid-query');
  // What a distributed engine answers without scanning and filtering: range keys only within one
  // partition, in declared order, each restricted only when those before it are pinned by eq, and
  // a non-eq predicate only on the last one restricted. SQL could answer more; refusing it here
  // keeps a module written against one backend correct on every other.
  const pinned = (column: string) => predicates.some((p) => p.column === column && p.op === 'eq');
  const restricted = range.filter((column) => predicates.some((p) => p.column === column));
  if (restricted.length > 0 && !hashComplete) {
    throw invalidInput(`Conditions on range keys (${restricted.join(', ')}) need every hash key (${hash.join(', ')}): without them they would filter across partitions.`, 'invalid-query');
  }
  let open = false;
  for (const column of range) {
    const has = restricted.includes(column);
    if (has && open) {
      throw invalidInput(`Cannot restrict range key '${column}' unless every range key before it is matched with eq.`, 'invalid-query');
    }
    if (!has || !pinned(column)) open = true;
  }

  const order = query.order ?? {};
  if (typeof order !== 'object' || Array.isArray(order)) throw invalidInput('order must map range keys to asc or desc.', 'invalid-query');
  const flips = new Set<boolean>();
  for (const [column, dir] of Object.entries(order)) {
    if (!range.includes(column)) throw invalidInput(`Cannot order by '${column}': it is not a range key of the index used.`, 'invalid-query');
    if (dir !== 'asc' && dir !== 'desc') throw invalidInput(`Order of '${column}' must be asc or desc.`, 'invalid-query');
    flips.add(dir !== rangeOrder[column]);
  }
  if (flips.size > 0 && !hashComplete) throw invalidInput('order applies within one partition: give every hash key.', 'invalid-query');
  // A partition is read in its declared order or in exactly the reverse one.
  if (flips.size > 1) throw invalidInput('order must follow the declared order of every range key, or reverse all of them.', 'invalid-query');
  const reversed = flips.has(true);
  const flip = (dir: SortOrder): SortOrder => (reversed ? (dir === 'asc' ? 'desc' : 'asc') : dir);
  // Columns pinned by eq need no ordering; a query pinning every key is a point lookup.
  const keysetOrder = [
    ...(hashComplete ? [] : hash.map((column) => ({ column, dir: 'asc' as SortOrder }))),
    ...range.filter((column) => !pinned(column)).map((column) => ({ column, dir: flip(rangeOrder[column] as SortOrder) })),
  ];
  // The table's keys an index does not name follow its own: descending (RESTBase's order), in
  // indexes laid out so (every index made since); in their declared order in older ones.
  const appended = (column: string): SortOrder => (query.index !== undefined && info.indexKeysDescending ? 'desc' : ((info.rangeOrder[column] as SortOrder | undefined) ?? 'asc'));
  for (const column of distinct ? [] : [...info.hash, ...info.range]) {
    if (!keysetOrder.some((o) => o.column === column) && !pinned(column)) {
      keysetOrder.push({ column, dir: appended(column) });
    }
  }

  let output = projectable;
  if (query.proj !== undefined) {
    const proj = typeof query.proj === 'string' ? [query.proj] : query.proj;
    if (!Array.isArray(proj) || proj.some((p) => typeof p !== 'string' || !projectable.includes(p))) {
      throw invalidInput(`proj must name attributes of the table${distinct ? ' (hash keys and static columns for distinct)' : ''}.`, 'invalid-query');
    }
    output = proj;
  }

  let limit = MAX_LIMIT;
  if (query.limit !== undefined) {
    if (!Number.isInteger(query.limit) || query.limit < 1) throw invalidInput('limit must be a positive integer.', 'invalid-query');
    limit = Math.min(query.limit, MAX_LIMIT);
  }

  const fingerprint = () => queryFingerprint([schema.table, query.index ?? null, distinct, keysetOrder, predicates.map((p) => [p.column, p.op])]);
  let after: unknown[] | undefined;
  if (query.next !== undefined && query.next !== null) {
    const raw = decodeToken(query.next, fingerprint(), keysetOrder.length);
    after = keysetOrder.map(({ column }, i) => {
      const type = schema.attributes[column]!;
      const normalized = normalizeValue(type, raw[i], column);
      if (normalized === null) throw invalidInput('The paging token (next) is malformed.', 'invalid-paging-token');
      return encode(type, normalized);
    });
  }
  const joinStatics = info.statics.some((s) => output.includes(s));
  if (query.withTTL !== undefined && typeof query.withTTL !== 'boolean') throw invalidInput('withTTL must be a boolean.', 'invalid-query');
  const withTTL = query.withTTL === true;
  if (withTTL && distinct) throw invalidInput('withTTL reads rows; distinct lists partitions.', 'invalid-query');
  return {
    predicates, order: keysetOrder, output, notNull, limit, after, fingerprint, joinStatics, distinct, withTTL, ...(currentVersions ? { currentVersions } : {}),
    scoped: scope !== undefined && !hashComplete,
    ...(index ? { index } : {}),
  };
}

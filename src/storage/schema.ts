import { isDeepStrictEqual } from 'node:util';
import { invalidInput } from './errors.js';
import { setElementType } from './values.js';
import { own, SCALAR_TYPES, type AttributeType, type IndexElement, type RetentionPolicy, type TableSchema } from './types.js';

/** Names are embedded (quoted) in SQL, so they are held to strict patterns. */
export const TABLE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,119}$/;
const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9_\-]{0,62}$/;
const INDEX_NAME = /^[A-Za-z][A-Za-z0-9_\-]{0,62}$/;
const KEY_UNSUITABLE = new Set(['json', 'blob']);
/** Names engines keep for themselves (PostgreSQL's system columns, SQLite's rowid aliases). */
const RESERVED_ATTRIBUTES = new Set(['xmin', 'xmax', 'cmin', 'cmax', 'ctid', 'tableoid', 'oid', 'rowid', 'token', 'writetime', 'ttl']);
/**
 * RESTBase's implicit time-uuid: a table whose keys include no timeuuid gets this attribute, filled
 * on every row write (with the caller's value when it gives one), so each row says when it was
 * last written and conditions can name its version.
 */
export const IMPLICIT_TID = '_tid';
/**
 * The wiki a row of a storage group's table belongs to (storage-groups.ts): the first hash key
 * of every such table and of each of its indexes. Only the storage layer names it.
 */
export const GROUP_DOMAIN = '_domain';

/** A schema plus what every operation needs to know about it, computed once. */
export interface TableInfo {
  schema: TableSchema;
  hash: string[];
  range: string[];
  rangeOrder: Record<string, 'asc' | 'desc'>;
  statics: string[];
  regular: string[];
  /** The last timeuuid range column, used by time-based retention. */
  tidColumn: string | undefined;
  /** Whether an index orders the table's keys it does not name descending (see TableSchema.indexLayout). */
  indexKeysDescending: boolean;
}

function fail(detail: string): never {
  throw invalidInput(`Invalid schema: ${detail}`, 'invalid-schema');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isType(t: unknown): t is AttributeType {
  if (typeof t !== 'string') return false;
  const element = setElementType(t as AttributeType);
  return (SCALAR_TYPES as readonly string[]).includes(element ?? t);
}

function normalizeIndex(elements: unknown, attributes: Record<string, AttributeType>, where: string, primary: boolean): IndexElement[] {
  if (!Array.isArray(elements) || elements.length === 0) fail(`${where} must be a non-empty array`);
  const seen = new Set<string>();
  const out = elements.map((raw): IndexElement => {
    if (!isObject(raw)) fail(`${where} entries must be objects`);
    const { attribute, type, order } = raw;
    if (typeof attribute !== 'string') fail(`${where} entries must name an attribute`);
    // As RESTBase words it: a migration that drops an indexed attribute is refused with this too.
    if (own(attributes, attribute) === undefined) fail(`${where} names unknown attribute ${JSON.stringify(attribute)}: index element ${JSON.stringify(raw)} is not in attributes (any more)`);
    if (seen.has(attribute)) fail(`${where} names '${attribute}' twice`);
    seen.add(attribute);
    const allowed = primary ? ['hash', 'range', 'static', 'proj'] : ['hash', 'range', 'proj'];
    if (typeof type !== 'string' || !allowed.includes(type)) fail(`${where}: '${attribute}' has type ${JSON.stringify(type)}; expected one of ${allowed.join(', ')}`);
    if ((type === 'hash' || type === 'range') && (KEY_UNSUITABLE.has(attributes[attribute]!) || setElementType(attributes[attribute]!))) {
      fail(`${where}: '${attribute}' of type ${attributes[attribute]} cannot be a key`);
    }
    if (order !== undefined && order !== 'asc' && order !== 'desc') fail(`${where}: order must be asc or desc`);
    return type === 'range' ? { attribute, type, order: (order as 'asc' | 'desc') ?? 'asc' } : { attribute, type: type as IndexElement['type'] };
  });
  const kinds = out.map((e) => e.type);
  if (!kinds.includes('hash')) fail(`${where} needs at least one hash attribute`);
  if (kinds.lastIndexOf('hash') > kinds.indexOf('range') && kinds.includes('range')) fail(`${where}: hash attributes come before range attributes`);
  if (primary && kinds.includes('static') && !kinds.includes('range')) fail('static columns need a range key (they are shared by the rows of a partition)');
  return out;
}

function normalizeRetention(raw: unknown): RetentionPolicy {
  if (raw === undefined) return { type: 'all' };
  if (!isObject(raw)) fail('revisionRetentionPolicy must be an object');
  const nonNegative = (field: string, dflt?: number): number => {
    const v = raw[field] ?? dflt;
    if (!Number.isInteger(v) || (v as number) < 0) fail(`revisionRetentionPolicy.${field} must be a non-negative integer`);
    return v as number;
  };
  switch (raw.type) {
    case 'all':
      return { type: 'all' };
    case 'latest':
      return { type: 'latest', count: Math.max(1, nonNegative('count', 1)), grace_ttl: nonNegative('grace_ttl', 86400) };
    case 'latest_hash':
      return { type: 'latest_hash', grace_ttl: nonNegative('grace_ttl', 86400) };
    case 'interval':
      return {
        type: 'interval',
        interval: Math.max(1, nonNegative('interval')),
        count: Math.max(1, nonNegative('count', 1)),
        grace_ttl: nonNegative('grace_ttl', 86400),
      };
    case 'ttl':
      return { type: 'ttl', ttl: Math.max(1, nonNegative('ttl')) };
    default:
      return fail(`unknown revisionRetentionPolicy type ${JSON.stringify(raw.type)}`);
  }
}

/** Validates a schema in RESTBase's format and fills in defaults. */
export function normalizeSchema(raw: unknown, tableName: string, domain?: string): TableSchema {
  if (!isObject(raw)) fail('the schema must be a JSON object');
  if (raw.table !== undefined && raw.table !== tableName) fail(`'table' is ${JSON.stringify(raw.table)} but the URL names '${tableName}'`);
  // A schema as GET answers it names its domain; it may be PUT back unchanged.
  if (raw.domain !== undefined && raw.domain !== domain) fail(`'domain' is ${JSON.stringify(raw.domain)} but the table is in '${domain}'`);
  if (!TABLE_NAME.test(tableName)) fail(`table name '${tableName}' must match ${TABLE_NAME}`);
  const version = raw.version ?? 1;
  if (!Number.isInteger(version) || (version as number) < 1) fail('version must be a positive integer');
  if (!isObject(raw.attributes) || Object.keys(raw.attributes).length === 0) fail('attributes must be a non-empty object');
  const attributes: Record<string, AttributeType> = {};
  const folded = new Map<string, string>();
  for (const [name, type] of Object.entries(raw.attributes)) {
    if (name === IMPLICIT_TID) {
      // Named when a schema read back from GET is PUT again.
      if (type !== 'timeuuid') fail(`attribute '${IMPLICIT_TID}' is the implicit time-uuid; its type is timeuuid`);
      attributes[name] = type;
      continue;
    }
    if (!ATTRIBUTE_NAME.test(name) && !(name === GROUP_DOMAIN && type === 'string')) fail(`attribute name '${name.slice(0, 80)}' must match ${ATTRIBUTE_NAME}`);
    const lower = name.toLowerCase();
    if (RESERVED_ATTRIBUTES.has(lower)) fail(`attribute name '${name}' is reserved by storage engines`);
    // Some engines fold the case of column names: 'a' and 'A' would be one column there.
    if (folded.has(lower)) fail(`attribute names '${folded.get(lower)}' and '${name}' differ only in case`);
    folded.set(lower, name);
    if (!isType(type)) fail(`attribute '${name}' has unknown type ${JSON.stringify(type)}`);
    attributes[name] = type;
  }
  const index = normalizeIndex(raw.index, attributes, 'index', true);
  const tidKeyed = index.some((e) => e.type === 'range' && attributes[e.attribute] === 'timeuuid');
  if (own(attributes, IMPLICIT_TID) !== undefined) {
    if (tidKeyed) fail(`'${IMPLICIT_TID}' is implicit only in tables keyed by no timeuuid; this one has a timeuuid range key`);
    if (index.some((e) => e.attribute === IMPLICIT_TID && e.type !== 'proj')) fail(`'${IMPLICIT_TID}' cannot be a key or static column`);
  } else if (!tidKeyed) {
    attributes[IMPLICIT_TID] = 'timeuuid';
  }
  const secondaryIndexes: Record<string, IndexElement[]> = {};
  if (raw.secondaryIndexes !== undefined) {
    if (!isObject(raw.secondaryIndexes)) fail('secondaryIndexes must be an object');
    const statics = new Set(index.filter((e) => e.type === 'static').map((e) => e.attribute));
    for (const [name, elements] of Object.entries(raw.secondaryIndexes)) {
      if (!INDEX_NAME.test(name)) fail(`index name '${name}' must match ${INDEX_NAME}`);
      const normalized = normalizeIndex(elements, attributes, `secondaryIndexes.${name}`, false);
      const onStatic = normalized.find((e) => e.type !== 'proj' && statics.has(e.attribute));
      if (onStatic) fail(`secondaryIndexes.${name} cannot index the static column '${onStatic.attribute}'`);
      secondaryIndexes[name] = normalized;
    }
  }
  const retention = normalizeRetention(raw.revisionRetentionPolicy);
  if (retention.type === 'interval' && !index.some((e) => e.type === 'range' && attributes[e.attribute] === 'timeuuid')) {
    fail('the interval retention policy needs a timeuuid range key');
  }
  if (retention.type === 'latest_hash') {
    // RESTBase's: it keeps one row of a hash key by the order of its range keys; an index would
    // keep entries of rows let go, and a table keyed by a timeuuid alone is what `latest` is for.
    if (Object.keys(secondaryIndexes).length > 0) fail('the latest_hash retention policy cannot be used on a table with secondary indexes');
    if (!index.some((e) => e.type === 'range' && attributes[e.attribute] !== 'timeuuid')) fail('the latest_hash retention policy needs a range key other than a timeuuid');
  }
  if (raw.options !== undefined && !isObject(raw.options)) fail('options must be an object');
  const options = (raw.options as Record<string, unknown>) ?? {};
  checkStorageOptions(options);
  // A schema PUT back as the storage API answers it carries the copy given before: not nested.
  const { given: _given, ...given } = raw;
  return {
    table: tableName,
    version: version as number,
    attributes,
    index,
    secondaryIndexes,
    revisionRetentionPolicy: retention,
    options,
    given,
  };
}

/**
 * The layout of the secondary indexes of tables made from now on: the table's keys an index does
 * not name are its last range keys, descending, as RESTBase laid them out. A table made before
 * keeps the layout it was made with (its index tables on Cassandra are ordered so).
 */
export const INDEX_LAYOUT = 2;

/** A schema about to be stored: a new table's indexes laid out anew, a migrated one's as they were. */
export function withIndexLayout(schema: TableSchema, stored: TableSchema | undefined): TableSchema {
  const layout = stored ? stored.indexLayout : INDEX_LAYOUT;
  const { indexLayout: _none, ...rest } = schema;
  return layout === undefined ? rest : { ...rest, indexLayout: layout };
}

/** A schema as clients read it: without how the engine lays out its indexes. */
export function publicSchema<T extends TableSchema>({ indexLayout: _layout, ...schema }: T): Omit<T, 'indexLayout'> {
  return schema;
}

/** A schema without the copy of what its client gave: what the table is. */
const definition = ({ given: _given, ...schema }: TableSchema): Omit<TableSchema, 'given'> => schema;

/** How a table's rows change, for engines that pick their compaction by it (RESTBase's `updates.pattern`). */
const UPDATE_PATTERNS = ['random-update', 'write-once', 'timeseries'] as const;

/**
 * The options an engine acts on are checked (others are kept as given, as RESTBase's schemas carry
 * some, e.g. `durability`): `gc_grace_seconds`, how long deletions are remembered (Cassandra),
 * and `updates.pattern`.
 */
function checkStorageOptions(options: Record<string, unknown>): void {
  const grace = options.gc_grace_seconds;
  if (grace !== undefined && !(Number.isInteger(grace) && (grace as number) >= 0 && (grace as number) <= 2 ** 31 - 1)) {
    fail('options.gc_grace_seconds must be a non-negative integer');
  }
  const updates = options.updates;
  if (updates === undefined) return;
  if (!isObject(updates)) fail('options.updates must be an object');
  const pattern = (updates as Record<string, unknown>).pattern;
  if (pattern !== undefined && !(UPDATE_PATTERNS as readonly unknown[]).includes(pattern)) fail(`options.updates.pattern must be one of ${UPDATE_PATTERNS.join(', ')}`);
}

export function describe(schema: TableSchema): TableInfo {
  const of = (kind: IndexElement['type']) => schema.index.filter((e) => e.type === kind).map((e) => e.attribute);
  const hash = of('hash');
  const range = of('range');
  const statics = of('static');
  const keyed = new Set([...hash, ...range, ...statics]);
  const rangeOrder = Object.fromEntries(schema.index.filter((e) => e.type === 'range').map((e) => [e.attribute, e.order ?? 'asc']));
  const tidColumn = [...range].reverse().find((a) => schema.attributes[a] === 'timeuuid');
  return { schema, hash, range, rangeOrder, statics, regular: Object.keys(schema.attributes).filter((a) => !keyed.has(a)), tidColumn, indexKeysDescending: schema.indexLayout === INDEX_LAYOUT };
}

export type SchemaChange = 'unchanged' | 'migrate';

/** What re-PUTting a schema means: nothing, a supported migration, or a 400. */
export function compareSchemas(currentGiven: TableSchema, nextGiven: TableSchema): SchemaChange {
  const current = definition(currentGiven);
  const next = definition(nextGiven);
  if (isDeepStrictEqual(current, next)) return 'unchanged';
  // A table created before the implicit time-uuid existed gains it when its schema is PUT again,
  // at the same version: the modules re-PUT theirs at start-up and must not be refused.
  if (next.version === current.version && isDeepStrictEqual({ ...current, attributes: { ...current.attributes, [IMPLICIT_TID]: 'timeuuid' } }, next)) {
    return 'migrate';
  }
  if (next.version <= current.version) {
    throw invalidInput(`Schema version must be higher than the stored one (${current.version}) for the schema to change; it is ${next.version}.`, 'schema-version-not-higher');
  }
  const keysOf = (s: TableSchema) => s.index.filter((e) => e.type === 'hash' || e.type === 'range');
  if (!isDeepStrictEqual(keysOf(current), keysOf(next))) fail('the hash and range keys of a table cannot change');
  const wasStatic = new Set(current.index.filter((e) => e.type === 'static').map((e) => e.attribute));
  const isStatic = new Set(next.index.filter((e) => e.type === 'static').map((e) => e.attribute));
  for (const [name, type] of Object.entries(current.attributes)) {
    // Removing a column drops its data. Keys and indexed columns cannot go: the new schema's
    // index definitions would name an unknown attribute, and were refused above.
    if (own(next.attributes, name) === undefined) continue;
    if (next.attributes[name] !== type) fail(`attribute '${name}' cannot change type from ${type} to ${next.attributes[name]}`);
    if (wasStatic.has(name) !== isStatic.has(name)) fail(`attribute '${name}' cannot change between static and regular`);
  }
  return 'migrate';
}

/** RESTBase's table storage JSON format: schemas, queries, writes. */

/**
 * A client-named entry of an object, never one inherited from Object.prototype: names such as
 * `toString` or `constructor` are looked up in schemas and queries.
 */
export function own<T>(object: Record<string, T> | undefined, key: string): T | undefined {
  return object !== undefined && Object.hasOwn(object, key) ? object[key] : undefined;
}

export const SCALAR_TYPES = [
  'blob', 'string', 'int', 'long', 'varint', 'decimal', 'float', 'double', 'boolean', 'timeuuid', 'uuid', 'timestamp', 'json',
] as const;
export type ScalarType = (typeof SCALAR_TYPES)[number];
export type AttributeType = ScalarType | `set<${ScalarType}>`;

export type IndexKind = 'hash' | 'range' | 'static' | 'proj';
export type SortOrder = 'asc' | 'desc';

export interface IndexElement {
  attribute: string;
  type: IndexKind;
  order?: SortOrder;
}

export type RetentionPolicy =
  | { type: 'all' }
  | { type: 'latest'; count: number; grace_ttl: number }
  /** Only the row written last of each hash key stays, whatever its range keys. */
  | { type: 'latest_hash'; grace_ttl: number }
  | { type: 'interval'; interval: number; count: number; grace_ttl: number }
  | { type: 'ttl'; ttl: number };

export interface TableSchema {
  table: string;
  version: number;
  attributes: Record<string, AttributeType>;
  index: IndexElement[];
  secondaryIndexes: Record<string, IndexElement[]>;
  revisionRetentionPolicy: RetentionPolicy;
  options: Record<string, unknown>;
  /**
   * The schema as its client last PUT it, kept so that it reads back over HTTP as it was put (a
   * client compares it with its own); no part of what the table is.
   */
  given?: Record<string, unknown>;
  /** How its secondary indexes are laid out (schema.ts INDEX_LAYOUT); absent in tables made before layouts had a number. */
  indexLayout?: number;
}

/** A plain value means `eq`. */
export type Predicate = unknown;

export interface Query {
  table: string;
  index?: string;
  attributes?: Record<string, Predicate>;
  proj?: string | string[];
  order?: Record<string, SortOrder>;
  limit?: number;
  next?: string;
  /** One item per partition: its hash keys and static columns (Cassandra's SELECT DISTINCT). */
  distinct?: boolean;
  /** Add `_ttl` to each item: seconds left for a row written with one, else null. */
  withTTL?: boolean;
}

export type WriteCondition = 'not exists' | Record<string, { eq: unknown }>;

export interface Write {
  table: string;
  attributes: Record<string, unknown>;
  if?: WriteCondition;
}

export interface Delete {
  table: string;
  attributes: Record<string, unknown>;
}

export type Row = Record<string, unknown>;

export interface QueryResult {
  items: Row[];
  next?: string;
}

import { badRequest, HttpError } from '../../util/errors.js';
import type { TableClient } from '../../table-access/table-client.js';
import type { RequestContext } from '../../router/types.js';

/**
 * Indexes a bucket declares when it is created, over an entity header of its values (for example
 * `{by_type: {header: "content-type"}}`): `GET …/{bucket}//{index}/{value}` lists the keys whose
 * value carries that header value. On a revisioned bucket `revisions: "all"` lists every revision
 * with it, `"latest"` (the default) only keys whose latest revision has it.
 */
export interface BucketIndex {
  header: string;
  revisions: 'latest' | 'all';
}
export type BucketIndexes = Record<string, BucketIndex>;

const INDEX_NAME = /^[a-z][a-z0-9_]{0,39}$/;
const HEADER_NAME = /^[a-z][a-z0-9-]{0,63}$/;
const MAX_INDEXES = 8;

/** The column holding an index's value in the bucket's table. */
export const indexColumn = (name: string) => `ix_${name}`;

/** The `indexes` of a bucket's creation body, checked (400 naming what is wrong). */
export function parseIndexes(raw: unknown): BucketIndexes {
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('indexes must map index names to {header, revisions?}.', 'invalid-indexes');
  const entries = Object.entries(raw as Record<string, unknown>);
  if (entries.length > MAX_INDEXES) throw badRequest(`A bucket has at most ${MAX_INDEXES} indexes.`, 'invalid-indexes');
  const indexes: BucketIndexes = {};
  for (const [name, definition] of entries) {
    if (!INDEX_NAME.test(name)) throw badRequest(`Index name '${name.slice(0, 60)}' must match ${INDEX_NAME}.`, 'invalid-indexes');
    const { header, revisions = 'latest' } = (definition ?? {}) as { header?: unknown; revisions?: unknown };
    if (typeof header !== 'string' || !HEADER_NAME.test(header.toLowerCase())) throw badRequest(`indexes.${name}.header must name an entity header, e.g. content-type.`, 'invalid-indexes');
    if (revisions !== 'latest' && revisions !== 'all') throw badRequest(`indexes.${name}.revisions must be latest or all.`, 'invalid-indexes');
    indexes[name] = { header: header.toLowerCase(), revisions };
  }
  return indexes;
}

/** What a bucket's table schema adds for its indexes: a column each, a secondary index each (keys, then tid, as range keys). */
export function indexSchema(indexes: BucketIndexes, keyAttributes: string[], revisioned: boolean) {
  const names = Object.keys(indexes);
  return {
    attributes: Object.fromEntries(names.map((n) => [indexColumn(n), 'string'])),
    secondaryIndexes: Object.fromEntries(names.map((n) => [n, [
      { attribute: indexColumn(n), type: 'hash' },
      ...keyAttributes.map((a) => ({ attribute: a, type: 'range' })),
      ...(revisioned ? [{ attribute: 'tid', type: 'range', order: 'desc' }] : []),
    ]])),
    // Kept with the schema (options are stored as given): writes learn from it what to index.
    options: names.length > 0 ? { bucket_indexes: indexes } : {},
  };
}

/** The index columns of a value with these entity headers (none when the header is absent). */
export function indexValues(indexes: BucketIndexes, headers: Record<string, string>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, { header }] of Object.entries(indexes)) {
    const value = headers[header];
    if (value !== undefined) values[indexColumn(name)] = value;
  }
  return values;
}

/** How long a process trusts the index definitions it read (a bucket dropped and made anew elsewhere). */
const KEPT_MS = 10_000;

/** The indexes of one bucket, read from its table's schema and kept a short while. */
export class BucketIndexReader {
  private kept: { at: number; indexes: Promise<BucketIndexes> } | undefined;

  constructor(private readonly table: TableClient) {}

  of(ctx: RequestContext): Promise<BucketIndexes> {
    if (this.kept && Date.now() - this.kept.at < KEPT_MS) return this.kept.indexes;
    const indexes = this.table.schema(ctx).then((schema) => ((schema.options as { bucket_indexes?: BucketIndexes } | undefined)?.bucket_indexes ?? {}));
    this.kept = { at: Date.now(), indexes };
    indexes.catch(() => (this.kept = undefined));
    return indexes;
  }

  /** The definition of `name`, or the 404 of an index the bucket does not declare. */
  async index(ctx: RequestContext, name: string): Promise<BucketIndex> {
    const indexes = await this.of(ctx);
    const index = Object.hasOwn(indexes, name) ? indexes[name] : undefined;
    if (!index) throw new HttpError(404, 'unknown-index', `The bucket has no index '${name}'.`);
    return index;
  }
}

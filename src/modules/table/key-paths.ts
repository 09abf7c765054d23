import { createHash } from 'node:crypto';
import { badRequest, HttpError, notFound } from '../../util/errors.js';
import { notModified } from '../../http/conditional.js';
import { frozenJsonBytes } from '../../http/serialize.js';
import type { Response, RouteRequest } from '../../router/types.js';
import { validityOf } from '../../storage/answer-validity.js';
import { IMPLICIT_TID } from '../../storage/schema.js';
import type { TableStorage } from '../../storage/table-storage.js';
import { tidTime } from '../../util/tid.js';
import type { AttributeType, IndexElement, Query, TableSchema } from '../../storage/types.js';

/** Path segments after the table (or after `//{index}`) a route accepts: compound keys in declared order. */
const MAX_KEY_SEGMENTS = 6;
export const keySegmentNames = Array.from({ length: MAX_KEY_SEGMENTS }, (_, i) => `k${i + 1}`);

/** Range conditions on the key after those the path names, as query parameters. */
const RANGE_PARAMS = ['gt', 'ge', 'lt', 'le'] as const;

/** A path segment as the attribute's JSON value (storage checks it against the type). */
function segmentValue(type: AttributeType, text: string, name: string): unknown {
  if (text === '') throw badRequest(`The key '${name}' is empty: a path segment names each key.`, 'empty-key');
  if (type === 'int' || type === 'float' || type === 'double') {
    const n = Number(text);
    if (!Number.isFinite(n)) throw badRequest(`The key '${name}' must be a number, not ${JSON.stringify(text.slice(0, 80))}.`, 'invalid-key');
    return n;
  }
  if (type === 'boolean') {
    if (text !== 'true' && text !== 'false') throw badRequest(`The key '${name}' must be true or false.`, 'invalid-key');
    return text === 'true';
  }
  if (type === 'json' || type.startsWith('set<')) throw badRequest(`The key '${name}' is of type ${type}, which a path cannot name.`, 'invalid-key');
  // long and varint travel as strings; uuids, timestamps, decimals and base64 blobs are text already.
  return text;
}

interface KeyOrder {
  /** Keys a path names in turn: the hash keys, then the range keys. */
  keys: string[];
  hashCount: number;
  /** Declared direction of each range key. */
  directions: Record<string, 'asc' | 'desc'>;
}

function keyOrder(elements: IndexElement[]): KeyOrder {
  const hash = elements.filter((e) => e.type === 'hash').map((e) => e.attribute);
  const range = elements.filter((e) => e.type === 'range');
  return { keys: [...hash, ...range.map((e) => e.attribute)], hashCount: hash.length, directions: Object.fromEntries(range.map((e) => [e.attribute, e.order ?? 'asc'])) };
}

/** The storage query a key path asks: equality on the keys named, range parameters on the next one. */
function pathQuery(req: RouteRequest, schema: TableSchema, order: KeyOrder, segments: string[], index?: string): { query: Query; point: boolean } {
  const { keys, hashCount } = order;
  const where = index === undefined ? 'the table' : `index '${index}'`;
  if (segments.length < hashCount) throw badRequest(`${where} is partitioned by ${keys.slice(0, hashCount).join(', ')}: name each in the path.`, 'incomplete-key');
  if (segments.length > keys.length) throw notFound(`${where} has ${keys.length} keys (${keys.join(', ')}); the path names ${segments.length}.`, 'too-many-keys');
  const attributes: Record<string, unknown> = {};
  segments.forEach((text, i) => (attributes[keys[i]!] = segmentValue(schema.attributes[keys[i]!]!, text, keys[i]!)));
  const next = keys[segments.length];
  const given = RANGE_PARAMS.filter((p) => req.query.has(p));
  if (given.length > 0) {
    if (next === undefined) throw badRequest(`'${given[0]}' needs a range key after those the path names; ${where} has none left.`, `invalid-${given[0]}`);
    if (given.includes('gt') && given.includes('ge')) throw badRequest("'gt' and 'ge' cannot be given together.", 'invalid-ge');
    if (given.includes('lt') && given.includes('le')) throw badRequest("'lt' and 'le' cannot be given together.", 'invalid-le');
    attributes[next] = Object.fromEntries(given.map((p) => [p, segmentValue(schema.attributes[next]!, req.query.get(p)!, `${p} (${next})`)]));
  }
  const query: Query = { table: req.params.table!, attributes, ...(index === undefined ? {} : { index }) };
  // `limit` and `order` are checked by the route's schema (see keyPathSpec).
  const limit = req.query.get('limit');
  if (limit !== null) query.limit = Number(limit);
  const token = req.query.get('next');
  if (token !== null) query.next = token;
  const direction = req.query.get('order');
  if (direction !== null) {
    const rangeKeys = Object.keys(order.directions);
    if (rangeKeys.length === 0) throw badRequest(`'order' needs a range key; ${where} has none.`, 'invalid-order');
    if (direction === 'desc') query.order = Object.fromEntries(rangeKeys.map((k) => [k, order.directions[k] === 'asc' ? 'desc' : 'asc']));
  }
  return { query, point: index === undefined && segments.length === keys.length };
}

/** ETags of answers kept as bytes (see frozenJsonBytes): a hot answer is hashed once. */
const etagOfBytes = new WeakMap<Buffer, string>();

/**
 * A JSON answer that a cache can validate: a weak ETag of its bytes (weak: the same answer may
 * travel gzipped or not), 304 when the client has them.
 */
function cacheable(req: RouteRequest, body: object, lastModified?: string): Response {
  // An answer of rows read: sent again while they are what a read would return (where the engine knows).
  const reuse = validityOf(body);
  const bytes = frozenJsonBytes(body);
  let etag = etagOfBytes.get(bytes);
  if (!etag) etagOfBytes.set(bytes, (etag = `W/"${createHash('sha1').update(bytes).digest('base64url')}"`));
  const headers: Record<string, string> = { etag, 'cache-control': 'no-cache', 'content-type': 'application/json' };
  if (lastModified) headers['last-modified'] = lastModified;
  if (notModified(req.headers, etag, lastModified)) return { status: 304, headers };
  return { status: 200, headers, body: bytes, reuse };
}

/**
 * GET by key path: `/{table}/{hash}[/{range}...]` (a partition, or one row when every key is
 * named) and by secondary index: `/{table}//{index}/{value}[/...]` (the empty segment cannot be a
 * key, so it cannot collide), with `gt`/`ge`/`lt`/`le` on the next key, `limit`, `next`, `order`.
 */
export function keyPathHandler(storage: TableStorage, viaIndex: boolean, mapped: <T>(p: Promise<T>) => Promise<T>) {
  return async (req: RouteRequest): Promise<Response> => {
    const schema = await mapped(storage.getSchema(req.domain, req.params.table!));
    const segments = keySegmentNames.map((k) => req.params[k]).filter((s): s is string => s !== undefined);
    let elements = schema.index;
    const index = viaIndex ? req.params.index! : undefined;
    if (index !== undefined) {
      const declared = Object.hasOwn(schema.secondaryIndexes, index) ? schema.secondaryIndexes[index] : undefined;
      if (!declared) throw new HttpError(404, 'unknown-index', `Table '${schema.table}' has no index '${index}'.`);
      elements = declared;
    }
    const { query, point } = pathQuery(req, schema, keyOrder(elements), segments, index);
    const result = await mapped(storage.get(req.domain, query));
    if (point) {
      if (result.items.length === 0) throw notFound(`No row of '${schema.table}' has these keys.`, 'row-not-found');
      const row = result.items[0]!;
      // A row of a table keyed by no timeuuid says when it was written: its implicit time-uuid.
      const written = typeof row[IMPLICIT_TID] === 'string' ? new Date(tidTime(row[IMPLICIT_TID])).toUTCString() : undefined;
      return cacheable(req, row, written);
    }
    return cacheable(req, result);
  };
}

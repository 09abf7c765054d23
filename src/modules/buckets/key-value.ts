import { HttpError, notFound, preconditionFailed } from '../../util/errors.js';
import type { Module, RouteRequest } from '../../router/types.js';
import { newTid } from '../../util/tid.js';
import { missingBucket, TableClient } from '../../table-access/table-client.js';
import { checkedIfMatch, entityFromRequest } from './entity.js';
import { bucketRoutes, revisionResponse } from './revision-routes.js';
import { toRevision } from './revision-store.js';
import { bucketSpecs, withPathParameters } from './spec.js';
import { perBucket } from './per-bucket.js';
import { BucketIndexReader, indexColumn, indexSchema, indexValues, parseIndexes, type BucketIndexes } from './bucket-indexes.js';
import { pagingFrom } from '../../router/paging.js';

/** A key_value bucket's table: one row per key, and a column per index the bucket declares. */
function schema(indexes: BucketIndexes) {
  const extra = indexSchema(indexes, ['key'], false);
  return {
    attributes: { key: 'string', tid: 'timeuuid', value: 'blob', headers: 'json', ...extra.attributes },
    index: [{ attribute: 'key', type: 'hash' }],
    secondaryIndexes: extra.secondaryIndexes,
    options: extra.options,
  };
}

/** A bucket's table client, and the reader of its index definitions over that client. */
const handlesOf = perBucket((domain, bucket) => {
  const table = new TableClient(domain, `key_value.${bucket}`, missingBucket(bucket));
  return { table, indexes: new BucketIndexReader(table) };
});
const tableOf = (req: RouteRequest) => handlesOf(req).table;
const indexesOf = (req: RouteRequest) => handlesOf(req).indexes;

/** The key, as its schema checked it. */
const checked = (req: RouteRequest): string => req.params.key!;

/**
 * `/{domain}/sys/key_value/{bucket}/{key}`: one value per key with its entity headers. Every write
 * gets a new tid, which is its ETag, so If-Match updates exactly the version a client saw.
 */
export function keyValueModule(): Module {
  return {
    name: 'key_value',
    api: 'sys',
    routes: withPathParameters([
      ...bucketRoutes(
        'key_value',
        {
          create: (req, ctx) => tableOf(req).create(ctx, schema(parseIndexes((req.body as { indexes?: unknown } | undefined)?.indexes))),
          list: async (req, ctx, paging) => {
            const { items, next } = await tableOf(req).query(ctx, { proj: ['key'], ...paging });
            return { items: items.map((r) => r.key), next };
          },
        },
        bucketSpecs.createKeyValueBucket,
      ),
      {
        method: 'PUT',
        path: '/key_value/{bucket}/{key}',
        body: 'raw',
        spec: bucketSpecs.putValue,
        handler: async (req, ctx) => {
          const key = checked(req);
          const entity = await entityFromRequest(req);
          const ifNoneMatch = req.headers['if-none-match']?.trim();
          let ifMatch = checkedIfMatch(req.headers['if-match']);
          if (ifMatch === '*') {
            // Any current value: the write goes over whichever is there now, and fails if none is.
            const [current] = (await tableOf(req).query(ctx, { attributes: { key }, proj: ['tid'] })).items;
            if (!current) throw preconditionFailed(`No value under '${key}' (If-Match: *).`, 'value-conflict');
            ifMatch = current.tid as string;
          }
          const condition = ifNoneMatch === '*' ? 'not exists' : ifMatch !== undefined ? { tid: { eq: ifMatch } } : undefined;
          const tid = newTid();
          try {
            const indexed = indexValues(await indexesOf(req).of(ctx), entity.headers);
            await tableOf(req).put(ctx, { attributes: { key, tid, value: entity.value, headers: entity.headers, ...indexed }, if: condition });
          } catch (e) {
            if (e instanceof HttpError && e.status === 412) {
              throw preconditionFailed(ifNoneMatch === '*' ? 'The key already exists.' : 'The value changed since that ETag.', 'value-conflict');
            }
            throw e;
          }
          return { status: 201, headers: { etag: `"${tid}"` }, body: { tid } };
        },
      },
      {
        method: 'GET',
        path: '/key_value/{bucket}/{key}',
        spec: bucketSpecs.getValue,
        handler: async (req, ctx) => {
          const key = checked(req);
          const rev = toRevision((await tableOf(req).query(ctx, { attributes: { key } })).items[0]);
          if (!rev) throw notFound(`No value under '${key}'.`, 'no-value');
          return revisionResponse(rev, false);
        },
      },
      {
        method: 'GET',
        path: '/key_value/{bucket}//{index}/{value}',
        spec: bucketSpecs.byIndex,
        handler: async (req, ctx) => {
          const name = req.params.index!;
          await indexesOf(req).index(ctx, name);
          const { items, next } = await tableOf(req).query(ctx, { index: name, attributes: { [indexColumn(name)]: req.params.value }, proj: ['key', 'tid'], ...pagingFrom(req) });
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body: { items, next } };
        },
      },
      {
        method: 'DELETE',
        path: '/key_value/{bucket}/{key}',
        spec: bucketSpecs.deleteValue,
        handler: async (req, ctx) => {
          const key = checked(req);
          await tableOf(req).delete(ctx, { key });
          return { status: 204 };
        },
      },
    ]),
  };
}

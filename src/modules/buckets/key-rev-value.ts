import type { Module } from '../../router/types.js';
import { perBucket } from './per-bucket.js';
import { RevisionStore } from './revision-store.js';
import { bucketRoutes, parseCreateBody, revisionRoutes } from './revision-routes.js';
import { bucketSpecs, withPathParameters } from './spec.js';
import { parseIndexes } from './bucket-indexes.js';
import { pagingFrom } from '../../router/paging.js';

const storeOf = perBucket((domain, bucket) => new RevisionStore(domain, bucket, `key_rev_value.${bucket}`, ['key']));

/** `/{domain}/sys/key_rev_value/{bucket}/{key}`: revisioned blobs. */
export function keyRevValueModule(): Module {
  return {
    name: 'key_rev_value',
    api: 'sys',
    routes: withPathParameters([
      ...bucketRoutes(
        'key_rev_value',
        {
          create: (req, ctx) => storeOf(req).create(ctx, parseCreateBody(req.body), parseIndexes((req.body as { indexes?: unknown } | undefined)?.indexes)),
          list: async (req, ctx, paging) => {
            const { items, next } = await storeOf(req).listKeys(ctx, paging);
            return { items: items.map((r) => r.key), next };
          },
        },
        bucketSpecs.createRevisionedBucket,
      ),
      {
        method: 'GET',
        path: '/key_rev_value/{bucket}//{index}/{value}',
        spec: bucketSpecs.byIndex,
        handler: async (req, ctx) => ({
          status: 200,
          headers: { 'cache-control': 'no-cache' },
          body: await storeOf(req).byIndex(ctx, req.params.index!, req.params.value!, pagingFrom(req)),
        }),
      },
      ...revisionRoutes({ keyPath: '/key_rev_value/{bucket}/{key}', store: storeOf, key: (req) => ({ key: req.params.key! }) }),
    ]),
  };
}

import type { Module, RouteRequest } from '../../router/types.js';
import { checkBucket, pagingFrom } from './entity.js';
import { RevisionStore } from './revision-store.js';
import { parseCreateBody, revisionRoutes } from './revision-routes.js';
import { bucketSpecs } from './spec.js';

const storeOf = (req: RouteRequest) => new RevisionStore(req.domain, req.params.bucket!, `key_rev_value.${req.params.bucket}`, ['key']);

/** `/{domain}/sys/key_rev_value/{bucket}/{key}`: revisioned blobs. */
export function keyRevValueModule(): Module {
  return {
    name: 'key_rev_value',
    api: 'sys',
    routes: [
      {
        method: 'PUT',
        path: '/key_rev_value/{bucket}',
        spec: bucketSpecs.createRevisionedBucket,
        handler: async (req, ctx) => {
          checkBucket(req.params.bucket!);
          const status = await storeOf(req).create(ctx, parseCreateBody(req.body));
          return { status, body: { bucket: req.params.bucket } };
        },
      },
      {
        method: 'GET',
        path: '/key_rev_value/{bucket}/',
        spec: bucketSpecs.listKeys,
        handler: async (req, ctx) => {
          checkBucket(req.params.bucket!);
          const { items, next } = await storeOf(req).listKeys(ctx, pagingFrom(req));
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body: { items: items.map((r) => r.key), next } };
        },
      },
      ...revisionRoutes({ keyPath: '/key_rev_value/{bucket}/{key}', store: storeOf, key: (req) => ({ key: req.params.key! }) }),
    ],
  };
}

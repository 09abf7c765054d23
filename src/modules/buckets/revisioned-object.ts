import { badRequest, notFound } from '../../util/errors.js';
import { newTid } from '../../util/tid.js';
import type { Module } from '../../router/types.js';
import { missingBucket, TableClient } from '../../table-access/table-client.js';
import { pagingFrom } from '../../router/paging.js';
import { RevisionStore } from './revision-store.js';
import { bucketRoutes, parseCreateBody, revisionRoutes } from './revision-routes.js';
import { bucketSpecs, withPathParameters } from './spec.js';
import { perBucket } from './per-bucket.js';

const revisionsTable = (bucket: string) => `revisioned_object.${bucket}`;
const propsTable = (bucket: string) => `revisioned_object.${bucket}.props`;
const storeOf = perBucket((domain, bucket) => new RevisionStore(domain, bucket, revisionsTable(bucket), ['name', 'prop']));
const propsOf = perBucket((domain, bucket) => new TableClient(domain, propsTable(bucket), missingBucket(bucket)));

/** Which properties an object has: one small partition per object, written after each save. */
const PROPS_SCHEMA = {
  attributes: { name: 'string', prop: 'string' },
  index: [
    { attribute: 'name', type: 'hash' },
    { attribute: 'prop', type: 'range', order: 'asc' },
  ],
};

/**
 * `/{domain}/sys/revisioned_object/{bucket}/{name}/{prop}`: objects whose named properties are
 * each a revisioned blob (what the page content API specialises for wiki pages).
 */
export function revisionedObjectModule(): Module {
  return {
    name: 'revisioned_object',
    api: 'sys',
    routes: withPathParameters([
      ...bucketRoutes(
        'revisioned_object',
        {
          create: async (req, ctx) => {
            const status = await storeOf(req).create(ctx, parseCreateBody(req.body));
            await propsOf(req).create(ctx, PROPS_SCHEMA);
            return status;
          },
          list: async (req, ctx, paging) => {
            const { items, next } = await propsOf(req).query(ctx, { distinct: true, proj: ['name'], ...paging });
            return { items: items.map((r) => r.name), next };
          },
        },
        bucketSpecs.createRevisionedBucket,
      ),
      {
        method: 'GET',
        path: '/revisioned_object/{bucket}/{name}',
        spec: bucketSpecs.objectRedirect,
        handler: (req) => {
          const segment = req.path.slice(req.path.lastIndexOf('/') + 1);
          return { status: 302, headers: { location: `${segment}/`, 'cache-control': 'no-cache' } };
        },
      },
      {
        method: 'GET',
        path: '/revisioned_object/{bucket}/{name}/',
        spec: bucketSpecs.listProperties,
        handler: async (req, ctx) => {
          const { items, next } = await propsOf(req).query(ctx, { attributes: { name: req.params.name }, proj: ['prop'], ...pagingFrom(req) });
          if (items.length === 0 && !req.query.has('next')) throw notFound(`Object '${req.params.name}' has no properties.`, 'unknown-object');
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body: { items: items.map((r) => r.prop), next } };
        },
      },
      {
        method: 'POST',
        path: '/revisioned_object/{bucket}/{name}/{prop}',
        body: 'json',
        spec: bucketSpecs.postObjectTransaction,
        handler: async (req, ctx) => {
          // A new revision of this property and the sibling writes that go with it, all or nothing.
          const txn = req.body as { uri?: unknown };
          const own = req.path;
          if (typeof txn.uri !== 'string' || !(txn.uri.split('?')[0] === own || txn.uri.startsWith(`${own}/`))) {
            throw badRequest(`The primary request must write this property (${own}).`, 'invalid-transaction');
          }
          return ctx.request({ method: 'PUT', uri: `/${req.domain}/sys/transactions/${newTid()}`, headers: { 'content-type': 'application/json' }, body: txn });
        },
      },
      ...revisionRoutes({
        keyPath: '/revisioned_object/{bucket}/{name}/{prop}',
        store: storeOf,
        key: (req) => ({ name: req.params.name!, prop: req.params.prop! }),
        afterPut: (req, ctx) => propsOf(req).put(ctx, { attributes: { name: req.params.name, prop: req.params.prop } }),
      }),
    ]),
  };
}

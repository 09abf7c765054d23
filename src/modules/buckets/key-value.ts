import { HttpError, badRequest, notFound, preconditionFailed } from '../../errors.js';
import type { Module, RequestContext, RouteRequest } from '../../router/types.js';
import type { QueryResult } from '../../storage/types.js';
import { isTid, newTid } from '../../tid.js';
import { checkBucket, checkKey, entityFromRequest, etagTid, pagingFrom } from './entity.js';
import { missingBucket } from './revision-store.js';
import { revisionResponse } from './revision-routes.js';
import { bucketSpecs } from './spec.js';

const tableUri = (req: RouteRequest) => `/${req.domain}/sys/table/${encodeURIComponent(`key_value.${req.params.bucket}`)}`;

const schema = (bucket: string) => ({
  table: `key_value.${bucket}`,
  attributes: { key: 'string', tid: 'timeuuid', value: 'blob', headers: 'json' },
  index: [{ attribute: 'key', type: 'hash' }],
});

async function table(req: RouteRequest, ctx: RequestContext, method: string, path: string, body: unknown) {
  try {
    return await ctx.request({ method, uri: `${tableUri(req)}${path}`, body });
  } catch (e) {
    throw missingBucket(e, `key_value.${req.params.bucket}`);
  }
}

function checked(req: RouteRequest): string {
  checkBucket(req.params.bucket!);
  const key = req.params.key!;
  checkKey(key);
  return key;
}

/**
 * `/{domain}/sys/key_value/{bucket}/{key}`: one value per key with its entity headers. Every write
 * gets a new tid, which is its ETag, so If-Match updates exactly the version a client saw.
 */
export function keyValueModule(): Module {
  return {
    name: 'key_value',
    api: 'sys',
    routes: [
      {
        method: 'PUT',
        path: '/key_value/{bucket}',
        spec: bucketSpecs.createKeyValueBucket,
        handler: async (req, ctx) => {
          checkBucket(req.params.bucket!);
          const res = await ctx.request({ method: 'PUT', uri: tableUri(req), body: schema(req.params.bucket!) });
          return { status: res.status, body: { bucket: req.params.bucket } };
        },
      },
      {
        method: 'GET',
        path: '/key_value/{bucket}/',
        spec: bucketSpecs.listKeys,
        handler: async (req, ctx) => {
          checkBucket(req.params.bucket!);
          const { items, next } = (await table(req, ctx, 'GET', '/', { proj: ['key'], ...pagingFrom(req) })).body as QueryResult;
          return { status: 200, headers: { 'cache-control': 'no-cache' }, body: { items: items.map((r) => r.key), next } };
        },
      },
      {
        method: 'PUT',
        path: '/key_value/{bucket}/{key}',
        rawBody: true,
        spec: bucketSpecs.putValue,
        handler: async (req, ctx) => {
          const key = checked(req);
          const entity = await entityFromRequest(req);
          const ifNoneMatch = req.headers['if-none-match']?.trim();
          if (ifNoneMatch !== undefined && ifNoneMatch !== '*') throw badRequest("If-None-Match on a write must be '*'.", 'invalid-precondition');
          const ifMatch = etagTid(req.headers['if-match']);
          if (ifMatch !== undefined && !isTid(ifMatch)) throw badRequest('If-Match must be an ETag this bucket gave out.', 'invalid-precondition');
          const condition = ifNoneMatch === '*' ? 'not exists' : ifMatch !== undefined ? { tid: { eq: ifMatch } } : undefined;
          const tid = newTid();
          try {
            await table(req, ctx, 'PUT', '/', { attributes: { key, tid, value: entity.value, headers: entity.headers }, if: condition });
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
          const [row] = ((await table(req, ctx, 'GET', '/', { attributes: { key } })).body as QueryResult).items;
          if (!row) throw notFound(`No value under '${key}'.`, 'no-value');
          return revisionResponse({ tid: row.tid as string, value: row.value as Buffer, headers: row.headers as Record<string, string> }, false);
        },
      },
      {
        method: 'DELETE',
        path: '/key_value/{bucket}/{key}',
        spec: bucketSpecs.deleteValue,
        handler: async (req, ctx) => {
          const key = checked(req);
          await table(req, ctx, 'DELETE', '/', { attributes: { key } });
          return { status: 204 };
        },
      },
    ],
  };
}

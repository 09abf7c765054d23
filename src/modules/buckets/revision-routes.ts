import { BoundedMap } from '../../util/bounded-map.js';
import { badRequest, forbidden, notFound } from '../../util/errors.js';
import type { RequestContext, Response, Route, RouteRequest } from '../../router/types.js';
import type { RetentionPolicy } from '../../storage/types.js';
import { checkNotFuture, isTid, parseTime, tidTime, UUID_PATTERN } from '../../util/tid.js';
import { checkedIfMatch, entityFromRequest } from './entity.js';
import { pagingFrom } from '../../router/paging.js';
import type { Revision, RevisionStore } from './revision-store.js';
import { bucketSpecs } from './spec.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Last-Modified of a tid, by tid: a hot revision is answered again and again (its time is a BigInt sum and a Date). */
const httpDates = new BoundedMap<string, string>(10_000);
const lastModified = (tid: string): string => httpDates.remember(tid, () => new Date(tidTime(tid)).toUTCString());

/** A stored value as its GET: with its entity headers; one stored with a Location is a redirect (302). */
export function revisionResponse(rev: Revision, immutable: boolean): Response {
  const status = rev.headers.location ? 302 : 200;
  return {
    status,
    // Made from the stored row alone: sent again while the row's answer holds.
    reuse: status === 200 ? rev.validity : undefined,
    headers: {
      ...rev.headers,
      etag: `"${rev.tid}"`,
      'last-modified': lastModified(rev.tid),
      'cache-control': immutable ? IMMUTABLE : 'no-cache',
    },
    body: rev.value,
  };
}

/** A path segment after a key: a tid (v1 time-uuid) or a time. */
function parseRevisionSegment(segment: string): { tid: string } | { time: number } {
  if (UUID_PATTERN.test(segment)) {
    if (!isTid(segment)) throw badRequest(`'${segment}' is not a time-uuid (version 1).`, 'invalid-tid');
    return { tid: segment.toLowerCase() };
  }
  return { time: parseTime(segment) };
}

export function parseCreateBody(body: unknown): RetentionPolicy | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) throw badRequest('The bucket options must be a JSON object.', 'invalid-body');
  return (body as { revisionRetentionPolicy?: RetentionPolicy }).revisionRetentionPolicy;
}

export interface BucketOptions {
  /** Creates the bucket's tables: 201 created, 200 already there. */
  create(req: RouteRequest, ctx: RequestContext): Promise<number>;
  /** One page of the bucket's keys (or object names). */
  list(req: RouteRequest, ctx: RequestContext, paging: { limit?: number; next?: string }): Promise<{ items: unknown[]; next?: string }>;
}

/** `PUT /{type}/{bucket}` (create) and `GET /{type}/{bucket}/` (list, paged) of a bucket type. */
export function bucketRoutes(type: string, opts: BucketOptions, createSpec: Record<string, unknown>): Route[] {
  return [
    {
      method: 'PUT',
      path: `/${type}/{bucket}`,
      body: 'optional-json',
      spec: createSpec,
      handler: async (req, ctx) => {
        return { status: await opts.create(req, ctx), body: { bucket: req.params.bucket } };
      },
    },
    {
      method: 'GET',
      path: `/${type}/{bucket}/`,
      spec: bucketSpecs.listKeys,
      handler: async (req, ctx) => {
        return { status: 200, headers: { 'cache-control': 'no-cache' }, body: await opts.list(req, ctx, pagingFrom(req)) };
      },
    },
  ];
}

export interface RevisionRouteOptions {
  /** Path template up to and including the key segments, e.g. `/key_rev_value/{bucket}/{key}`. */
  keyPath: string;
  store(req: RouteRequest): RevisionStore;
  key(req: RouteRequest): Record<string, string>;
  /** Runs after a revision was saved (e.g. to record an object's property). */
  afterPut?(req: RouteRequest, ctx: RequestContext): Promise<void>;
}

/** The routes of one revisioned blob: latest, history, by tid or time, and saving. */
export function revisionRoutes(opts: RevisionRouteOptions): Route[] {
  const keyed = (req: RouteRequest) => ({ store: opts.store(req), key: opts.key(req) });
  const missing = () => notFound('No revision matches.', 'no-revision');

  const save = async (req: RouteRequest, ctx: RequestContext, chosenTid?: string): Promise<Response> => {
    const { store, key } = keyed(req);
    const entity = await entityFromRequest(req);
    const ifNoneMatch = req.headers['if-none-match']?.trim();
    const ifMatch = checkedIfMatch(req.headers['if-match']);
    const tid = await store.put(ctx, key, entity, { ifMatch, ifNoneMatch: ifNoneMatch === '*' }, chosenTid);
    await opts.afterPut?.(req, ctx);
    return { status: 201, headers: { etag: `"${tid}"` }, body: { tid } };
  };

  return [
    {
      method: 'PUT',
      path: opts.keyPath,
      body: 'raw',
      spec: bucketSpecs.putRevision,
      handler: (req, ctx) => save(req, ctx),
    },
    {
      method: 'GET',
      path: opts.keyPath,
      spec: bucketSpecs.getLatest,
      handler: async (req, ctx) => {
        const { store, key } = keyed(req);
        const ts = req.query.get('ts');
        const rev = ts === null ? await store.latest(ctx, key) : await store.atTime(ctx, key, parseTime(ts));
        if (!rev) throw missing();
        return revisionResponse(rev, false);
      },
    },
    {
      method: 'GET',
      path: `${opts.keyPath}/`,
      spec: bucketSpecs.listRevisions,
      handler: async (req, ctx) => {
        const { store, key } = keyed(req);
        return { status: 200, headers: { 'cache-control': 'no-cache' }, body: await store.listRevisions(ctx, key, pagingFrom(req)) };
      },
    },
    {
      method: 'GET',
      path: `${opts.keyPath}/{revision}`,
      spec: bucketSpecs.getRevision,
      handler: async (req, ctx) => {
        const { store, key } = keyed(req);
        const wanted = parseRevisionSegment(req.params.revision!);
        const rev = 'tid' in wanted ? await store.byTid(ctx, key, wanted.tid) : await store.atTime(ctx, key, wanted.time);
        if (!rev) throw missing();
        return revisionResponse(rev, 'tid' in wanted);
      },
    },
    {
      method: 'PUT',
      path: `${opts.keyPath}/{revision}`,
      body: 'raw',
      spec: bucketSpecs.putRevisionWithTid,
      handler: async (req, ctx) => {
        if (!ctx.admin) throw forbidden('Saving a revision with a chosen tid needs the admin credential.', 'elevated-right-required');
        const wanted = parseRevisionSegment(req.params.revision!);
        if (!('tid' in wanted)) throw badRequest('A revision is saved under a tid, not a time.', 'invalid-tid');
        checkNotFuture(wanted.tid);
        return save(req, ctx, wanted.tid);
      },
    },
  ];
}

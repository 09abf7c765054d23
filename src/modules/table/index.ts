import { HttpError, badRequest, forbidden } from '../../util/errors.js';
import { StorageError, type StorageErrorKind } from '../../storage/errors.js';
import type { Module, RequestContext, RouteRequest } from '../../router/types.js';
import { validityOf } from '../../storage/answer-validity.js';
import type { TableStorage } from '../../storage/table-storage.js';
import { keyPathHandler, keySegmentNames } from './key-paths.js';
import { deleteRange, namesRange } from './range-delete.js';
import type { Delete } from '../../storage/types.js';
import { keyPathSpec, tableSpecs } from './spec.js';

/** The body of a row request, with the table taken from the URL. */
function withTable(req: RouteRequest, optional = false): Record<string, unknown> & { table: string } {
  const body = req.body ?? (optional ? {} : undefined);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The body must be a JSON object.', 'invalid-body');
  const { table } = req.params as { table: string };
  const given = (body as { table?: unknown }).table;
  if (given !== undefined && given !== table) throw badRequest(`The body names table ${JSON.stringify(given)} but the URL names '${table}'.`, 'table-mismatch');
  return { ...(body as Record<string, unknown>), table };
}

/** What storage's errors mean over HTTP. */
export const STATUS_OF: Record<StorageErrorKind, number> = { invalid: 400, 'not-found': 404, 'condition-failed': 412, unavailable: 503 };

/** Problem types whose own summary says more than the status (RESTBase's clients read it in `title`). */
const TITLE_OF: Record<string, string> = { 'schema-version-not-higher': 'Schema version must be higher' };

/** Storage's errors as HTTP errors; storage that cannot answer now is worth a retry shortly: says when. */
function httpError(e: unknown): never {
  if (e instanceof StorageError) {
    throw new HttpError(STATUS_OF[e.kind], e.code, e.detail, { ...(e.kind === 'unavailable' ? { headers: { 'retry-after': String(e.retryAfter) } } : {}), title: TITLE_OF[e.code] });
  }
  throw e;
}

/** (Without an async frame of its own: every table read over HTTP or in-process passes here.) */
function mapped<T>(operation: Promise<T>): Promise<T> {
  return operation.catch(httpError);
}

/** A table a module owns cannot be dropped or redefined from outside. */
function checkNotOwned(req: RouteRequest, ctx: RequestContext, owned: () => Set<string>): void {
  if (ctx.external && owned().has(req.params.table!)) {
    throw forbidden(`Table '${req.params.table}' belongs to a module of this service; it cannot be dropped or redefined.`, 'reserved-table');
  }
}

/**
 * `/{domain}/sys/table/`: RESTBase's table storage API over HTTP and internal requests.
 * `owned` names the tables other modules own.
 */
export function tableModule(storage: TableStorage, owned: () => Set<string> = () => new Set()): Module {
  const query = (req: RouteRequest) => mapped(storage.get(req.domain, withTable(req, true))).then((body) => ({ status: 200, body, reuse: validityOf(body) }));
  /**
   * RESTBase's query, a GET with the query as its body, answers as RESTBase's table modules did:
   * 404 when no row matches, its body still carrying `items: []` (clients of that API check the
   * status, and read the items either way). `POST _query` answers 200 with the items, none or more.
   */
  const restbaseQuery = async (req: RouteRequest) => {
    let answer;
    try {
      answer = await query(req);
    } catch (e) {
      // No such table: no rows either, as RESTBase's clients read it.
      if (e instanceof HttpError && e.problemType === 'urn:problem:unknown-table') throw new HttpError(404, 'unknown-table', e.detail, { headers: e.headers, extensions: { ...e.extensions, items: [] } });
      throw e;
    }
    if (answer.body.items.length > 0) return answer;
    throw new HttpError(404, 'no-matching-rows', `No row of '${req.params.table}' matches the query.`, { extensions: { items: [] } });
  };
  return {
    name: 'table',
    api: 'sys',
    components: tableSpecs.components,
    routes: [
      {
        method: 'PUT',
        path: '/table/{table}',
        body: 'json',
        spec: tableSpecs.createTable,
        handler: async (req, ctx) => {
          checkNotOwned(req, ctx, owned);
          const outcome = await mapped(storage.createTable(req.domain, req.params.table!, req.body));
          // A new table or a new version of one is created (201), as RESTBase answered; the same schema again is 200.
          return { status: outcome === 'unchanged' ? 200 : 201, body: { table: req.params.table, outcome } };
        },
      },
      {
        method: 'GET',
        path: '/table/{table}',
        spec: tableSpecs.getSchema,
        // As its client put it, to compare with its own (RESTBase's clients do); a table defined
        // before schemas were kept as given answers its definition, with its domain.
        handler: async (req) => {
          const { given, ...definition } = await mapped(storage.getSchema(req.domain, req.params.table!));
          return { status: 200, body: given ?? definition };
        },
      },
      {
        method: 'DELETE',
        path: '/table/{table}',
        spec: tableSpecs.dropTable,
        handler: async (req, ctx) => {
          checkNotOwned(req, ctx, owned);
          await mapped(storage.dropTable(req.domain, req.params.table!));
          return { status: 204 };
        },
      },
      {
        method: 'PUT',
        path: '/table/{table}/',
        body: 'json',
        spec: tableSpecs.put,
        handler: async (req) => {
          await mapped(storage.put(req.domain, withTable(req) as never));
          // No body, as RESTBase's table modules answered a write.
          return { status: 201 };
        },
      },
      { method: 'GET', path: '/table/{table}/', body: 'optional-json', spec: tableSpecs.query, handler: restbaseQuery },
      // GET by key path, and by secondary index after `//`: one route per number of key segments.
      // (Without keys: answered with what the index is keyed by.)
      { method: 'GET', path: '/table/{table}//{index}', spec: keyPathSpec(0, true), handler: keyPathHandler(storage, true, mapped) },
      ...keySegmentNames.flatMap((_, i) => {
        const keys = keySegmentNames.slice(0, i + 1).map((k) => `{${k}}`).join('/');
        return [
          { method: 'GET' as const, path: `/table/{table}/${keys}`, spec: keyPathSpec(i + 1, false), handler: keyPathHandler(storage, false, mapped) },
          { method: 'GET' as const, path: `/table/{table}//{index}/${keys}`, spec: keyPathSpec(i + 1, true), handler: keyPathHandler(storage, true, mapped) },
        ];
      }),
      { method: 'POST', path: '/table/{table}/_query', body: 'optional-json', readsOnly: true, spec: tableSpecs.postQuery, handler: query },
      {
        method: 'DELETE',
        path: '/table/{table}/',
        body: 'json',
        spec: tableSpecs.delete,
        handler: async (req) => {
          const del = withTable(req) as unknown as Delete;
          await mapped(namesRange(del) ? deleteRange(storage, req.domain, del) : storage.delete(req.domain, del));
          return { status: 204 };
        },
      },
    ],
  };
}

import type { Module, Response, RouteRequest } from '../../router/types.js';
import { HttpError } from '../../util/errors.js';
import { parseTime } from '../../util/tid.js';
import { ARTICLE_FIELDS, checkFields, contentReuse, passes, selectFields, SNAPSHOT_FIELDS, STRUCTURED_FIELDS, type PageDoor } from '../../modules/page/door.js';
import { serveDownload } from './downloads.js';

/** Enterprise's limit on records per on-demand answer (one a project; a wiki here is one project). */
const MAX_LIMIT = 10;

type Tree = typeof ARTICLE_FIELDS;

/** What a request asks besides its path: fields, filters and limit, from a POST's JSON body or a GET's query. */
interface Asked {
  fields: string[][];
  filters: { path: string[]; value: unknown }[];
  limit: number;
}

const invalid = (message: string) => new HttpError(400, 'invalid-request', message);

/** A GET's `fields` (repeated or comma-separated) and `filters` (`field:value`, or JSON) as a POST sends them. */
function fromQuery(query: URLSearchParams): Record<string, unknown> {
  const list = (name: string) => query.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const filters = query.getAll('filters').flatMap((text) => {
    if (text.trim().startsWith('[')) {
      try {
        return JSON.parse(text) as unknown[];
      } catch {
        throw invalid('filters is neither JSON nor field:value pairs.');
      }
    }
    return text.split(',').filter(Boolean).map((pair) => {
      const at = pair.indexOf(':');
      if (at < 1) throw invalid(`filter ${pair.slice(0, 100)} is not field:value.`);
      return { field: pair.slice(0, at).trim(), value: pair.slice(at + 1).trim() };
    });
  });
  return {
    ...(query.has('fields') ? { fields: list('fields') } : {}),
    ...(query.has('filters') ? { filters } : {}),
    ...(query.has('limit') ? { limit: Number(query.get('limit')) } : {}),
  };
}

/** The request's options, checked against the record's fields: unknown ones are 400s, a limit past 10 a 422 (Enterprise's words). */
function asked(req: RouteRequest, tree: Tree): Asked {
  const raw = req.method === 'POST' && req.body !== undefined ? req.body : fromQuery(req.query);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('The body must be a JSON object with fields, filters and limit.');
  const { fields = [], filters = [], limit = MAX_LIMIT, ...rest } = raw as Record<string, unknown>;
  const other = Object.keys(rest)[0];
  if (other !== undefined) throw invalid(`${other.slice(0, 100)} is not a parameter (fields, filters, limit).`);
  if (!Array.isArray(fields) || !fields.every((f) => typeof f === 'string')) throw invalid('fields must be an array of field names.');
  if (!Array.isArray(filters) || !filters.every((f) => typeof f === 'object' && f !== null && typeof (f as { field?: unknown }).field === 'string' && 'value' in f)) {
    throw invalid('filters must be an array of {field, value}.');
  }
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw new HttpError(422, 'invalid-limit', 'limit must be a positive integer');
  if (limit > MAX_LIMIT) throw new HttpError(422, 'invalid-limit', `limit cannot be greater than ${MAX_LIMIT}`);
  const paths = checkFields(tree, fields as string[]);
  const checked = (filters as { field: string; value: unknown }[]).map((f) => ({ path: checkFields(tree, [f.field], 'filter')[0]!, value: f.value }));
  return { fields: paths, filters: checked, limit };
}

/** Records as Enterprise answers them: a JSON array, or NDJSON lines where the client asks so. */
function records(req: RouteRequest, items: unknown[]): Response {
  const ndjson = (req.headers.accept ?? '').includes('application/x-ndjson');
  const body = ndjson ? items.map((item) => `${JSON.stringify(item)}\n`).join('') : JSON.stringify(items);
  return { status: 200, headers: { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json', 'cache-control': 'no-cache' }, body: Buffer.from(body) };
}

/** The record kept if it passes the filters, with the fields asked for. */
function shaped(record: Record<string, unknown>, ask: Asked): unknown[] {
  if (!passes(record, ask.filters)) return [];
  return [ask.fields.length ? selectFields(record, ask.fields) : record];
}

const notFound = (what: string) => new HttpError(404, 'not-found', `${what} was not found.`);

const ARTICLE_PARAMS = [
  { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
  { name: 'fields', in: 'query', schema: { type: 'string' }, description: 'Fields to return, dotted (version.identifier), * for any; comma-separated or repeated' },
  { name: 'filters', in: 'query', schema: { type: 'string' }, description: 'field:value pairs, comma-separated, or a JSON array of {field, value}' },
  { name: 'limit', in: 'query', schema: { type: 'string' } },
  { name: 'ts', in: 'query', schema: { type: 'string' }, description: 'The record as it was at this moment (ISO 8601): the line a snapshot of that moment holds' },
];
const BODY = { content: { 'application/json': { schema: { type: 'object' } } } };

/**
 * Wikimedia Enterprise's APIs for this wiki, under `/{domain}/enterprise/v2/`: On-demand
 * (`articles/{name}`, `structured-contents/{name}`) and Snapshots (`snapshots`, their downloads and
 * chunks), in Enterprise's shapes, so an Enterprise client works by changing its base URL.
 */
export function enterpriseModule(page: PageDoor): Module {
  const { enterprise } = page;
  const momentOf = (req: RouteRequest) => {
    const ts = req.query.get('ts');
    return ts ? parseTime(ts) : undefined;
  };
  const article = async (req: RouteRequest, ctx: Parameters<Module['routes'][number]['handler']>[1]): Promise<Response> => {
    const ask = asked(req, ARTICLE_FIELDS);
    const at = momentOf(req);
    const title = await enterprise.titleOf(req.domain, req.params.name!);
    // Taken before the read: the answer is sent again (http/answer-memo.ts) for a second at most,
    // while the page is not written (a record at a moment never changes: as long).
    const reuse = at === undefined ? page.answers.reuseOfPage(req.domain, title) : undefined;
    const reused = () => (reuse ? { reuse: contentReuse(reuse, page.wiki(req.domain), () => undefined) } : {});
    // Asked whole and unfiltered, the stored line is the answer (an array of one), sent compressed
    // as a snapshot's archive holds it: neither parsed nor compressed again.
    if (!ask.fields.length && !ask.filters.length && !(req.headers.accept ?? '').includes('application/x-ndjson')) {
      const gz = await enterprise.articleGz(ctx, req.domain, title, at);
      return { status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'cache-control': 'no-cache' }, body: gz, ...reused() };
    }
    const line = await enterprise.article(ctx, req.domain, title, at);
    const items = shaped(JSON.parse(line) as Record<string, unknown>, ask);
    if (!items.length) throw notFound(`No article named ${req.params.name!.slice(0, 255)} matching the filters`);
    return { ...records(req, items), ...reused() };
  };
  const structured = async (req: RouteRequest, ctx: Parameters<Module['routes'][number]['handler']>[1]): Promise<Response> => {
    const ask = asked(req, STRUCTURED_FIELDS);
    const title = await enterprise.titleOf(req.domain, req.params.name!);
    const reuse = page.answers.reuseOfPage(req.domain, title);
    const items = shaped(await enterprise.structured(ctx, req.domain, title), ask);
    if (!items.length) throw notFound(`No article named ${req.params.name!.slice(0, 255)} matching the filters`);
    return { ...records(req, items), reuse: contentReuse(reuse, page.wiki(req.domain), () => undefined) };
  };
  const snapshots = (req: RouteRequest) => {
    const ask = asked(req, SNAPSHOT_FIELDS);
    return records(req, enterprise.snapshots.list(req.domain).flatMap((s) => shaped(s as unknown as Record<string, unknown>, ask)));
  };
  const snapshot = (req: RouteRequest) => {
    const ask = asked(req, SNAPSHOT_FIELDS);
    const found = enterprise.snapshots.get(req.domain, req.params.identifier!);
    if (!found) throw notFound(`Snapshot ${req.params.identifier!.slice(0, 200)}`);
    const [item] = shaped(found as unknown as Record<string, unknown>, ask);
    if (!item) throw notFound(`Snapshot ${req.params.identifier!.slice(0, 200)} matching the filters`);
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' }, body: Buffer.from(JSON.stringify(item)) };
  };
  const spec = (summary: string, parameters: unknown[] = []) => ({ summary, tags: ['enterprise'], parameters, responses: { 200: { description: summary } } });
  const snapshotParam = { name: 'identifier', in: 'path', required: true, schema: { type: 'string', maxLength: 300 } };
  const chunkParam = { name: 'chunk', in: 'path', required: true, schema: { type: 'string', maxLength: 320 } };
  const queryParams = ARTICLE_PARAMS.slice(1, 4);
  return {
    name: 'enterprise',
    api: 'enterprise',
    routes: [
      { method: 'GET', path: '/v2/articles/{name}', spec: spec("A page's record, as Enterprise's On-demand answers it (an array)", ARTICLE_PARAMS), handler: article },
      { method: 'POST', path: '/v2/articles/{name}', body: 'optional-json', readsOnly: true, spec: { ...spec("A page's record, with fields, filters and limit in the body", ARTICLE_PARAMS.slice(0, 1).concat(ARTICLE_PARAMS.slice(4))), requestBody: BODY }, handler: article },
      { method: 'GET', path: '/v2/structured-contents/{name}', spec: spec("A page's structured contents (abstract, infoboxes, sections, references)", ARTICLE_PARAMS.slice(0, 4)), handler: structured },
      { method: 'POST', path: '/v2/structured-contents/{name}', body: 'optional-json', readsOnly: true, spec: { ...spec("A page's structured contents", ARTICLE_PARAMS.slice(0, 1)), requestBody: BODY }, handler: structured },
      { method: 'GET', path: '/v2/snapshots', spec: spec('The snapshots offered (the newest finished one of each namespace)', queryParams), handler: snapshots },
      { method: 'POST', path: '/v2/snapshots', body: 'optional-json', readsOnly: true, spec: { ...spec('The snapshots offered, with fields and filters in the body'), requestBody: BODY }, handler: snapshots },
      { method: 'GET', path: '/v2/snapshots/{identifier}', spec: spec("A snapshot's description", [snapshotParam, ...queryParams]), handler: snapshot },
      {
        method: 'GET', path: '/v2/snapshots/{identifier}/download', spec: spec("A snapshot's .tar.gz (Range for resumed and parallel downloads)", [snapshotParam]),
        handler(req) {
          const download = enterprise.snapshots.download(req.domain, req.params.identifier!);
          if (!download) throw notFound(`Snapshot ${req.params.identifier!.slice(0, 200)}`);
          return serveDownload(download, req.headers, req.method, `${req.params.identifier}.tar.gz`);
        },
      },
      {
        method: 'GET', path: '/v2/snapshots/{identifier}/chunks', spec: spec("A snapshot's chunks", [snapshotParam]),
        handler(req) {
          const found = enterprise.snapshots.get(req.domain, req.params.identifier!);
          if (!found) throw notFound(`Snapshot ${req.params.identifier!.slice(0, 200)}`);
          const items = found.chunks.map((id) => {
            const chunk = enterprise.snapshots.chunk(req.domain, found.identifier, id)!;
            return { identifier: id, version: found.version, date_modified: found.date_modified, is_part_of: found.is_part_of, namespace: found.namespace, size: { value: Math.round((chunk.size / 1048576) * 1000) / 1000, unit_text: 'MB' } };
          });
          return records(req, items);
        },
      },
      {
        method: 'GET', path: '/v2/snapshots/{identifier}/chunks/{chunk}/download', spec: spec("One chunk of a snapshot, a .tar.gz of its own (Range too)", [snapshotParam, chunkParam]),
        handler(req) {
          const download = enterprise.snapshots.chunk(req.domain, req.params.identifier!, req.params.chunk!);
          if (!download) throw notFound(`Chunk ${req.params.chunk!.slice(0, 200)}`);
          return serveDownload(download, req.headers, req.method, `${req.params.chunk}.tar.gz`);
        },
      },
    ],
  };
}

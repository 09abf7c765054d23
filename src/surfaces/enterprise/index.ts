import type { Module, Response, RouteRequest } from '../../router/types.js';
import { parseJson } from '../../util/json.js';
import { HttpError } from '../../util/errors.js';
import { workGate } from '../../util/concurrency-limit.js';
import { parseTime } from '../../util/tid.js';
import { ARTICLE_FIELDS, checkFields, contentReuse, passes, selectFields, SNAPSHOT_FIELDS, startOf, STRUCTURED_FIELDS, type PageDoor, type Download, type RealtimeOptions, type ShelvedSnapshot } from '../../modules/page/door.js';
import { serveDownload } from './downloads.js';
import { metadataOf } from './metadata.js';

/**
 * Records made at once by this process (and waiting to be) for On-demand and structured contents:
 * a long article's record is megabytes as a JS string, and its structured contents its HTML's
 * tree. Past those waiting, a 503 to ask again.
 */
const MAKING = 8;
const MAKING_WAITING = 256;

/** Enterprise's limit on records per on-demand answer (one a project; a wiki here is one project). */
const MAX_LIMIT = 10;

type Tree = typeof ARTICLE_FIELDS;

/** The fields of Enterprise's metadata: projects, languages, project codes, namespaces. */
const METADATA_FIELDS: Record<'projects' | 'languages' | 'codes' | 'namespaces', Tree> = {
  projects: { name: true, identifier: true, url: true, code: true, in_language: { identifier: true } },
  languages: { identifier: true, name: true, alternate_name: true, direction: true },
  codes: { identifier: true, name: true, description: true },
  namespaces: { identifier: true, name: true, description: true },
};

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
        // Bounded as a JSON body is: a query of `[[[[…` must not reach the filters' comparisons.
        return parseJson(Buffer.from(text)) as unknown[];
      } catch (e) {
        throw invalid(e instanceof HttpError && e.status === 413 ? `filters: ${e.message.replace('The JSON body', 'its JSON')}` : 'filters is neither JSON nor field:value pairs.');
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
  // Enterprise's clients send their options as JSON, on a POST and on a GET alike (its Realtime
  // client GETs with a body); a request without a body gives them in its query.
  const raw = req.body !== undefined ? req.body : fromQuery(req.query);
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

/** What a Realtime client may send (Enterprise's parameters; `parts`, `offsets` and `since_per_partition` name partitions). */
const REALTIME_PARAMS = new Set(['since', 'fields', 'filters', 'parts', 'offsets', 'since_per_partition']);

/**
 * Where a Realtime client starts and what it is sent. A wiki is one partition, 0, in part 0 of
 * Enterprise's ten: its offset (`offsets`) wins over its own time (`since_per_partition`), which
 * wins over `since`; without any, the stream starts now. Parts that leave partition 0 out are
 * sent nothing, as Enterprise sends a connection nothing of the partitions it did not ask for.
 */
function realtimeAsked(req: RouteRequest): { start: string; options: RealtimeOptions } {
  const raw = req.body !== undefined ? req.body : { ...fromQuery(req.query), ...(req.query.has('since') ? { since: req.query.get('since') } : {}) };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('The body must be a JSON object (since, fields, filters, parts, offsets).');
  const body = raw as Record<string, unknown>;
  const other = Object.keys(body).find((k) => !REALTIME_PARAMS.has(k));
  if (other !== undefined) throw invalid(`${other.slice(0, 100)} is not a parameter (${[...REALTIME_PARAMS].join(', ')}).`);
  const { fields, filters } = asked({ ...req, body: { ...(body.fields !== undefined ? { fields: body.fields } : {}), ...(body.filters !== undefined ? { filters: body.filters } : {}) } } as RouteRequest, ARTICLE_FIELDS);
  const partitionMap = (name: string, valid: (v: unknown) => boolean): unknown => {
    const map = body[name];
    if (map === undefined) return undefined;
    if (typeof map !== 'object' || map === null || Array.isArray(map) || Object.keys(map).length > 50 || !Object.values(map).every(valid)) throw invalid(`${name} must be an object of partition: value (at most 50).`);
    return (map as Record<string, unknown>)['0'];
  };
  const offset = partitionMap('offsets', (v) => Number.isSafeInteger(v) && (v as number) >= 0) as number | undefined;
  const since = (partitionMap('since_per_partition', (v) => typeof v === 'string') as string | undefined) ?? body.since;
  // A number is milliseconds since the epoch, within what a date can name.
  if (since !== undefined && typeof since !== 'string' && !(Number.isSafeInteger(since) && Math.abs(since as number) <= 8.64e15)) throw invalid('since must be a time (RFC 3339).');
  const parts = body.parts;
  if (parts !== undefined && (!Array.isArray(parts) || !parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 9))) throw invalid('parts must be an array of integers from 0 to 9.');
  const time = offset !== undefined ? new Date(Math.floor(offset / 1000)).toISOString() : typeof since === 'number' ? new Date(since).toISOString() : (since as string | undefined);
  const outside = Array.isArray(parts) && !parts.includes(0);
  return { start: startOf(time), options: { fields, filters, ...(outside ? { fromOffset: Number.POSITIVE_INFINITY } : offset !== undefined ? { fromOffset: offset } : {}) } };
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

/** One description as Enterprise answers it: the object itself, not an array; a 404 if the filters left it out. */
function one(items: unknown[], what: string): Response {
  if (!items.length) throw notFound(`${what} matching the filters`);
  return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-cache' }, body: Buffer.from(JSON.stringify(items[0])) };
}

const ARTICLE_PARAMS = [
  { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
  { name: 'fields', in: 'query', schema: { type: 'string' }, description: 'Fields to return, dotted (version.identifier), * for any; comma-separated or repeated' },
  { name: 'filters', in: 'query', schema: { type: 'string' }, description: 'field:value pairs, comma-separated, or a JSON array of {field, value}' },
  { name: 'limit', in: 'query', schema: { type: 'string' } },
  { name: 'ts', in: 'query', schema: { type: 'string' }, description: 'The record as it was at this moment (ISO 8601): the line a snapshot of that moment holds' },
];
const REALTIME_QUERY = [
  { name: 'since', in: 'query', schema: { type: 'string' }, description: 'Start from this time (RFC 3339) within the change log\'s keeping; default now' },
  ...ARTICLE_PARAMS.slice(1, 3),
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
    if (!items.length) throw notFound(`An article named ${req.params.name!.slice(0, 255)} matching the filters`);
    return { ...records(req, items), ...reused() };
  };
  const structured = async (req: RouteRequest, ctx: Parameters<Module['routes'][number]['handler']>[1]): Promise<Response> => {
    const ask = asked(req, STRUCTURED_FIELDS);
    const title = await enterprise.titleOf(req.domain, req.params.name!);
    const reuse = page.answers.reuseOfPage(req.domain, title);
    const items = shaped(await enterprise.structured(ctx, req.domain, title), ask);
    if (!items.length) throw notFound(`An article named ${req.params.name!.slice(0, 255)} matching the filters`);
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
    return one(shaped(found as unknown as Record<string, unknown>, ask), `Snapshot ${req.params.identifier!.slice(0, 200)}`);
  };
  /** A snapshot's chunks, each described as Enterprise describes a chunk (a snapshot's shape, its own size). */
  const chunks = (req: RouteRequest) => {
    const ask = asked(req, SNAPSHOT_FIELDS);
    const found = enterprise.snapshots.get(req.domain, req.params.identifier!);
    if (!found) throw notFound(`Snapshot ${req.params.identifier!.slice(0, 200)}`);
    const described = found.chunks.map((id) => enterprise.snapshots.chunkInfo(req.domain, found.identifier, id)).filter((c) => c !== undefined);
    return records(req, described.flatMap((c) => shaped(c as unknown as Record<string, unknown>, ask)));
  };
  const chunk = (req: RouteRequest) => {
    const ask = asked(req, SNAPSHOT_FIELDS);
    const found = enterprise.snapshots.chunkInfo(req.domain, req.params.identifier!, req.params.chunk!);
    if (!found) throw notFound(`Chunk ${req.params.chunk!.slice(0, 200)}`);
    return one(shaped(found as unknown as Record<string, unknown>, ask), `Chunk ${req.params.chunk!.slice(0, 200)}`);
  };
  /** Enterprise's Realtime: the wiki's changes from now (or where the client resumes) as NDJSON records, open as long as the client reads. */
  const realtime = (req: RouteRequest, ctx: Parameters<Module['routes'][number]['handler']>[1]): Response => {
    const { start, options } = realtimeAsked(req);
    return {
      status: 200,
      headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
      body: enterprise.realtime(ctx, req.domain, start, options),
    };
  };
  /** A day's batches (Enterprise's hourly updated bundles of the day's changed pages): described as snapshots are, without chunks. */
  const dayOf = (req: RouteRequest) => {
    const day = req.params.date!;
    // A day the calendar has: Date.parse takes 2026-02-30 for March 2nd.
    const parsed = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) : Number.NaN;
    if (Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== day) throw invalid(`${day.slice(0, 40)} is not a day (YYYY-MM-DD).`);
    return day;
  };
  const batchOf = (s: ShelvedSnapshot) => {
    const { chunks: _chunks, ...described } = s;
    return described as unknown as Record<string, unknown>;
  };
  const batches = (req: RouteRequest) => {
    const ask = asked(req, SNAPSHOT_FIELDS);
    return records(req, enterprise.snapshots.list(req.domain, dayOf(req)).flatMap((s) => shaped(batchOf(s), ask)));
  };
  const batch = (req: RouteRequest) => {
    const ask = asked(req, SNAPSHOT_FIELDS);
    const found = enterprise.snapshots.get(req.domain, req.params.identifier!, dayOf(req));
    if (!found) throw notFound(`Batch ${req.params.identifier!.slice(0, 200)} of ${req.params.date!.slice(0, 40)}`);
    return one(shaped(batchOf(found), ask), `Batch ${req.params.identifier!.slice(0, 200)}`);
  };

  /** Enterprise's metadata of this wiki (one project), listed or one by its identifier. */
  const metadata = (kind: keyof typeof METADATA_FIELDS) => async (req: RouteRequest): Promise<Response> => {
    const ask = asked(req, METADATA_FIELDS[kind]);
    const all = metadataOf(await page.wiki(req.domain).siteInfo())[kind];
    if (req.params.identifier === undefined) return records(req, all.flatMap((item) => shaped(item, ask)));
    const found = all.find((item) => String(item.identifier) === req.params.identifier);
    if (!found) throw notFound(`${kind.slice(0, -1)} ${req.params.identifier.slice(0, 200)}`);
    return one(shaped(found, ask), `${kind.slice(0, -1)} ${req.params.identifier.slice(0, 200)}`);
  };
  const turn = workGate(MAKING, MAKING_WAITING, 'busy', 'records');
  /** A handler that makes a record, run in its turn (`MAKING`). */
  const inTurn = (handler: (req: RouteRequest, ctx: Parameters<Module['routes'][number]['handler']>[1]) => Promise<Response>): Module['routes'][number]['handler'] => (req, ctx) => turn(req.domain, () => handler(req, ctx));
  const spec = (summary: string, parameters: unknown[] = []) => ({ summary, tags: ['enterprise'], parameters, responses: { 200: { description: summary } } });
  const snapshotParam = { name: 'identifier', in: 'path', required: true, schema: { type: 'string', maxLength: 300 } };
  const chunkParam = { name: 'chunk', in: 'path', required: true, schema: { type: 'string', maxLength: 320 } };
  const queryParams = ARTICLE_PARAMS.slice(1, 4);
  const dateParam = { name: 'date', in: 'path', required: true, schema: { type: 'string', maxLength: 40 }, description: 'The day (YYYY-MM-DD, UTC)' };
  type Handler = Module['routes'][number]['handler'];
  /**
   * A read Enterprise's clients make by GET (options in the query or a JSON body) and by POST
   * (options in the body; `postQuery`: what its query may still say).
   */
  const getAndPost = (path: string, summary: string, pathParams: unknown[], query: unknown[], handler: Handler, postQuery: unknown[] = []): Module['routes'] => [
    { method: 'GET', path, body: 'optional-json', spec: spec(summary, [...pathParams, ...query]), handler },
    { method: 'POST', path, body: 'optional-json', readsOnly: true, spec: { ...spec(`${summary} (options in the body)`, [...pathParams, ...postQuery]), requestBody: BODY }, handler },
  ];
  /** An archive's download (whole, by ranges, HEAD): `find` gives it, or undefined for a 404 naming `what`. */
  const download = (path: string, summary: string, params: unknown[], find: (req: RouteRequest) => Download | undefined, what: (req: RouteRequest) => string, name: (req: RouteRequest) => string): Module['routes'][number] => ({
    method: 'GET', path, spec: spec(summary, params),
    handler(req) {
      const found = find(req);
      if (!found) throw notFound(what(req));
      return serveDownload(found, req.headers, req.method, `${name(req)}.tar.gz`);
    },
  });
  const idParam = { name: 'identifier', in: 'path', required: true, schema: { type: 'string', maxLength: 200 } };
  const snapshotName = (req: RouteRequest) => `Snapshot ${req.params.identifier!.slice(0, 200)}`;
  const batchName = (req: RouteRequest) => `Batch ${req.params.identifier!.slice(0, 200)} of ${req.params.date!.slice(0, 40)}`;
  return {
    name: 'enterprise',
    api: 'enterprise',
    routes: [
      ...(['projects', 'languages', 'codes', 'namespaces'] as const).flatMap((kind) => [
        ...getAndPost(`/v2/${kind}`, `This wiki's ${kind}, as Enterprise lists them`, [], queryParams, metadata(kind)),
        ...getAndPost(`/v2/${kind}/{identifier}`, `One of this wiki's ${kind}`, [idParam], queryParams, metadata(kind)),
      ]),
      // A stream that stays open: its answer says so (what reads every route, the fuzz test among them, tells streams by it).
      ...getAndPost('/v2/articles', "Realtime: every change to the wiki's pages as it happens, one record a line (NDJSON); since, fields, filters, parts, offsets", [], REALTIME_QUERY, realtime)
        .map((route) => ({ ...route, spec: { ...route.spec, responses: { 200: { description: 'application/x-ndjson: one record a line, as the changes happen', content: { 'application/x-ndjson': { schema: { type: 'string' } } } } } } })),
      ...getAndPost('/v2/articles/{name}', "A page's record, as Enterprise's On-demand answers it (an array)", ARTICLE_PARAMS.slice(0, 1), ARTICLE_PARAMS.slice(1), inTurn(article), ARTICLE_PARAMS.slice(4)),
      ...getAndPost('/v2/structured-contents/{name}', "A page's structured contents (abstract, infoboxes, sections, references)", ARTICLE_PARAMS.slice(0, 1), queryParams, inTurn(structured)),
      ...getAndPost('/v2/snapshots', 'The snapshots offered (the newest finished one of each namespace)', [], queryParams, snapshots),
      ...getAndPost('/v2/snapshots/{identifier}', "A snapshot's description", [snapshotParam], queryParams, snapshot),
      download('/v2/snapshots/{identifier}/download', "A snapshot's .tar.gz (Range for resumed and parallel downloads)", [snapshotParam],
        (req) => enterprise.snapshots.download(req.domain, req.params.identifier!), snapshotName, (req) => req.params.identifier!),
      ...getAndPost('/v2/snapshots/{identifier}/chunks', "A snapshot's chunks, each described", [snapshotParam], queryParams, chunks),
      ...getAndPost('/v2/snapshots/{identifier}/chunks/{chunk}', "A chunk's description (by its identifier or its index)", [snapshotParam, chunkParam], queryParams, chunk),
      download('/v2/snapshots/{identifier}/chunks/{chunk}/download', 'One chunk of a snapshot, a .tar.gz of its own (Range too)', [snapshotParam, chunkParam],
        (req) => enterprise.snapshots.chunk(req.domain, req.params.identifier!, req.params.chunk!), (req) => `Chunk ${req.params.chunk!.slice(0, 200)}`, (req) => req.params.chunk!),
      ...getAndPost('/v2/batches/{date}', "A day's batches (the pages that day's changes named, at their newest), each namespace's", [dateParam], queryParams, batches),
      ...getAndPost('/v2/batches/{date}/{identifier}', "A batch's description", [dateParam, snapshotParam], queryParams, batch),
      download('/v2/batches/{date}/{identifier}/download', "A batch's .tar.gz (Range for resumed and parallel downloads)", [dateParam, snapshotParam],
        (req) => enterprise.snapshots.download(req.domain, req.params.identifier!, dayOf(req)), batchName, (req) => req.params.identifier!),
    ],
  };
}

import FindMyWay from 'find-my-way';
import type { Logger } from 'pino';
import { BoundedMap } from '../util/bounded-map.js';
import { HttpError, badRequest, notFound } from '../util/errors.js';
import { accessFilter, jsonBodyFilter, schemaFilter, type Filter } from './filters.js';
import { compileValidator, type RequestValidator } from './validation.js';
import { relativeTo, type Surface } from './surface.js';
import type { Api, Handler, Module, Request, RequestContext, Response, Route, RouteRequest } from './types.js';

const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'] as const;
const MAX_DEPTH = 16;
/** Internal request routes kept (see `resolveInternal`), and the longest URI kept: about 4 MB at most. */
const INTERNAL_MATCHES = 4096;
const INTERNAL_MATCH_URI = 256;

interface RouteEntry {
  api: Api;
  module: string;
  route: Route;
  /** Full template, OpenAPI style: `/{domain}/sys/table/{table}`. */
  template: string;
  /** The route's schemas, compiled (see `compile`). */
  validate?: RequestValidator;
}

export interface RouteMatch {
  /** Which API the path belongs to (its access rules); undefined outside any. */
  api: Api | undefined;
  /** The matched route; undefined for a generated listing. */
  route: Route | undefined;
  /** Route template for metrics and logs, or a fixed label for unmatched paths. */
  label: string;
  handler: Handler;
  validate?: RequestValidator;
  params: Record<string, string>;
  path: string;
  query: URLSearchParams;
}

export interface ContextOptions {
  requestId: string;
  admin: boolean;
  log: Logger;
  depth?: number;
  external?: boolean;
  /** The outside request this one serves, for logs; a root request is its own. */
  root?: { method: string; uri: string };
  /** Who the outside request is from (see RequestContext.client), worked out when first asked. */
  client?: () => string | undefined;
}

/** Turns `/{domain}/x/{id}` into find-my-way's `/:domain/x/:id`. */
function toRouterPath(template: string): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function splitUri(uri: string): { path: string; rawQuery: string } {
  const q = uri.indexOf('?');
  return q === -1 ? { path: uri, rawQuery: '' } : { path: uri.slice(0, q), rawQuery: uri.slice(q + 1) };
}

/** A run of percent-escapes that is not UTF-8, escaped again as its text with U+FFFD for each bad sequence. */
function asUtf8(run: string): string {
  try {
    decodeURIComponent(run);
    return run;
  } catch {
    return encodeURIComponent(new TextDecoder().decode(Buffer.from(run.replace(/%/g, ''), 'hex')));
  }
}

/**
 * The path as routed: refused if its escapes are malformed. A surface may read bytes that are not
 * UTF-8 as U+FFFD (MediaWiki's REST API: a title no page has, a 404, not a malformed request); the
 * wiki still gets the request's own bytes when one is passed on.
 */
function checkEncoding(path: string, lenientUtf8: boolean): string {
  if (!path.startsWith('/')) throw badRequest(`Request path must start with '/': ${path.slice(0, 100)}`, 'invalid-path');
  if (!path.includes('%')) return path;
  try {
    decodeURIComponent(path);
    return path;
  } catch {
    const lenient = lenientUtf8 ? path.replace(/(?:%[0-9A-Fa-f]{2})+/g, asUtf8) : path;
    try {
      decodeURIComponent(lenient);
      return lenient;
    } catch {
      throw badRequest('The request path contains an invalid percent-encoding.', 'invalid-path-encoding');
    }
  }
}

/**
 * One route tree for all APIs of all domains. The same dispatcher serves external HTTP
 * requests and internal ones (`ctx.request`), so modules talk to each other in-process.
 */
export class Router {
  private readonly tree = FindMyWay({ ignoreTrailingSlash: false, ignoreDuplicateSlashes: false, maxParamLength: 2048 });
  private readonly entries: RouteEntry[] = [];
  private readonly templates: string[][] = [];
  private readonly internalMatches = new BoundedMap<string, RouteMatch>(INTERNAL_MATCHES);
  private readonly surfaces: Surface[] = [];
  private admit: ((domain: string) => Promise<void> | undefined) | undefined;

  private readonly filters: Filter[];

  /** `observe` records internal requests in the metrics (the HTTP front records external ones). */
  constructor(
    private readonly isDomainServed: (domain: string) => boolean,
    private readonly observe?: (route: string, method: string, status: number, seconds: number) => void,
  ) {
    this.filters = [accessFilter, jsonBodyFilter, schemaFilter];
  }

  /**
   * What a client's request waits for before its handler runs: a farm's wiki found and set up on
   * its first request (undefined once it is, or for a wiki listed by name).
   */
  admitWith(admit: (domain: string) => Promise<void> | undefined): void {
    this.admit = admit;
  }

  /** The wait before `match`'s handler runs for a client (see `admitWith`); undefined: none. */
  admission(match: RouteMatch): Promise<void> | undefined {
    if (!this.admit || match.api === 'global' || !match.params.domain) return undefined;
    return this.admit(match.params.domain);
  }

  /** A public surface: its rules, and its routes under `/{domain}/{prefix}`. */
  addSurface(surface: Surface): void {
    this.surfaces.push(surface);
    for (const module of surface.routes) this.register({ ...module, api: surface.prefix });
  }

  /** The surface a path (`/{domain}/...`) belongs to, if any. */
  surfaceOf(path: string): Surface | undefined {
    const afterDomain = path.indexOf('/', 1);
    if (afterDomain < 0) return undefined;
    const rest = path.slice(afterDomain + 1);
    return this.surfaces.find((s) => {
      const claims = s.claims ?? s.prefix;
      return rest === claims || rest.startsWith(`${claims}/`) || rest.startsWith(`${claims}?`);
    });
  }

  register(module: Module): void {
    for (const route of module.routes) {
      const template = module.api === 'global' ? route.path : `/{domain}/${module.api}${route.path}`;
      const entry: RouteEntry = { api: module.api, module: module.name, route, template };
      this.tree.on(route.method as 'GET', toRouterPath(template), () => entry);
      this.entries.push(entry);
      this.templates.push(template.split('/').slice(1));
    }
  }

  routes(): readonly RouteEntry[] {
    return this.entries;
  }

  /** Compiles every route's parameter and body schemas; `components` resolve their references. */
  compile(components: Record<string, unknown>): void {
    const open = new Set(this.surfaces.filter((s) => s.openQuery).map((s) => s.prefix));
    for (const entry of this.entries) entry.validate = compileValidator(entry.route, components, { openQuery: open.has(entry.api) });
  }

  /** Static children of a path, derived from the registered templates (for trailing-slash listings). */
  listChildren(path: string): string[] {
    const segments = path.split('/').slice(1, -1).map(decodeURIComponent);
    const children = new Set<string>();
    for (const template of this.templates) {
      if (template.length <= segments.length) continue;
      const matches = segments.every((seg, i) => template[i] === seg || /^\{.+\}$/.test(template[i]!));
      const next = template[segments.length]!;
      if (matches && next !== '' && !next.startsWith('{')) children.add(next);
    }
    return [...children].sort();
  }

  /** A route whose parameters are all non-empty (`/bucket/` is not `/bucket/{key}` with key ''), unless it takes empty ones. */
  private find(method: string, path: string) {
    const found = this.tree.find(method as 'GET', path);
    if (!found) return null;
    return Object.values(found.params).every((v) => v !== '') || (found.handler as unknown as () => RouteEntry)().route.emptyParams ? found : null;
  }

  /** Finds the handler for a request, or throws the 4xx that explains why there is none. */
  resolve(method: string, uri: string): RouteMatch {
    const split = splitUri(uri);
    const surface = this.surfaceOf(split.path);
    const path = checkEncoding(split.path, surface?.lenientUtf8 === true);
    const { rawQuery } = split;
    const query = new URLSearchParams(rawQuery);
    const found = this.find(method, path) ?? (method === 'HEAD' ? this.find('GET', path) : null);
    if (found) {
      const entry = (found.handler as unknown as () => RouteEntry)();
      const params = { ...found.params } as Record<string, string>;
      if (entry.api !== 'global' && !this.isDomainServed(params.domain ?? '')) {
        throw notFound(`Domain '${params.domain}' is not served here.`, 'unknown-domain');
      }
      return { api: entry.api, route: entry.route, label: entry.template, handler: entry.route.handler, validate: entry.validate, params, path, query };
    }
    const unmatched = surface?.unmatched && (() => surface.unmatched!(relativeTo(path, surface.claims ?? surface.prefix)));
    // A surface that answers unmatched paths itself may take a route with an empty parameter for none.
    if (unmatched && this.tree.find(method as 'GET', path)) throw unmatched();
    const allowed = METHODS.filter((m) => m !== method && this.find(m, path));
    if (allowed.length > 0) {
      if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
      throw new HttpError(405, 'method-not-allowed', `${method} is not allowed on this path.`, {
        headers: { allow: allowed.join(', ') },
      });
    }
    // RESTBase's listings of a path's children, where the surface answers unmatched paths no other way.
    if ((method === 'GET' || method === 'HEAD') && path.endsWith('/') && !unmatched) {
      const items = this.listChildren(path);
      if (items.length > 0) return this.listingMatch(path, query, items);
    }
    if (unmatched) throw unmatched();
    throw notFound(`No route matches ${path}.`, 'route-not-found');
  }

  /**
   * `resolve` for internal requests, whose URIs repeat (a module's tables, a hot key): a route
   * found for a short URI without a query is kept, frozen, and found again without matching. A
   * long one (a replayed transaction may name a path of kilobytes) is matched each time: kept, a
   * few thousand of them would hold tens of megabytes.
   */
  private resolveInternal(method: string, uri: string): RouteMatch {
    const key = `${method} ${uri}`;
    const known = this.internalMatches.get(key);
    if (known) return known;
    const match = this.resolve(method, uri);
    if (match.route && uri.length <= INTERNAL_MATCH_URI && !uri.includes('?')) {
      Object.freeze(match.params);
      this.internalMatches.set(key, Object.freeze(match));
    }
    return match;
  }

  private listingMatch(path: string, query: URLSearchParams, items: string[]): RouteMatch {
    const [domain = '', api = ''] = path.split('/').slice(1).map(decodeURIComponent);
    if (!this.isDomainServed(domain)) throw notFound(`Domain '${domain}' is not served here.`, 'unknown-domain');
    return {
      api: api === 'sys' ? api : this.surfaceOf(path)?.prefix,
      route: undefined,
      label: '(listing)',
      handler: () => ({ status: 200, body: { items } }),
      params: { domain },
      path,
      query,
    };
  }

  /** Runs a matched handler with the access rules of its API. */
  /** Runs a matched handler behind the filter chain: the same for external and internal requests. */
  invoke(match: RouteMatch, req: Request, ctx: RequestContext): Promise<Response> {
    const step = (i: number): Promise<Response> => {
      const filter = this.filters[i];
      if (filter) return filter(match, req, ctx, () => step(i + 1));
      const routeReq: RouteRequest = {
        method: req.method,
        uri: req.uri,
        path: match.path,
        headers: req.headers ?? {},
        body: req.body,
        params: match.params,
        query: match.query,
        domain: match.params.domain ?? '',
      };
      return Promise.resolve(match.handler(routeReq, ctx));
    };
    return step(0);
  }

  /** Creates the context of a root request; its `request` issues internal requests. */
  context(options: ContextOptions): RequestContext {
    return new Context(this, options);
  }

  /** An internal request from `ctx` (see `RequestContext.request`). */
  async dispatch(req: Request, child: RequestContext): Promise<Response> {
    const method = req.method.toUpperCase();
    const match = this.resolveInternal(method, req.uri);
    // Timed here rather than by a filter: one async step less for every internal request.
    const started = performance.now();
    let res: Response;
    try {
      res = await this.invoke(match, method === req.method ? req : { ...req, method }, child);
    } catch (e) {
      this.observe?.(match.label, method, e instanceof HttpError ? e.status : 500, (performance.now() - started) / 1000);
      throw e;
    }
    this.observe?.(match.label, method, res.status, (performance.now() - started) / 1000);
    if (res.status >= 400) throw responseToError(res);
    return res;
  }
}

/**
 * A request's context (read-only). A class rather than an object with a closure: one is made for
 * every outside request, and the child its internal requests share is made once, when first needed.
 */
class Context implements RequestContext {
  readonly requestId: string;
  readonly admin: boolean;
  readonly log: Logger;
  readonly depth: number;
  readonly external: boolean;
  readonly root?: { method: string; uri: string };
  private child: RequestContext | undefined;
  private clientAddress: string | undefined;

  constructor(private readonly router: Router, private readonly options: ContextOptions) {
    this.requestId = options.requestId;
    this.admin = options.admin;
    this.log = options.log;
    this.depth = options.depth ?? 0;
    this.external = options.external ?? false;
    this.root = options.root;
  }

  client(): string | undefined {
    return (this.clientAddress ??= this.options.client?.());
  }

  request(req: Request): Promise<Response> {
    if (this.depth + 1 > MAX_DEPTH) {
      return Promise.reject(new HttpError(508, 'recursion-depth', `Internal requests nested deeper than ${MAX_DEPTH}: ${req.uri}`));
    }
    this.child ??= this.router.context({ ...this.options, depth: this.depth + 1, external: false });
    return this.router.dispatch(req, this.child);
  }
}

/** A handler may answer an error as a plain response; internal callers still see an HttpError. */
function responseToError(res: Response): HttpError {
  const body = res.body as { detail?: string; type?: string } | undefined;
  const detail = typeof body?.detail === 'string' ? body.detail : `Internal request failed with ${res.status}`;
  const kind = typeof body?.type === 'string' ? body.type.replace(/^urn:problem:/, '') : 'internal-request-failed';
  return new HttpError(res.status, kind, detail, { headers: res.headers });
}

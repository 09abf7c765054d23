import type { Logger } from 'pino';

/** One uniform, shallow request object for external and internal requests alike. */
export interface Request {
  method: string;
  /** Percent-encoded path, optionally followed by `?query`. */
  uri: string;
  headers?: Record<string, string | undefined>;
  /** Buffer, string, or a JSON value (in-process bodies may hold Buffers and are never serialised). */
  body?: unknown;
}

export interface Response {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** For a GET's 200: how long, and while what holds, the same request may be given this answer again. */
  reuse?: Reuse;
}

/**
 * What makes an answer safe to send again without asking its handler (see http/answer-memo.ts).
 * Only a handler whose answer depends on nothing but the URL, `Accept`, `Accept-Encoding` and the
 * admin credential may give one; or on the caller's credentials too, if it says so (`perCaller`).
 */
export interface Reuse {
  /** Time (ms since the epoch) until which it may be reused at most. */
  until: number;
  /**
   * The answer depends on who asks (their `Cookie` and `Authorization`): it is sent again only to
   * requests carrying the same ones, and `until` is no later than the caller's identity is known.
   */
  perCaller?: boolean;
  /** Asked on every reuse: whether what the answer was made from is unchanged. */
  valid?: () => boolean;
  /** Called on every reuse: what the handler would have done per read besides answering (counts). */
  onReuse?: () => void;
}

/** What a handler receives: the request plus what the router matched. */
export interface RouteRequest {
  method: string;
  uri: string;
  path: string;
  headers: Record<string, string | undefined>;
  body?: unknown;
  params: Record<string, string>;
  query: URLSearchParams;
  domain: string;
}

export interface RequestContext {
  readonly requestId: string;
  readonly depth: number;
  /** True when the root request carried the admin credential; internal requests inherit it. */
  readonly admin: boolean;
  /** True for a request from outside; false for internal requests, even those an outside request made. */
  readonly external: boolean;
  /** The outside request at the root of this one (for logs and traces), if there is one. */
  readonly root?: { method: string; uri: string };
  /**
   * Who the outside request is from, for limits per client: its address, or the one a trusted
   * proxy names, an IPv6 client by its /64 (see http/client-address.ts); undefined for work the
   * service does of itself, and for a request a trusted proxy or this host makes of itself.
   */
  client(): string | undefined;
  readonly log: Logger;
  /** Issue an internal request through the same dispatcher, without an HTTP hop. Rejects with HttpError on status >= 400. */
  request(req: Request): Promise<Response>;
}

export type Handler = (req: RouteRequest, ctx: RequestContext) => Promise<Response> | Response;

/** An OpenAPI 3.1 operation object (kept loose on purpose: modules own their fragments). */
export type OperationSpec = Record<string, unknown>;

export interface Route {
  method: string;
  /** Path template relative to the API root, e.g. `/table/{table}/`; absolute for global routes. */
  path: string;
  handler: Handler;
  /** Whether and how the route reads a body; routes without one never read it. */
  body?: BodyKind;
  /**
   * A POST that only reads (a query too long or too structured for a URL): its answers may be
   * kept and sent again by their body, as a GET's are by their URL.
   */
  readsOnly?: boolean;
  /**
   * Its path parameters may be empty (`page//bare`): the handler names the missing one itself, as
   * MediaWiki's REST API does (400 `missingparam`). Elsewhere an empty segment matches no route.
   */
  emptyParams?: boolean;
  spec?: OperationSpec;
}

/**
 * `json`: a JSON body is required (400 without, 415 for another type); `optional-json`: JSON if
 * any; `form`: a required JSON, urlencoded or multipart body, read as one object (form fields are
 * typed by the route's schema); `raw`: the bytes whatever their type (stores of opaque values).
 */
export type BodyKind = 'json' | 'optional-json' | 'form' | 'optional-form' | 'raw';

/** Whether a body kind is read as form fields (or JSON): `form` and `optional-form`. */
export const isFormKind = (kind: BodyKind | undefined) => kind === 'form' || kind === 'optional-form';

/**
 * Where a module's routes are: `sys`, the internal API (admin only from outside); `global`, the
 * root; else the prefix of the public surface they belong to (router/surface.ts), `v1` among them.
 */
export type Api = 'sys' | 'global' | (string & {});

export interface Module {
  name: string;
  api: Api;
  routes: Route[];
  /** Shared OpenAPI components (schemas) this module contributes. */
  components?: Record<string, unknown>;
  /** Tables this module owns: outside callers may read and write their rows, not drop or redefine them. */
  tables?: string[];
  /** Runs once at start, after every module is registered (e.g. creates its tables through internal requests). */
  setup?(ctx: RequestContext): Promise<void>;
  /**
   * Runs once per wiki before its first request is handled: at start for the wikis listed by
   * name, when first asked for those of a farm (creates its tables: a storage group's are made
   * once for all its wikis). A farm's wiki's set-up writes one row, once ever: its place in its
   * group's list of wikis.
   */
  setupWiki?(ctx: RequestContext, domain: string): Promise<void>;
  /** Runs at shutdown once no request is in flight: finishes background work. */
  close?(): Promise<void>;
}

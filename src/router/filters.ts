import { HttpError, badRequest, forbidden } from '../util/errors.js';
import { isFormKind, type Api, type Request, type RequestContext, type Response, type Route } from './types.js';
import type { RequestValidator } from './validation.js';

/** What a filter sees of a resolved route (the router's RouteMatch has it all). */
export interface FilteredMatch {
  api: Api | undefined;
  route: Route | undefined;
  params: Record<string, string>;
  query: URLSearchParams;
  validate?: RequestValidator;
}

/**
 * One step every request passes through on its way to a handler, external and internal alike
 * (as hyperswitch's filters): it may refuse the request, observe it, or pass it on with `next`.
 */
export type Filter = (match: FilteredMatch, req: Request, ctx: RequestContext, next: () => Promise<Response>) => Promise<Response>;

/** The internal API is open to internal requests, and to outside requests with the admin credential. */
export const accessFilter: Filter = (match, _req, ctx, next) => {
  if (match.api === 'sys' && ctx.external && !ctx.admin) throw forbidden('The internal API (/sys/) needs the admin credential.', 'admin-required');
  return next();
};

/** Where JSON is expected, only JSON values (internal callers hand over values, not bytes). */
export const jsonBodyFilter: Filter = (match, req, _ctx, next) => {
  const kind = match.route?.body;
  if ((kind === 'json' || kind === 'optional-json' || isFormKind(kind)) && (Buffer.isBuffer(req.body) || typeof req.body === 'string')) {
    throw new HttpError(415, 'unsupported-media-type', 'The body must be application/json.');
  }
  return next();
};

/** The route's own schemas (compiled once), then a required body's presence. */
export const schemaFilter: Filter = (match, req, _ctx, next) => {
  match.validate?.({ params: match.params, query: match.query, headers: req.headers ?? {}, body: req.body });
  const kind = match.route?.body;
  if ((kind === 'json' || kind === 'form') && (req.body === undefined || req.body === null)) throw badRequest('This request needs a body.', 'missing-body');
  return next();
};

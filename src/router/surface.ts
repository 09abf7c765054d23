import type { HttpError } from '../util/errors.js';
import type { Module } from './types.js';

/** An error answered in a surface's own body shape, where it has one (else problem+json). */
export type ProblemRenderer = (
  error: HttpError,
  request: { method: string; path: string; uri: string; headers: Record<string, string | undefined> },
) => { body: Record<string, unknown>; contentType: string } | undefined;

/**
 * An API face of the service (its own content API, Wikimedia's REST API, MediaWiki's, …): its
 * place under `/{domain}/`, its routes, and the rules its clients expect of it. The router, the
 * HTTP front and the app know surfaces only through this: adding one touches its own folder and
 * the surface list (src/surfaces/index.ts).
 */
export interface Surface {
  /** Its name in logs and documents. */
  name: string;
  /** Where its routes are, after `/{domain}/` (`v1`, say). */
  prefix: string;
  /**
   * The path after `/{domain}/` whose every path is the surface's, matched or not (a parent of
   * `prefix`, where its other versions and routes are the surface's to answer too); default `prefix`.
   */
  claims?: string;
  routes: Module[];
  /** Query parameters a route does not declare are ignored (clients send cache-busting ones), not refused. */
  openQuery?: boolean;
  /** Path escapes that are not UTF-8 are read as U+FFFD (a title no page has), not refused as malformed. */
  lenientUtf8?: boolean;
  /**
   * What a claimed path no route takes answers (a route's path with an empty parameter too);
   * default: the router's 404 and, for a path ending in `/`, RESTBase's listing of its children.
   */
  unmatched?: (relativePath: string) => HttpError;
  /** Errors in the surface's own shape. */
  renderProblem?: ProblemRenderer;
  /** Every OPTIONS is a CORS preflight, with or without `Access-Control-Request-Method`. */
  optionsArePreflights?: boolean;
}

/** The part of a path after `/{domain}/{claims}` (for `unmatched`). */
export const relativeTo = (path: string, claims: string) => path.slice(path.indexOf(`/${claims}`) + claims.length + 1);

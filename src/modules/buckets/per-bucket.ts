import { BoundedMap } from '../../util/bounded-map.js';
import type { RouteRequest } from '../../router/types.js';

/** Buckets whose handles are kept (beyond these, handles are made anew). */
const KEPT = 512;

/** A request's bucket handle (a store, a table client: stateless), made once per domain and bucket rather than per request. */
export function perBucket<T>(make: (domain: string, bucket: string) => T): (req: RouteRequest) => T {
  const handles = new BoundedMap<string, T>(KEPT);
  return (req) => handles.remember(`${req.domain}\u0000${req.params.bucket}`, () => make(req.domain, req.params.bucket!));
}

import { BoundedMap } from '../../util/bounded-map.js';
import type { RouteRequest } from '../../router/types.js';

/** Buckets whose handles are kept (beyond these, handles are made anew): a farm's wikis each have theirs. */
const KEPT = 4096;

/** A request's bucket handle (a store, a table client: stateless), made once per domain and bucket rather than per request. */
export function perBucket<T>(make: (domain: string, bucket: string) => T): (req: RouteRequest) => T {
  const handles = new BoundedMap<string, T>(KEPT);
  return (req) => handles.remember(`${req.domain}\u0000${req.params.bucket}`, () => make(req.domain, req.params.bucket!));
}

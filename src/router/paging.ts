import type { RouteRequest } from './types.js';

/** Paging parameters of a listing (?limit=, ?next=), as the route's schema already checked them. */
export function pagingFrom(req: RouteRequest): { limit?: number; next?: string } {
  const limit = req.query.get('limit');
  return { limit: limit === null ? undefined : Number(limit), next: req.query.get('next') ?? undefined };
}

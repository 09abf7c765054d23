import type { RouteRequest } from '../../../router/types.js';

/**
 * A title as one path segment of the service's URLs, the one canonical spelling every URL, purge
 * and surrogate key of a page uses (`:` kept readable, everything else as encodeURIComponent).
 */
export const titleSegment = (title: string) => encodeURIComponent(title).replace(/%3A/g, ':');

/** A request's title, normalized as the wiki does (never redirected: a redirected POST loses its body). */
export type NormalizeTitle = (req: RouteRequest) => Promise<string>;

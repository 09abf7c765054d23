/**
 * A title as one path segment of the service's URLs, the one canonical spelling every URL, purge
 * and surrogate key of a page uses (`:` kept readable, everything else as encodeURIComponent).
 */
export const titleSegment = (title: string) => encodeURIComponent(title).replace(/%3A/g, ':');

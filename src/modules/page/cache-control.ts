/** A render by tid never changes. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Latest content: shared caches keep it until purged; browsers revalidate. */
export const PURGEABLE = 's-maxage=86400, max-age=0, must-revalidate';

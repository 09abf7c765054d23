/**
 * The page module's one door for the surfaces built on it (src/surfaces/: rest_v1, rest.php/v1):
 * what they may use of it, and nothing else. The import rules (.dependency-cruiser.cjs) let a
 * surface reach the page module through this file alone.
 */
export type { PageApi as PageDoor } from './page-api.js';
// Pages and revisions as stored, and their renders.
export type { RevisionRow } from './model/revision.js';
export { partOf, type BundleRender, type Render } from './model/render.js';
export { PageMoved, RevisionMoved } from './model/page-moves.js';
export { markedIfUnchecked } from './model/stale-answer.js';
// How answers are made: HTML versions, cache headers and surrogate keys, title URLs, reuse of kept answers.
export { HTML_2_TYPE, negotiateHtml, type HtmlVersion } from './model/html-versions.js';
export { askedAnew, type CachePolicy } from './model/cache-control.js';
export { contentKeys, surrogateKeys, tagged } from './model/surrogate-keys.js';
export { titleSegment } from './model/title-url.js';
export { renderOfETag } from './model/served-etag.js';
export { contentReuse, type PageReuse } from './read/page-caches.js';
// Saves and transforms, as the service's own routes read their requests.
export type { PageSaver } from './edit/page-saver.js';
export { credentialsOf, parseDataMw, parseOriginal } from './edit/save-routes.js';
export { targetOf, threePaths } from './edit/transform-routes.js';

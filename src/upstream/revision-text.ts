import type { ApiPage } from './action-api-types.js';
import { WIKITEXT_TYPE, type Part } from './parsoid.js';

/**
 * A revision's wikitext as the Action API gave it beside the revision's metadata: the bytes
 * Parsoid's wikitext endpoint serves. Resolves undefined where it did not (not asked for, hidden,
 * not wikitext, the question failed): Parsoid is asked then.
 */
export type KnownWikitext = Promise<Part | undefined>;

/** The wikitext of revision `revid` in an Action API answer asked `withText`, if it is there. */
export function revisionText(page: ApiPage | undefined, revid: number): Part | undefined {
  const main = page?.revisions?.find((r) => r.revid === revid)?.slots?.main;
  if (!main || main.texthidden || main.contentmodel !== 'wikitext' || typeof main.content !== 'string') return undefined;
  return { contentType: WIKITEXT_TYPE, body: Buffer.from(main.content) };
}

/** The wikitext of revision `revid` in an Action API answer still on its way (undefined if it fails). */
export function wikitextIn(answer: Promise<ApiPage | undefined>, revid: number): KnownWikitext {
  return answer.then((page) => revisionText(page, revid), () => undefined);
}

import { HttpError } from '../../../errors.js';

export const PROPS = ['html', 'data-parsoid', 'data-mw', 'wikitext'] as const;
export type Prop = (typeof PROPS)[number];

/** One render of a revision: every property from the same Parsoid run, stored gzipped, immutable by tid. */
export interface Render {
  title: string;
  rev: number;
  tid: string;
  parts: Record<Prop, Buffer>;
  types: Record<Prop, string>;
  /** Content hashes of the uncompressed parts, to tell whether a re-render changed anything. */
  digest: string;
  /** Target of a redirect page, from Parsoid's mw:PageProp/redirect link. */
  redirect?: string;
}

/**
 * A render's property, or a 404 saying the wiki does not expose it (data-parsoid of a wiki served
 * through MediaWiki's core REST API, stored empty with no type).
 */
export function partOf(render: Render, prop: Prop): Buffer {
  if (render.types[prop] === '') {
    throw new HttpError(404, `${prop}-unavailable`, `This wiki does not expose ${prop}: its renders come from MediaWiki's core REST API, which serves HTML with data-mw inline and no data-parsoid.`);
  }
  return render.parts[prop];
}

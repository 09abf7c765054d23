import { HttpError } from '../../../util/errors.js';

export const PROPS = ['html', 'data-parsoid', 'data-mw', 'wikitext'] as const;
export type Prop = (typeof PROPS)[number];

/** The properties of Parsoid's page bundle: a render without the wikitext it was made from. */
export type BundleProp = Exclude<Prop, 'wikitext'>;

/**
 * What answers made from a render's page bundle need: every render is one, and so is a render
 * whose wikitext is still being fetched (its page bundle's readers are answered meanwhile).
 */
export interface BundleRender {
  title: string;
  rev: number;
  tid: string;
  parts: Record<BundleProp, Buffer>;
  types: Record<BundleProp, string>;
  /** Target of a redirect page, from Parsoid's mw:PageProp/redirect link. */
  redirect?: string;
  /**
   * A render just made, not yet stored: its HTML and data-mw as Parsoid gave them, so that its
   * first readers' 2.x HTML is made without inflating what was compressed a moment before.
   */
  plain?: { html: Buffer; dataMw: Buffer };
}

/** One render of a revision: every property from the same Parsoid run, stored gzipped, immutable by tid. */
export interface Render extends BundleRender {
  parts: Record<Prop, Buffer>;
  types: Record<Prop, string>;
  /** Content hashes of the uncompressed parts, to tell whether a re-render changed anything. */
  digest: string;
}

/** What an answer's headers say of its render: which it is, and where a redirect page points. */
export type RenderHead = Pick<BundleRender, 'title' | 'rev' | 'tid' | 'redirect'>;

/**
 * One property of a stored render, read alone with the render's head: what a read that sends the
 * property as stored needs (a render's four parts are some 15 KB compressed, its HTML about 6).
 */
export interface StoredPart {
  prop: Prop;
  render: RenderHead;
  body: Buffer;
  type: string;
  /** `render` is a head made for this read alone (no render in memory): nothing is kept against it. */
  oneOff?: true;
}

/** The render a property is read from: a page bundle's property may be read before the wikitext is there. */
export type PropRender = { prop: BundleProp; render: BundleRender } | { prop: 'wikitext'; render: Render };

/** A whole render as the render of one of its properties. */
export const propRender = (render: Render, prop: Prop): PropRender => (prop === 'wikitext' ? { prop, render } : { prop, render });

/**
 * A render's property, or a 404 saying the wiki does not expose it (data-parsoid of a wiki served
 * through MediaWiki's core REST API, stored empty with no type).
 */
export function partOf(render: Render, prop: Prop): Buffer;
export function partOf(render: BundleRender, prop: BundleProp): Buffer;
export function partOf(render: BundleRender, prop: Prop): Buffer {
  const { types, parts } = render as Render;
  return exposed(prop, types[prop], parts[prop]);
}

/** A property's bytes, or the 404 of one the wiki does not expose (its type stored empty: see `partOf`). */
export function exposed(prop: Prop, type: string, bytes: Buffer): Buffer {
  if (type === '') {
    throw new HttpError(404, `${prop}-unavailable`, `This wiki does not expose ${prop}: its renders come from MediaWiki's core REST API, which serves HTML with data-mw inline and no data-parsoid.`);
  }
  return bytes;
}

/** The property a `PropRender` names, and its content type. */
export function propOf(found: PropRender): { body: Buffer; type: string } {
  return found.prop === 'wikitext'
    ? { body: partOf(found.render, found.prop), type: found.render.types.wikitext }
    : { body: partOf(found.render, found.prop), type: found.render.types[found.prop] };
}

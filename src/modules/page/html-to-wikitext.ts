import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Part } from '../../upstream/parsoid.js';
import type { Wiki } from '../../upstream/wiki.js';
import type { Render } from './renders.js';

const gunzip = promisify(zlib.gunzip);
/** An element with its data-mw inline: HTML of the 2.x kind. */
const INLINE_DATA_MW = /<[a-z][^>]*\sdata-mw=/i;
const text = async (render: Render, prop: 'html' | 'data-parsoid' | 'data-mw') => (await gunzip(render.parts[prop])).toString('utf8');

/**
 * Edited HTML to wikitext through Parsoid. Given the stored render the edit started from, it is
 * selective serialisation: Parsoid gets that render's HTML, data-parsoid and data-mw as the
 * original, so every part of the page the edit left alone keeps its exact wikitext.
 * `dataMw` is the edited document's data-mw when it travels apart from the HTML (as in the
 * stored renders); without it, the render's own is used, which is right for untouched templates,
 * unless the HTML carries its data-mw inline (2.x HTML): then Parsoid reads it there, edits and all.
 */
export async function htmlToWikitext(wiki: Wiki, title: string | undefined, html: string, from: { render?: Render; revid?: number; dataMw?: unknown; scrubWikitext?: boolean; original?: Record<string, unknown> }): Promise<Part> {
  const { render } = from;
  const options = from.scrubWikitext ? { scrub_wikitext: true } : {};
  if (from.original) {
    // The client holds the original itself (Parsoid's own convention): passed on as it came.
    const kind = from.original['data-parsoid'] ? 'pagebundle' : 'html';
    const dataMw = from.dataMw === undefined ? {} : { 'data-mw': { body: from.dataMw } };
    return wiki.transform(kind, 'wikitext', { title, revid: from.revid }, { html, original: from.original, ...dataMw, ...options });
  }
  // Without data-parsoid (a wiki served through the core REST API) there is no selective
  // serialisation to ask for: the edited HTML goes alone, with the render's data-mw if apart.
  const noSelser = render !== undefined && render.types['data-parsoid'] === '';
  if (!render || noSelser) {
    const body: Record<string, unknown> = { html, ...options };
    const dataMw = from.dataMw ?? (noSelser && !INLINE_DATA_MW.test(html) ? JSON.parse(await text(render, 'data-mw')) : undefined);
    if (dataMw !== undefined) body['data-mw'] = { body: dataMw };
    return wiki.transform('html', 'wikitext', { title, revid: from.revid }, body);
  }
  const inline = from.dataMw === undefined && INLINE_DATA_MW.test(html);
  const [originalHtml, dataParsoid, dataMw] = await Promise.all([text(render, 'html'), text(render, 'data-parsoid'), text(render, 'data-mw')]);
  const originalDataMw = JSON.parse(dataMw) as unknown;
  return wiki.transform('pagebundle', 'wikitext', { title: render.title, revid: render.rev }, {
    html,
    ...options,
    ...(inline ? {} : { 'data-mw': { body: from.dataMw ?? originalDataMw } }),
    original: {
      html: { headers: { 'content-type': render.types.html }, body: originalHtml },
      'data-parsoid': { body: JSON.parse(dataParsoid) as unknown },
      'data-mw': { body: originalDataMw },
    },
  });
}
